package evolve

import (
	"math"
	"slices"
	"time"

	"github.com/ldd-tools/tune/internal/scorer"
	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/weights"
)

// ScreenRow is one signal's 2×2 table over the accumulated evidence: the settled eligible tasks of every
// log read (auto, L0/L1 under the active weights, closed, not in the evidence ledger, after the evidence
// watermark). A present & flagged, B present & not flagged, C absent & flagged, D absent & not flagged
// (docs/decisions.md#accumulated-evidence).
type ScreenRow struct {
	Signal string `json:"signal"`
	A      int    `json:"a"`
	B      int    `json:"b"`
	C      int    `json:"c"`
	D      int    `json:"d"`
	// RateFlagged is a/(a+b): how often a task with the signal was flagged; RateOther c/(c+d).
	RateFlagged Num `json:"rate_with"`
	RateOther   Num `json:"rate_without"`
	// Effect is the prevalence difference a/(a+c) − b/(b+d), descriptive.
	Effect Num `json:"effect"`
	Phi    Num `json:"phi"`
	LogOR  Num `json:"log_odds"`
	SE     Num `json:"se"`
	Z      Num `json:"z"`
	// P, HolmP and MinP are the one-sided Fisher p, its Holm adjustment over the nine signals and the
	// smallest p the margins allow: descriptive since issue 28; the e-value decides.
	P     Num `json:"fisher_p"`
	HolmP Num `json:"holm_p"`
	MinP  Num `json:"min_p"`
	// EValue is the anytime-valid evidence that carriers regress more often than the other eligible
	// tasks (LogEValue); a candidate needs EValue ≥ Threshold. MoreNeeded is how many more regressions
	// carrying the signal would make it pass (0 when it passes, -1 when more than MaxMoreNeeded).
	EValue     Num `json:"e_value"`
	Threshold  Num `json:"threshold"`
	MoreNeeded int `json:"more_needed"`
	// Excess is the estimated excess regression rate of carriers (Excess), what the loss rule credits;
	// PaysFrom the smallest excess at which a +1 or +2 on the signal within the drift bound would pay on
	// the accumulated tasks (absent when none would, even at 1, or no flagged task carries it).
	Excess   Num  `json:"excess"`
	PaysFrom *Num `json:"pays_from_excess,omitempty"`
	// EvidenceSince is, for a candidate whose e-value comes mostly from the tasks of a later 30-day block
	// on (an effect that began after the watermark: the largest term of LogEValueOnsets), the day that block began, in the earliest
	// log that reached it; absent when the whole history carries it.
	EvidenceSince string `json:"evidence_since,omitempty"`
	// Consistent: fired in every flagged task counted (with more than three: in at least three and in at
	// least two thirds of them). Descriptive since issue 28.
	Consistent bool   `json:"consistent"`
	Verdict    string `json:"verdict"`
	// Confidence is "strong" for a candidate, "underpowered" when even the most extreme table with these
	// margins could not pass, "" otherwise.
	Confidence string `json:"confidence,omitempty"`
	// TiedWith names the other candidates whose table is identical (verdict "indistinguishable").
	TiedWith []string `json:"tied_with,omitempty"`
}

// ScreenPopulation is the population the screen compared, for the explanations.
const ScreenPopulation = "accumulated evidence: flagged vs the other settled eligible tasks of every log read (auto, L0/L1 under the active weights, closed, not in the evidence ledger, after the evidence watermark)"

// ScreenCorrection names the family-wise control, for the explanations.
const ScreenCorrection = "anytime-valid e-values (mixed over an onset at any 30-day block), Bonferroni over the 9 signals: a candidate needs e ≥ 9/0.02 = 450; every night's look, every log and every signal together keep the chance that noise ever passes at most 2 %"

// Strata says where the population's strata lie in time: Block[i] is stratum i's 30-day block on one
// calendar for every log (from the earliest log's origin; NoBlock: tasks without a time), what the onset
// mixture counts onsets by; Latest[i] whether it is its log's latest block, where the regressions still
// to come arrive (MoreNeededOnsets). The zero value: one block, every stratum latest.
type Strata struct {
	Block  []int
	Latest []bool
	// Start is the day each stratum's block began (zero for tasks without a time), for EvidenceSince.
	Start []time.Time
}

// since is the day block k began in the earliest log that reached it ("" when none is known).
func (st Strata) since(k int) string {
	var first time.Time
	for i, b := range st.Block {
		if b == k && i < len(st.Start) && !st.Start[i].IsZero() && (first.IsZero() || st.Start[i].Before(first)) {
			first = st.Start[i]
		}
	}
	if first.IsZero() {
		return ""
	}
	return first.UTC().Format(time.DateOnly)
}

// screenTask is one task of the accumulated population as the screen and the loss rule see it: all
// that a counted task leaves behind. It is comparable, so that the population is kept as a count per
// distinct value (population): every field is part of that key, and what the screen and the loss rule
// compute of a task depends only on its fields (docs/decisions.md#flat-memory-issue-28).
type screenTask struct {
	// sigs is the task's signal list, one byte per signal, sorted (a string: comparable; a score is a
	// sum, so the order does not matter, but a signal listed twice counts twice, as in weights.Score).
	sigs  string
	fired [weights.NumSignals]bool
	// stratum is the index of the task's stratum (its log and 30-day block): the test's null holds in
	// each apart (LogEValueStrata).
	stratum int32
	// day is the task's meta time in days since the Unix epoch, UTC: the time order the loss rule's
	// current excess splits the history by (currentExcess, docs/decisions.md#current-excess-issue-28).
	day     int32
	flagged bool
	// weak marks an eligible task that is not flagged but whose first later same-area task failed: a
	// single witness; placebo one whose nearest earlier same-area task failed. Both count only in the
	// excess, the one net of the other (excessTable, docs/decisions.md#weak-witness).
	weak, placebo bool
	// eligible tasks enter the tables; the others (auto, closed, L2+ under the active weights) only
	// count for the loss rule's extra levels.
	eligible bool
	// unclamped says its recorded creativity (inventive or conservative) lets the L4 bucket run at L4;
	// every other task runs at L3 there (scorer.Clamps), so raising it into that bucket raises nothing.
	unclamped bool
	// ranHigh marks a task that was dispatched auto at L2+ (never eligible), regressedHigh one of them
	// with exact regression evidence: the loss rule compares the carriers among them with the others
	// (docs/decisions.md#the-carriers-at-l2).
	ranHigh, regressedHigh bool
}

// newScreenTask is the screen task of a task with signals sigs.
func newScreenTask(sigs []weights.Signal, stratum int32, eligible, flagged bool) screenTask {
	b := make([]byte, len(sigs))
	t := screenTask{stratum: stratum, eligible: eligible, flagged: flagged}
	for i, s := range sigs {
		b[i] = byte(s)
		t.fired[s] = true
	}
	slices.Sort(b)
	t.sigs = string(b)
	return t
}

// signals is the task's signal list.
func (t *screenTask) signals() []weights.Signal {
	out := make([]weights.Signal, len(t.sigs))
	for i := range len(t.sigs) {
		out[i] = weights.Signal(t.sigs[i])
	}
	return out
}

// level is the level the task runs at under w: weights.Score of its signals, bucketed, and clamped as
// the scorer clamps it (scorer.RunsAt; a task that is not unclamped is clamped as a standard one).
func (t *screenTask) level(w *weights.Weights) weights.Level {
	return scorer.RunsAt(w.Level(t.score(w)), !t.unclamped)
}

func (t *screenTask) score(w *weights.Weights) weights.Half {
	var sum weights.Half
	for i := range len(t.sigs) {
		sum += w.Signals[t.sigs[i]]
	}
	return sum
}

// screenCell is n counted tasks with the same screen task: the screen and the loss rule weigh a cell
// once, times n (their sums are counts and integer levels, so the order they are added in does not
// matter).
type screenCell struct {
	screenTask
	n int
}

// population is the accumulated screen tasks as cells, in the order each distinct value first came
// (so the strata are numbered as the tasks came).
type population struct {
	cells []screenCell
	index map[screenTask]int
}

// add counts n more tasks t.
func (p *population) add(t screenTask, n int) {
	if i, ok := p.index[t]; ok {
		p.cells[i].n += n
		return
	}
	if p.index == nil {
		p.index = map[screenTask]int{}
	}
	p.index[t] = len(p.cells)
	p.cells = append(p.cells, screenCell{t, n})
}

// tasksIn counts the tasks of cells.
func tasksIn(cells []screenCell) int {
	n := 0
	for _, c := range cells {
		n += c.n
	}
	return n
}

// excessTable is the 2×2 the excess is estimated from (docs/decisions.md#weak-witness): per group
// (tasks in it, the others) the eligible tasks, and as regressed the flagged ones plus the single
// same-area witnesses net of the placebos, never below the flagged. The tests never count a single
// witness (an ordinary failure in a busy module would flag noise). A regression recorded by one failing
// follower belongs in the excess, but so does every ordinary failure of a task's next neighbour in its
// files, and those fall alike on the two groups only when the groups work alike: carriers in a busy
// module, or touching more files, have a failing neighbour more often for reasons of their area. The
// nearest earlier task in the same files is a neighbour a task cannot have broken, with the same
// exposure to the area's ordinary failures, so the placebo takes them out group by group.
//
// high is the same comparison among the tasks that ran at L2 or higher (docs/decisions.md#the-carriers-at-l2),
// regressed or not: [0] the carriers of the kind the scorer can put low, [1] the tasks without the
// signal.
type excessTable struct {
	n, flagged, weak, placebo [2]int
	high                      [2][2]int
}

// addHigh counts the cell's tasks that ran at L2+, with the carriers when carrier.
func (e *excessTable) addHigh(carrier bool, c screenCell) {
	g, r := 1, 1
	if carrier {
		g = 0
	}
	if c.regressedHigh {
		r = 0
	}
	e.high[g][r] += c.n
}

// add counts the cell's eligible tasks, in the group when in.
func (e *excessTable) add(in bool, c screenCell) {
	g := 1
	if in {
		g = 0
	}
	e.n[g] += c.n
	if c.flagged {
		e.flagged[g] += c.n
	}
	if c.weak {
		e.weak[g] += c.n
	}
	if c.placebo {
		e.placebo[g] += c.n
	}
}

// cells is the table as Excess takes it: regressed in the group, not, regressed among the others, not.
func (e excessTable) cells() [4]int {
	var n [4]int
	for g := range 2 {
		regressed := e.flagged[g] + max(0, e.weak[g]-e.placebo[g])
		n[2*g], n[2*g+1] = regressed, e.n[g]-regressed
	}
	return n
}

func (e excessTable) excess() float64 {
	n := e.cells()
	return Excess(n[0], n[1], n[2], n[3])
}

// Screen builds the per-signal rows in signal table order (docs/decisions.md#accumulated-evidence).
//
// The population is the eligible tasks only: the negative signals (explicit-bugfix, single-file) are what
// put a task at L0/L1, so over every closed task they go with being flagged by construction, and L2+
// tasks regress at a rate their level changed (docs/decisions.md#anytime-valid-test). Verdicts: "candidate" when
// the carriers were flagged more often and the e-value reaches Threshold; "underpowered" when even every
// carrier flagged and no other task would not reach it; "no-signal" otherwise. Candidates with identical
// tables are "indistinguishable".
func Screen(tasks []screenCell, nFlagged int, st Strata) []ScreenRow {
	rows := make([]ScreenRow, weights.NumSignals)
	ps := make([]float64, weights.NumSignals)
	passes, underpowered := make([]bool, weights.NumSignals), make([]bool, weights.NumSignals)
	strata := len(st.Block)
	for _, t := range tasks {
		strata = max(strata, int(t.stratum)+1)
	}
	if st.Block != nil && len(st.Block) < strata {
		// The detector numbers every stratum it gives a task (strataInTime); any other caller's strata
		// without a block count in the first one, never as where new regressions arrive.
		st.Block = append(slices.Clone(st.Block), make([]int, strata-len(st.Block))...)
		if st.Latest != nil {
			st.Latest = append(slices.Clone(st.Latest), make([]bool, strata-len(st.Latest))...)
		}
	}
	for s := range rows {
		tables := make([]Table, strata)
		var excess excessTable
		for _, t := range tasks {
			if !t.eligible {
				continue
			}
			excess.add(t.fired[s], t)
			tables[t.stratum][tableCell(t.fired[s], t.flagged)] += t.n
		}
		var a, b, c, d int
		for _, x := range tables {
			a, b, c, d = a+x[0], b+x[1], c+x[2], d+x[3]
		}
		extreme := make([]Table, len(tables))
		for i, x := range tables {
			extreme[i] = Table{x[0] + x[1], 0, 0, x[2] + x[3]}
		}
		sc := stats.Screen(a, b, c, d, Alpha, Confidence)
		logE, onset := onsetMixture(tables, st.Block)
		passes[s], underpowered[s] = logE >= math.Log(Threshold), !PassesOnsets(extreme, st.Block)
		more := 0
		if !passes[s] {
			more = moreNeededFailing(tables, st.Block, st.Latest)
		}
		rows[s] = ScreenRow{Signal: weights.Signal(s).String(), A: a, B: b, C: c, D: d,
			RateFlagged: Num(sc.RateWith), RateOther: Num(sc.RateWithout), Effect: Num(stats.PrevalenceDiff(a, b, c, d)),
			Phi: Num(sc.Phi), LogOR: Num(sc.LogOR), SE: Num(sc.SE), Z: Num(sc.Z), P: Num(sc.P), MinP: Num(sc.MinP),
			EValue: Num(ShownEValue(logE)), Threshold: Num(Threshold), MoreNeeded: more,
			Excess: Num(excess.excess()), Consistent: consistent(a, nFlagged)}
		ps[s] = sc.P
		if passes[s] && onset > 0 {
			rows[s].EvidenceSince = st.since(onset)
		}
	}
	holm := stats.Holm(ps)
	for s := range rows {
		r := &rows[s]
		r.HolmP = Num(holm[s])
		higher := r.A*(r.C+r.D) > r.C*(r.A+r.B)
		switch {
		case r.A == 0:
			r.Verdict = VerdictNoSignal
		case underpowered[s]:
			r.Verdict, r.Confidence = VerdictUnderpowered, "underpowered"
		case higher && passes[s]:
			r.Verdict, r.Confidence = VerdictCandidate, "strong"
		default:
			r.Verdict = VerdictNoSignal
		}
	}
	markTies(rows)
	return rows
}

// markTies turns candidates whose 2×2 tables are identical into "indistinguishable": the
// window cannot say which of them is the signal, and a name order is no reason to pick one.
func markTies(rows []ScreenRow) {
	for i := range rows {
		if rows[i].Verdict != VerdictCandidate {
			continue
		}
		for j := range rows {
			if i == j || (rows[j].Verdict != VerdictCandidate && rows[j].Verdict != VerdictTied) {
				continue
			}
			ri, rj := rows[i], rows[j]
			if ri.A == rj.A && ri.B == rj.B && ri.C == rj.C && ri.D == rj.D {
				rows[i].TiedWith = append(rows[i].TiedWith, rj.Signal)
			}
		}
	}
	for i := range rows {
		if len(rows[i].TiedWith) > 0 {
			rows[i].Verdict = VerdictTied
		}
	}
}

// Tied returns the names of the signals that are indistinguishable, in table order.
func Tied(rows []ScreenRow) []string {
	var out []string
	for _, r := range rows {
		if r.Verdict == VerdictTied {
			out = append(out, r.Signal)
		}
	}
	return out
}

// consistent is rule 6 (docs/decisions.md#evolution-step): fired in every flagged task; with more than three flagged, in at least three
// and at least two thirds of them.
func consistent(firedInFlagged, nFlagged int) bool {
	if nFlagged == 0 {
		return false
	}
	if nFlagged <= 3 {
		return firedInFlagged == nFlagged
	}
	return firedInFlagged >= 3 && 3*firedInFlagged >= 2*nFlagged
}

// preference is the SKILL's order among equally good signals: ambiguous, contract-rule-hit,
// layer-crossings, then the rest (by name).
func preference(s weights.Signal) int {
	switch s {
	case weights.Ambiguous:
		return 0
	case weights.ContractRuleHit:
		return 1
	case weights.LayerCrossings:
		return 2
	}
	return 3
}

// excluded matches a change by its knob (signal or edge), whatever the delta.
func excluded(list []Change, c Change) bool {
	return slices.ContainsFunc(list, c.SameKnob)
}

// pickEdge is the bucket rule (rule 7, docs/decisions.md#evolution-step): the upper edge (of L0..L3) on which the most flagged tasks
// score exactly under the parent weights, when at least TriggerThreshold of them do. The edge moves down by
// one, which lifts exactly those tasks into the next bucket.
func pickEdge(flagged []Flagged, parent *weights.Weights, exclude []Change) (Change, int, bool) {
	var onEdge [weights.NumLevels - 1]int
	for _, f := range flagged {
		sum := parent.Score(f.Fired)
		lv := parent.Level(sum)
		if lv < weights.L4 && sum == parent.Buckets.Edges[lv] {
			onEdge[lv]++
		}
	}
	best := -1
	for lv, n := range onEdge {
		if n >= TriggerThreshold && (best < 0 || n > onEdge[best]) {
			best = lv
		}
	}
	if best < 0 {
		return Change{}, 0, false
	}
	c := Change{Kind: weights.ChangeBucket, Edge: weights.Level(best), Delta: weights.Whole(-1)}
	if !c.Valid(parent) || excluded(exclude, c) {
		return Change{}, onEdge[best], false
	}
	return c, onEdge[best], true
}
