package evolve

// A second independent review of issue 28's decision rules (docs/decisions.md#loss-rule): its own
// population of task kinds, its own trace writer and its own truth. The truth of a change is its expected
// loss change per future task under the generator's true rates and the stated losses (a low-side
// regression avoided ×too_low, a level raised on a task that did not need it ×too_high), computed from
// the kinds' shares and rates — never from the rule's own estimate. The in-suite sizes take seconds;
// TUNE_HARNESS=full plays the sizes the review note quotes.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/weights"
)

// r2Kind is one kind of task: its signals (the planted signal among them or not), its share of the
// tasks, and the probability that it regresses when dispatched on the low side (L0/L1); every task
// regresses at the background rate otherwise (raising it does not change that).
type r2Kind struct {
	name  string
	sigs  []weights.Signal
	share float64
	low   float64 // regression rate while dispatched at L0/L1 (0: the background rate)
}

// r2Pop is a population: kinds, the background regression rate and the planted signal (the one the
// kinds with an excess carry).
type r2Pop struct {
	name       string
	kinds      []r2Kind
	background float64
}

// rate is kind k's regression probability at level lv.
func (p *r2Pop) rate(k int, lv weights.Level) float64 {
	if lv <= weights.L1 && p.kinds[k].low > 0 {
		return p.kinds[k].low
	}
	return p.background
}

// truth is the expected gain per future task of moving from parent to cand (positive: the change pays)
// under the stated losses and the true rates: a task lifted out of L0/L1 needed L2 with probability
// π = (low − background)/(1 − background) (it regresses whenever it is low and needs more, otherwise at
// the background rate), so it avoids low − background regressions; a level raised counts as too high
// unless the task needed it (a needing task needs L2, so a lift to L3 still costs one level).
func (p *r2Pop) truth(parent, cand *weights.Weights) float64 {
	g := 0.0
	for k, kd := range p.kinds {
		pl, cl := parent.Level(parent.Score(kd.sigs)), cand.Level(cand.Score(kd.sigs))
		if cl <= pl {
			continue
		}
		raise := float64(cl - pl)
		gk := -float64(parent.Cost.TooHigh) * raise
		if pl <= weights.L1 && cl >= weights.L2 {
			avoided := p.rate(k, pl) - p.rate(k, cl)
			pi := avoided / (1 - p.background)
			gk = float64(parent.Cost.TooLow)*avoided - float64(parent.Cost.TooHigh)*(pi*float64(cl-weights.L2)+(1-pi)*raise)
		}
		g += kd.share * gk
	}
	return g
}

// kindOf finds the kind a task's signals belong to (-1: none).
func (p *r2Pop) kindOf(sigs []weights.Signal) int {
	for k, kd := range p.kinds {
		if newScreenTask(kd.sigs, 0, false, false).sigs == newScreenTask(sigs, 0, false, false).sigs {
			return k
		}
	}
	return -1
}

// r2Task is one generated task: its kind, the level it was dispatched at and whether it regressed.
type r2Task struct {
	kind      int
	level     weights.Level
	regressed bool
	at        time.Time
}

// r2Start is the first night of every sequence.
var r2Start = time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)

// night adds one night's tasks (5–20, 30 minutes apart) dispatched under the active weights.
func (p *r2Pop) night(r *rand.Rand, n int, active *weights.Weights, log []r2Task) []r2Task {
	count := 5 + r.IntN(16)
	for i := 0; i < count; i++ {
		u, k := r.Float64(), 0
		for k < len(p.kinds)-1 && u >= p.kinds[k].share {
			u -= p.kinds[k].share
			k++
		}
		lv := active.Level(active.Score(p.kinds[k].sigs))
		log = append(log, r2Task{kind: k, level: lv, regressed: r.Float64() < p.rate(k, lv),
			at: r2Start.Add(time.Duration(n)*24*time.Hour + time.Duration(i)*30*time.Minute)})
	}
	return log
}

// render writes the log as a trace (the signals as dispatched; a regression as regression_followed=true).
func (p *r2Pop) render(log []r2Task, active *weights.Weights) []byte {
	var b strings.Builder
	for i, t := range log {
		kd := p.kinds[t.kind]
		parts := make([]string, len(kd.sigs))
		for j, s := range kd.sigs {
			parts[j] = s.String() + ":" + active.Signals[s].String()
		}
		close := ""
		if t.regressed {
			close = "  regression_followed=true"
		}
		fmt.Fprintf(&b, "%s  meta  %s  dispatch=auto  signals=%s  task=\"%s %d\"  loops=inner\n",
			t.at.Format(time.RFC3339), t.level.Label(), strings.Join(parts, ","), kd.name, i)
		fmt.Fprintf(&b, "%s  inner  close  terminal=complete  loss_final=0.100%s\n", t.at.Add(time.Minute).Format(time.RFC3339), close)
	}
	return []byte(b.String())
}

// r2Apply is one applied change of a sequence: the night, the change (parent → final), its true gain
// per future task, and what the rule estimated on the history when it decided.
type r2Apply struct {
	night int
	label string
	truth float64
	// ruleTotal is the loss rule's history gain of the applied change (its point estimate summed over
	// the history's tasks), trueTotal the same sum under the true rates; addedLoss the fixture loss its
	// kept attempts paid for; excess the signal row's (pooled) excess; tasks the history's size.
	ruleTotal, trueTotal float64
	addedLoss            int
	excess               float64
	tasks                int
	// since is the first day of the recent part the loss rule's excess came from (currentExcess), "" for
	// the whole history.
	since string
	// lbGain is the what-if of the review note's proposals: the same history gain with the lifted
	// excess at its Wilson bounds (carriers' lower minus the others' upper), on the apply's night, at
	// 95 % and 80 % two-sided confidence.
	lbGain [2]float64
}

// r2Why is why a loop result kept nothing (its reason, or its first step's refusal).
func r2Why(res *LoopResult) string {
	if res == nil {
		return ""
	}
	why := res.Outcome + ": " + res.Reason
	for _, st := range res.Steps {
		for _, a := range st.Attempts {
			why += " | " + a.Change.String() + ": " + a.Reason
		}
	}
	return why
}

// r2Play plays one sequence of nights through the evolve loop with auto-apply, as a live project runs
// it: the log grows, the loop reads the whole log with the clock an hour after the night, and an
// applicable run becomes the active weights (its supporting tasks ledgered, the watermark moved).
// r2Look is one night's estimate of +2 on the planted signal, before any apply, on a night its test
// passes: the rule's history gain (liftedExcess on the tasks it weighs) and the true one on the same tasks.
type r2Look struct{ rule, truth float64 }

func (h *harness) r2Play(p *r2Pop, seed uint64, nights int, looks *[]r2Look) (out []r2Apply, last *LoopResult) {
	r := rand.New(rand.NewPCG(seed, 0x2828))
	active := h.origin
	used := map[string]string{}
	var log []r2Task
	var after time.Time
	for n := 0; n < nights; n++ {
		log = p.night(r, n, &active, log)
		now := log[len(log)-1].at.Add(time.Hour)
		res, err := Loop(LoopInput{Tasks: parseLog(h.t, "project/.ldd/trace.log", p.render(log, &active)).Tasks, Parent: active,
			Suite: h.suite, Holdout: h.holdout, Parity: h.parity, Origin: &h.origin, Used: used, Now: now, EvidenceAfter: after})
		if err != nil {
			h.t.Fatal(err)
		}
		if s := p.kinds[0].sigs[1]; looks != nil && len(out) == 0 && res.Detection.Screen[s].Verdict == VerdictCandidate {
			c := Change{Kind: weights.ChangeSignal, Signal: s, Delta: weights.Whole(2)}
			tasks := res.Detection.screenTasks.cells
			g := lossGain(c, liftedExcess(c, &active, tasks), &active, tasks, nil)
			cand := c.Apply(active)
			lk := r2Look{rule: g.total(&active)}
			for _, st := range tasks {
				if k := p.kindOf(st.signals()); k >= 0 {
					lk.truth += float64(st.n) * p.truthOne(k, &active, &cand)
				}
			}
			*looks = append(*looks, lk)
		}
		if !changed(res) {
			last = res
			continue
		}
		next := res.Final
		next.Version = active.Version + 1
		ap := r2Apply{night: n + 1, truth: p.truth(&active, &next), label: r2Label(&active, &next)}
		for _, st := range res.Steps {
			for _, a := range st.Attempts {
				if a.Accepted {
					ap.addedLoss += a.AddedLoss
				}
			}
		}
		if d := res.Detection; d != nil {
			ap.tasks = tasksIn(d.screenTasks.cells)
			for _, st := range d.screenTasks.cells {
				if k := p.kindOf(st.signals()); k >= 0 {
					ap.trueTotal += float64(st.n) * p.truthOne(k, &active, &next)
				}
			}
			sigs, _ := changedKnobs(&active, &next)
			if len(sigs) == 1 {
				ap.excess = float64(d.Screen[sigs[0]].Excess)
				c := Change{Kind: weights.ChangeSignal, Signal: sigs[0], Delta: next.Signals[sigs[0]] - active.Signals[sigs[0]]}
				est := liftedExcess(c, &active, d.screenTasks.cells)
				ap.ruleTotal, ap.since = lossGain(c, est, &active, d.screenTasks.cells, nil).total(&active), est.sinceDate()
				for i, conf := range r2Bounds {
					ap.lbGain[i] = lossGain(c, excessEstimate{excess: liftedExcessBound(c, &active, d.screenTasks.cells, conf)}, &active, d.screenTasks.cells, nil).total(&active)
				}
			}
		}
		out = append(out, ap)
		for _, k := range res.SupportingKeys() {
			used[k] = weights.VersionName(next.Version)
		}
		if through, err := time.Parse(time.RFC3339Nano, res.Detection.Accumulated.Through); err == nil {
			after = through
		}
		active = next
	}
	return out, last
}

// truthOne is truth for one task of kind k (share 1).
func (p *r2Pop) truthOne(k int, parent, cand *weights.Weights) float64 {
	one := *p
	one.kinds = make([]r2Kind, len(p.kinds))
	copy(one.kinds, p.kinds)
	for i := range one.kinds {
		one.kinds[i].share = 0
	}
	one.kinds[k].share = 1
	return one.truth(parent, cand)
}

func r2Wilson(k, n int) string {
	lo, hi := stats.Wilson(k, n, 0.95)
	return fmt.Sprintf("%d/%d = %.1f%% [%.1f, %.1f]", k, n, 100*float64(k)/float64(max(n, 1)), 100*lo, 100*hi)
}

// Kinds shared by the populations (reference weights: explicit-bugfix −5, single-file −3, ambiguous
// and contract-rule-hit +2, greenfield +3, cross-layer +2, components>=3 +2; L1 ends at −2, L2 at 3).
var (
	sigFix     = []weights.Signal{weights.ExplicitBugfix}                     // −5: L1, eligible
	sigFixFile = []weights.Signal{weights.ExplicitBugfix, weights.SingleFile} // −8: L0, eligible
	sigGreen   = []weights.Signal{weights.Greenfield}                         // 3: L2
	sigWide    = []weights.Signal{weights.Components, weights.CrossLayer}     // 4: L3
)

// r2Carriers are the kinds carrying signal s: liftable (−3, L1; +2 lifts it to L2), deep (−6, L1; no
// step within the drift bound lifts it) and high (2, L2; +2 raises it to L3).
func r2Carriers(s weights.Signal) (liftable, deep, high []weights.Signal) {
	return []weights.Signal{weights.ExplicitBugfix, s},
		[]weights.Signal{weights.ExplicitBugfix, weights.SingleFile, s},
		[]weights.Signal{s}
}

// r2Population builds a population carrying signal s with the given shares of liftable, deep and high
// carriers and their low-side regression rates; the rest of the tasks are benign eligible (60 %) and
// L2+ (40 %) kinds. Background 5 %.
func r2Population(name string, s weights.Signal, lift, deep, high, pLift, pDeep float64) r2Pop {
	l, d, h := r2Carriers(s)
	rest := 1 - lift - deep - high
	return r2Pop{name: name, background: 0.05, kinds: []r2Kind{
		{"quick patch", l, lift, pLift},
		{"tangled patch", d, deep, pDeep},
		{"vague request", h, high, 0},
		{"fix bug", sigFix, 0.35 * rest, 0},
		{"fix one file", sigFixFile, 0.25 * rest, 0},
		{"new module", sigGreen, 0.2 * rest, 0},
		{"cross-cutting change", sigWide, 0.2 * rest, 0},
	}}
}

// r2Populations are the review's cases. pays says whether +2 on the planted signal pays by the truth
// (checked against truth itself in TestReview2TruthOfThePopulations).
type r2Case struct {
	pop  r2Pop
	pays bool
	// unliftable marks a population whose excess sits on carriers no step lifts: the loss rule must
	// refuse it (at most 5 % of sequences, by the Wilson lower bound); vetoed one the holdout refuses.
	unliftable, vetoed bool
}

func r2Cases() []r2Case {
	var out []r2Case
	for _, s := range []weights.Signal{weights.LayerCrossings, weights.ContractRuleHit} {
		n := s.String() + ": "
		out = append(out,
			r2Case{pop: r2Population(n+"weak 30% vs 5%, liftable", s, 0.15, 0, 0.02, 0.30, 0), pays: false},
			r2Case{pop: r2Population(n+"weak 35% vs 5%, liftable+deep", s, 0.10, 0.10, 0.02, 0.35, 0.35), pays: false},
			r2Case{pop: r2Population(n+"only deep carriers (90%), liftable 5%", s, 0.10, 0.15, 0.02, 0.05, 0.90), unliftable: true},
			r2Case{pop: r2Population(n+"deep 90%, liftable 20%", s, 0.10, 0.15, 0.02, 0.20, 0.90), pays: false},
			r2Case{pop: r2Population(n+"common among L2+ (25%), liftable 75%", s, 0.08, 0, 0.25, 0.75, 0), pays: false},
			r2Case{pop: r2Population(n+"no effect", s, 0.15, 0.05, 0.05, 0, 0), pays: false},
			r2Case{pop: r2Population(n+"moderate 75% liftable", s, 0.15, 0, 0.03, 0.75, 0), pays: true},
			r2Case{pop: r2Population(n+"strong 95% liftable+deep", s, 0.10, 0.08, 0.03, 0.95, 0.95), pays: true},
		)
	}
	// ambiguous +2 raises a holdout scenario: the veto refuses it whatever the evidence.
	return append(out, r2Case{pop: r2Population("ambiguous: moderate 75% liftable", weights.Ambiguous, 0.15, 0, 0.03, 0.75, 0), pays: true, vetoed: true})
}

func r2Plus2(w *weights.Weights, s weights.Signal) weights.Weights {
	return Change{Kind: weights.ChangeSignal, Signal: s, Delta: weights.Whole(2)}.Apply(*w)
}

// The populations' truth is what the review says it is: +2 on the planted signal pays exactly in the
// cases marked so (and +1, which lifts no kind, never pays).
func TestReview2TruthOfThePopulations(t *testing.T) {
	w := refWeights(t)
	for _, c := range r2Cases() {
		s := c.pop.kinds[0].sigs[1]
		plus2 := r2Plus2(&w, s)
		plus1 := Change{Kind: weights.ChangeSignal, Signal: s, Delta: weights.Whole(1)}.Apply(w)
		g2, g1 := c.pop.truth(&w, &plus2), c.pop.truth(&w, &plus1)
		t.Logf("%-55s true gain per task: +2 %+.4f, +1 %+.4f", c.pop.name, g2, g1)
		if (g2 > 0) != c.pays || g1 > 0 {
			t.Errorf("%s: truth +2 %.4f +1 %.4f, marked pays=%v", c.pop.name, g2, g1, c.pays)
		}
	}
}

func r2Size() (seqs, nights int) {
	if os.Getenv("TUNE_HARNESS") == "full" {
		return 40, 30
	}
	return 2, 20
}

// The pipeline on the review's populations: how often a change is applied, whether it pays by the
// truth, and how the rule's history gain compares with the true gain on the same tasks.
func TestReview2LivePipeline(t *testing.T) {
	h := newHarness(t)
	seqs, nights := r2Size()
	for ci, c := range r2Cases() {
		applied, bad, good, paidFixture := 0, 0, 0, 0
		// What-ifs on the applies' nights (review note): the gain at the excess's bounds pays (> 0), and it
		// pays the fixture loss the apply added.
		var lbPays, lbPaysFixture [2]int
		napplies := 0
		var ratio []float64
		var firsts []int
		var looks []r2Look
		for sq := 0; sq < seqs; sq++ {
			aps, last := h.r2Play(&c.pop, uint64(1000*ci+sq), nights, &looks)
			if len(aps) == 0 && sq == 0 {
				t.Logf("  %s seq 0, last night: %s", c.pop.name, r2Why(last))
			}
			if len(aps) > 0 {
				applied++
				firsts = append(firsts, aps[0].night)
			}
			anyBad, anyGood := false, false
			napplies += len(aps)
			for _, ap := range aps {
				anyBad = anyBad || !(ap.truth > 0)
				anyGood = anyGood || ap.truth > 0
				if ap.addedLoss > 0 {
					paidFixture++
				}
				for i, g := range ap.lbGain {
					lbPays[i] += b2i(g > 0)
					if ap.addedLoss > 0 {
						lbPaysFixture[i] += b2i(g > float64(ap.addedLoss))
					}
				}
				if ap.trueTotal != 0 {
					ratio = append(ratio, ap.ruleTotal/ap.trueTotal)
				}
				t.Logf("  %s seq %d night %d: %s truth %+.4f/task; rule history gain %.2f vs true %.2f on %d tasks; excess %.3f; fixture loss paid %d; current excess since %q",
					c.pop.name, sq, ap.night, ap.label, ap.truth, ap.ruleTotal, ap.trueTotal, ap.tasks, ap.excess, ap.addedLoss, ap.since)
			}
			bad += b2i(anyBad)
			good += b2i(anyGood)
		}
		t.Logf("%s (pays: %v): sequences with an apply %s; with an apply that does not pay %s; with one that pays %s; median first night %d; applies paying fixture loss %d; rule/true history gain median %.2f %v",
			c.pop.name, c.pays, r2Wilson(applied, seqs), r2Wilson(bad, seqs), r2Wilson(good, seqs), median(firsts), paidFixture, medianF(ratio), fmtRatios(ratio))
		t.Logf("%s: what-if at the excess's Wilson 95 %% / 80 %% bounds, on the %d applies' nights: gain > 0 in %v; of the %d that paid fixture loss, paid at the bounds %v",
			c.pop.name, napplies, lbPays, paidFixture, lbPaysFixture)
		// Every night the planted signal passed before an apply: the rule's history gain for +2 against
		// the true one on the same tasks, over all such nights and over those where the rule says it pays.
		var all, pays [2]float64
		npays := 0
		for _, lk := range looks {
			all[0], all[1] = all[0]+lk.rule, all[1]+lk.truth
			if lk.rule > 0 {
				npays++
				pays[0], pays[1] = pays[0]+lk.rule, pays[1]+lk.truth
			}
		}
		if n := len(looks); n > 0 {
			t.Logf("%s: %d passing nights before an apply: mean history gain of +2, rule %.2f vs true %.2f; on the %d where the rule says it pays, rule %.2f vs true %.2f",
				c.pop.name, n, all[0]/float64(n), all[1]/float64(n), npays, pays[0]/float64(max(npays, 1)), pays[1]/float64(max(npays, 1)))
		}
		if lo, _ := stats.Wilson(bad, seqs, 0.95); c.unliftable && lo > 0.05 {
			t.Errorf("%s: a change that avoids nothing applied in %s of sequences", c.pop.name, r2Wilson(bad, seqs))
		}
		if _, hi := stats.Wilson(good, seqs, 0.95); c.pays && !c.vetoed && hi < 0.8 {
			t.Errorf("%s: a change that pays applied in only %s of sequences", c.pop.name, r2Wilson(good, seqs))
		}
	}
}

func fmtRatios(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			parts[i] = "inf"
			continue
		}
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// r2Label names what moved from a to b ("ambiguous +2", "L1 edge +1").
func r2Label(a, b *weights.Weights) string {
	var parts []string
	for s := range a.Signals {
		if d := b.Signals[s] - a.Signals[s]; d != 0 {
			parts = append(parts, weights.DiffLabel(weights.ChangeSignal, weights.Signal(s).String(), d))
		}
	}
	for l := range a.Buckets.Edges {
		if d := b.Buckets.Edges[l] - a.Buckets.Edges[l]; d != 0 {
			parts = append(parts, weights.DiffLabel(weights.ChangeBucket, weights.Level(l).String(), d))
		}
	}
	return strings.Join(parts, ", ")
}

// The loss rule credits a lifted task with the excess of the tasks the change lifts, not of every
// carrier: when the carriers that regress sit too low for any step within the drift bound to lift them
// (explicit-bugfix + single-file + layer-crossings, −6) and the ones +2 lifts (explicit-bugfix +
// layer-crossings, −3) regress no more often than the other eligible tasks, +2 avoids nothing and only
// raises levels. Before, the carriers' pooled excess (0.47) was credited to the lifted ones and +2
// was proposed with a positive gain.
func TestReview2ExcessIsTheLiftedTasks(t *testing.T) {
	w := refWeights(t)
	liftable := []weights.Signal{weights.ExplicitBugfix, weights.LayerCrossings}
	deep := []weights.Signal{weights.ExplicitBugfix, weights.SingleFile, weights.LayerCrossings}
	tasks := append(lossTasks(1, true, true, liftable...), lossTasks(9, false, true, liftable...)...)
	tasks = append(tasks, lossTasks(12, true, true, deep...)...)
	tasks = append(tasks, lossTasks(2, false, true, deep...)...)
	tasks = append(tasks, lossTasks(2, true, true, weights.ExplicitBugfix)...)
	tasks = append(tasks, lossTasks(38, false, true, weights.ExplicitBugfix)...)
	rows := Screen(tasks, 15, Strata{})
	if r := rows[weights.LayerCrossings]; r.Verdict != VerdictCandidate {
		t.Fatalf("setup: layer-crossings %+v must pass the test", r)
	}
	ranked, _, _ := rankChanges(rows, tasks, &w, &w, nil, nil)
	for _, g := range ranked {
		if g.Change.Signal == weights.LayerCrossings {
			t.Errorf("%s is proposed with a positive gain, but the tasks it lifts regress 1 in 10 against 2 in 40 (excess credited %.2f)", g, float64(g.Excess))
		}
	}
	// The same carriers regressing alike at every depth: +2 pays, credited with the lifted tasks' excess.
	same := append(lossTasks(8, true, true, liftable...), lossTasks(2, false, true, liftable...)...)
	same = append(same, tasks[10:]...)
	rows = Screen(same, 22, Strata{})
	ranked, _, _ = rankChanges(rows, same, &w, &w, nil, nil)
	if len(ranked) == 0 || ranked[0].Change.Signal != weights.LayerCrossings || ranked[0].Lifted != 10 {
		t.Fatalf("liftable carriers flagged 8 in 10: ranked %+v, want layer-crossings +2 lifting 10", ranked)
	}
	if want := Excess(8, 2, 2, 38); math.Abs(float64(ranked[0].Excess)-want) > 1e-9 {
		t.Errorf("credited excess %.3f, want the lifted tasks' %.3f", float64(ranked[0].Excess), want)
	}
}

// The suite rule under the stated losses (docs/decisions.md#loss-rule) on the smallest history the
// test accepts: one window, 4 flagged carriers of contract-rule-hit that +2 lifts beside 12 benign
// eligible tasks (e = 462). contract-rule-hit +2 makes the contract scenario L2-deliberate one level too
// high (added loss 1), and the window's expected gain (4 lifted × excess 0.76) pays for it: the change
// is kept on 16 tasks. The review note's point: the gain that pays is a point estimate; at the 95 %
// Wilson bounds of the two rates (carriers ≥ 0.51, others ≤ 0.24) the same 4 lifts would lose.
func TestReview2OneWindowPaysForAContractScenario(t *testing.T) {
	h := newHarness(t)
	liftable, _, _ := r2Carriers(weights.ContractRuleHit)
	pop := r2Pop{name: "one window", background: 0.05, kinds: []r2Kind{{"quick patch", liftable, 0, 0}, {"fix bug", sigFix, 0, 0}}}
	var log []r2Task
	for i := 0; i < 16; i++ {
		k := b2i(i%4 != 0) // every fourth task a carrier, flagged
		log = append(log, r2Task{kind: k, level: weights.L1, regressed: k == 0, at: r2Start.Add(time.Duration(i) * time.Hour)})
	}
	res, err := Loop(LoopInput{Tasks: parseLog(t, "w/trace.log", pop.render(log, &h.origin)).Tasks, Parent: h.origin,
		Suite: h.suite, Holdout: h.holdout, Parity: h.parity, Origin: &h.origin, Used: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Detection.Screen[weights.ContractRuleHit]
	t.Logf("table %d/%d/%d/%d, e %.0f, excess %.3f; outcome %s: %s", r.A, r.B, r.C, r.D, float64(r.EValue), float64(r.Excess), res.Outcome, res.Reason)
	var kept *Attempt
	for _, st := range res.Steps {
		for i, a := range st.Attempts {
			t.Logf("%s: %s (added %d, history gain %.2f)", a.Change, a.Reason, a.AddedLoss, float64(a.HistoryGain))
			if a.Accepted && kept == nil {
				kept = &st.Attempts[i]
			}
		}
	}
	if !changed(res) || kept == nil || kept.Change.Signal != weights.ContractRuleHit {
		t.Fatalf("one window of 4 flagged carriers beside 12 benign: want contract-rule-hit +2 kept, got %s", res.Outcome)
	}
	if kept.AddedLoss < 1 || !(float64(kept.HistoryGain) > float64(kept.AddedLoss)) {
		t.Errorf("the kept change adds %d on the fixtures and records a history gain %.2f: the suite rule must have been paid", kept.AddedLoss, float64(kept.HistoryGain))
	}
	// The same 4 lifts priced at the Wilson bounds: the gain the contract scenario was traded for is not
	// established by the evidence.
	lo, _ := stats.Wilson(4, 4, 0.95)
	_, hi := stats.Wilson(0, 12, 0.95)
	e := lo - hi
	if g := 4 * (2*e - (1 - e)); g >= float64(kept.AddedLoss) {
		t.Logf("at the bounds (excess %.2f) the gain %.2f still pays", e, g)
	} else {
		t.Logf("at the Wilson bounds (excess %.2f) the 4 lifts gain %.2f < the fixture loss %d", e, g, kept.AddedLoss)
	}
}

func medianF(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// liftedExcessBound is the lifted table's excess at its Wilson bounds (the what-if of the review note:
// two-sided 95 % and 80 %, i.e. one-sided 97.5 % and 90 %), not a rule.
func liftedExcessBound(c Change, parent *weights.Weights, tasks []screenCell, conf float64) float64 {
	n := liftedTable(c, parent, tasks)
	lo, _ := stats.Wilson(n[0], n[0]+n[1], conf)
	_, hi := stats.Wilson(n[2], n[2]+n[3], conf)
	return math.Max(0, lo-hi)
}

// r2Bounds are the what-if's confidence levels.
var r2Bounds = [2]float64{0.95, 0.8}
