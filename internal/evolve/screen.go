package evolve

import (
	"math"
	"sort"

	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/weights"
)

// ScreenRow is the 2×2 screen of one signal over the eligible tasks of the window (auto, L0/L1, closed,
// still L0/L1 under the active weights, not in the evidence ledger): A present & flagged, B present & not
// flagged, C absent & flagged, D absent & not flagged (docs/decisions.md#screen).
type ScreenRow struct {
	Signal string `json:"signal"`
	A      int    `json:"a"`
	B      int    `json:"b"`
	C      int    `json:"c"`
	D      int    `json:"d"`
	// RateFlagged is a/(a+b): how often a task with the signal was flagged; RateOther c/(c+d).
	RateFlagged Num `json:"rate_with"`
	RateOther   Num `json:"rate_without"`
	// Effect is the prevalence difference a/(a+c) − b/(b+d): how much more common the signal is among
	// the flagged tasks than among the other eligible tasks (null without other eligible tasks).
	Effect Num `json:"effect"`
	Phi    Num `json:"phi"`
	LogOR  Num `json:"log_odds"`
	SE     Num `json:"se"`
	Z      Num `json:"z"`
	P      Num `json:"fisher_p"`
	// HolmP is the Holm-adjusted p over the nine signals; it binds: a candidate needs HolmP ≤ Alpha.
	HolmP Num `json:"holm_p"`
	MinP  Num `json:"min_p"`
	// Consistent: fired in every flagged task (with more than three flagged: in at least three and in at
	// least two thirds of them).
	Consistent bool   `json:"consistent"`
	Verdict    string `json:"verdict"`
	// Confidence is "strong" for a candidate (it passed Holm), "underpowered" when no count could pass
	// Holm's first threshold, "" otherwise.
	Confidence string `json:"confidence,omitempty"`
	// TiedWith names the other candidates whose table is identical (verdict "indistinguishable").
	TiedWith []string `json:"tied_with,omitempty"`
}

// ScreenPopulation is the population the screen compared, for the explanations.
const ScreenPopulation = "flagged vs the other eligible tasks (auto, L0/L1 under the active weights, closed, not in the evidence ledger)"

// ScreenCorrection names the family-wise control, for the explanations.
const ScreenCorrection = "Holm over the 9 signals, binding; one screen per run, every candidate the loop tries is a member of that family"

// screenTask is one eligible window task as the screen sees it.
type screenTask struct {
	fired   [weights.NumSignals]bool
	flagged bool
	key     string // taskKey of the task
}

// Screen builds the per-signal rows in signal table order (docs/decisions.md#screen).
//
// The population is the eligible tasks only: the negative signals (explicit-bugfix, single-file) are what
// put a task at L0/L1, so over every closed task they go with being flagged by construction. Verdicts
// (docs/decisions.md#screen):
// "no-signal" when the signal never fired in a flagged task or goes with fewer flags than without it
// (log-odds ≤ 0); "underpowered" when even the most extreme table with these margins could not pass
// Holm's first threshold Alpha/9; "candidate" when the Holm-adjusted one-sided Fisher p is at most Alpha
// and the prevalence difference is at least MinEffect; "small-effect" when only the effect is missing;
// "no-signal" otherwise. Consistent candidates with identical tables are "indistinguishable".
func Screen(tasks []screenTask, nFlagged int) []ScreenRow {
	rows := make([]ScreenRow, weights.NumSignals)
	ps := make([]float64, weights.NumSignals)
	for s := range rows {
		var a, b, c, d int
		for _, t := range tasks {
			switch {
			case t.fired[s] && t.flagged:
				a++
			case t.fired[s]:
				b++
			case t.flagged:
				c++
			default:
				d++
			}
		}
		sc := stats.Screen(a, b, c, d, Alpha, Confidence)
		effect := stats.PrevalenceDiff(a, b, c, d)
		rows[s] = ScreenRow{Signal: weights.Signal(s).String(), A: a, B: b, C: c, D: d,
			RateFlagged: Num(sc.RateWith), RateOther: Num(sc.RateWithout), Effect: Num(effect), Phi: Num(sc.Phi),
			LogOR: Num(sc.LogOR), SE: Num(sc.SE), Z: Num(sc.Z), P: Num(sc.P), MinP: Num(sc.MinP),
			Consistent: consistent(a, nFlagged)}
		ps[s] = sc.P
	}
	holm := stats.Holm(ps)
	m := float64(weights.NumSignals)
	for s := range rows {
		r := &rows[s]
		r.HolmP = Num(holm[s])
		switch {
		case r.A == 0 || !(float64(r.LogOR) > 0):
			r.Verdict = VerdictNoSignal
		case !(float64(r.MinP)*m <= Alpha):
			r.Verdict, r.Confidence = VerdictUnderpowered, "underpowered"
		case float64(r.HolmP) <= Alpha && float64(r.Effect) >= MinEffect:
			r.Verdict, r.Confidence = VerdictCandidate, "strong"
		case float64(r.HolmP) <= Alpha:
			r.Verdict = VerdictSmallEffect
		default:
			r.Verdict = VerdictNoSignal
		}
	}
	markTies(rows)
	return rows
}

// markTies turns consistent candidates whose 2×2 tables are identical into "indistinguishable": the
// window cannot say which of them is the signal, and a name order is no reason to pick one.
func markTies(rows []ScreenRow) {
	for i := range rows {
		if rows[i].Verdict != VerdictCandidate || !rows[i].Consistent {
			continue
		}
		for j := range rows {
			if i == j || (rows[j].Verdict != VerdictCandidate && rows[j].Verdict != VerdictTied) || !rows[j].Consistent {
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

// Tied returns the names of the consistent signals that are indistinguishable, in table order.
func Tied(rows []ScreenRow) []string {
	var out []string
	for _, r := range rows {
		if r.Verdict == VerdictTied && r.Consistent {
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

// pickSignal takes the consistent candidate with the highest z. Candidates with identical tables never
// get here (they are "indistinguishable"); equal z with different tables prefers the upward-biasing
// change — the +1 that lifts more flagged tasks a whole level under the parent weights — then the
// preference order, then the name. Changes in exclude are skipped (the loop passes the ones it tried).
func pickSignal(rows []ScreenRow, flagged []Flagged, parent *weights.Weights, exclude []Change) (weights.Signal, bool) {
	type cand struct {
		s    weights.Signal
		z    float64
		lift int
	}
	var cands []cand
	for s, r := range rows {
		sig := weights.Signal(s)
		if r.Verdict != VerdictCandidate || !r.Consistent || excluded(exclude, Change{Kind: weights.ChangeSignal, Signal: sig}) {
			continue
		}
		change := Change{Kind: weights.ChangeSignal, Signal: sig, Delta: weights.Whole(1)}
		cw := change.Apply(*parent)
		lift := 0
		for _, f := range flagged {
			if cw.Level(cw.Score(f.Fired)) > parent.Level(parent.Score(f.Fired)) {
				lift++
			}
		}
		cands = append(cands, cand{sig, float64(r.Z), lift})
	}
	if len(cands) == 0 {
		return 0, false
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if math.Abs(a.z-b.z) > 1e-9 {
			return a.z > b.z
		}
		if a.lift != b.lift {
			return a.lift > b.lift
		}
		if preference(a.s) != preference(b.s) {
			return preference(a.s) < preference(b.s)
		}
		return a.s.String() < b.s.String()
	})
	return cands[0].s, true
}

// excluded matches a change by its knob (signal or edge), whatever the delta.
func excluded(list []Change, c Change) bool {
	for _, x := range list {
		if x.Kind == c.Kind && ((c.Kind == weights.ChangeSignal && x.Signal == c.Signal) || (c.Kind == weights.ChangeBucket && x.Edge == c.Edge)) {
			return true
		}
	}
	return false
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
