package evolve

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/tools/genhistory"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// loopHistory builds a 20-task window: three auto tasks dispatched low with the given signals, each
// closed with regression_followed=true, among fillers that carry none of those signals (half of them
// explicit bug fixes, so that explicit-bugfix is never the consistent pattern by itself). Before the
// window come loopEarlier routine bug fixes: the accumulated evidence's comparison group
// (docs/decisions.md#accumulated-evidence; 3 regressions beside the window's 9 benign fixes alone give
// e ≈ 74, beside 29 e ≈ 650 ≥ 450).
func loopHistory(t *testing.T, w *weights.Weights, seed int, flaggedSignals ...weights.Signal) []traceparse.Task {
	t.Helper()
	return loopHistoryIn(t, fmt.Sprintf("loop-%d.log", seed), w, seed, flaggedSignals...)
}

// loopHistoryIn is loopHistory written to the log name (two logs of the same seed share every timestamp).
func loopHistoryIn(t *testing.T, name string, w *weights.Weights, seed int, flaggedSignals ...weights.Signal) []traceparse.Task {
	t.Helper()
	h := &genhistory.History{Weights: w}
	h.Start = time.Date(2026, 5, 1+seed, 9, 0, 0, 0, time.UTC).Add(-loopEarlier * time.Minute)
	h.Step = time.Minute
	for i := 0; i < loopEarlier; i++ {
		h.Tasks = append(h.Tasks, genhistory.NewTask(w, fmt.Sprintf("earlier routine bug fix %d", i), float64(i%5)/10, weights.ExplicitBugfix))
	}
	for i := 0; i < 20; i++ {
		var task genhistory.Task
		switch {
		case i == 2 || i == 7 || i == 11:
			task = genhistory.NewTask(w, fmt.Sprintf("quick patch %d (seed %d)", i, seed), 0.05, flaggedSignals...)
			task.RegressionFollowed = true
		case i%2 == 0:
			task = genhistory.NewTask(w, fmt.Sprintf("routine bug fix %d", i), float64(i%5)/10, weights.ExplicitBugfix)
		default:
			task = genhistory.NewTask(w, fmt.Sprintf("feature work %d", i), float64(i%7)/10, weights.CrossLayer)
		}
		h.Tasks = append(h.Tasks, task)
	}
	return parseLog(t, name, h.Render()).Tasks
}

const loopEarlier = 20

func runLoop(t *testing.T, maxSteps int, flaggedSignals ...weights.Signal) *LoopResult {
	t.Helper()
	w := refWeights(t)
	suite, holdout := repoSuite(t)
	res, err := Loop(LoopInput{Tasks: loopHistory(t, &w, maxSteps, flaggedSignals...), Parent: w, Suite: suite, Holdout: holdout,
		Config: LoopConfig{MaxSteps: maxSteps}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestLoopLiftsInTheStepTheLossRulePrefers(t *testing.T) {
	// explicit-bugfix -5 + layer-crossings +2 = -3 (L1): +1 on layer-crossings only reaches L1's upper
	// edge and lifts nothing, so the loss rule takes +2, which lifts the three tasks to L2 in one step
	// (before issue 28 the loop needed two +1 steps, the first of which lifted nothing).
	res := runLoop(t, 0, weights.ExplicitBugfix, weights.LayerCrossings)
	if res.Outcome != OutcomeConverged {
		t.Fatalf("outcome %s (%s), want converged", res.Outcome, res.Reason)
	}
	if len(res.Accepted) != 1 || len(res.Steps) != 1 {
		t.Fatalf("accepted steps %v of %d, want 1 of 1", res.Accepted, len(res.Steps))
	}
	s := res.Steps[0]
	if s.Change == nil || s.Change.Signal != weights.LayerCrossings || s.Change.Delta != weights.Whole(2) || !s.Progress {
		t.Fatalf("step 1: change %v progress %v, want layer-crossings +2 with progress", s.Change, s.Progress)
	}
	if got := res.Final.Signals[weights.LayerCrossings]; got != weights.Whole(4) || res.Decision() != weights.DecisionAccept {
		t.Fatalf("final layer-crossings weight %s, decision %s; want +4, accept", got, res.Decision())
	}
	if keys := res.SupportingKeys(); len(keys) != 3 {
		t.Fatalf("supporting keys %v, want the 3 flagged tasks", keys)
	}
	if len(res.Resolved) != 3 {
		t.Fatalf("resolved %v, want the 3 flagged tasks", res.Resolved)
	}
	if s.SuiteLossAfter != 0 {
		t.Fatal("an accepted step turned a contract scenario red")
	}
	g := s.Gains
	if len(g) == 0 || g[0].Change != *s.Change || g[0].Lifted < 3 {
		t.Fatalf("loss rule %+v: +2 must come first and lift the 3 flagged tasks", g)
	}
	for _, x := range g {
		if x.Change.Delta == weights.Whole(1) {
			t.Fatalf("+1 lifts nothing, so its gain is negative and it is no alternative: %+v", g)
		}
	}
}

// Two projects' logs can hold the same meta timestamps. Lifting the tasks of one log must not count the
// other log's tasks, still on the low side, as resolved.
func TestLoopResolvesTasksPerLogNotPerTimestamp(t *testing.T) {
	w := refWeights(t)
	suite, holdout := repoSuite(t)
	tasks := loopHistoryIn(t, "a/trace.log", &w, 3, weights.ExplicitBugfix, weights.LayerCrossings)
	// -5 +2 -3 = -6: two more +1 steps on layer-crossings than the first log's tasks need.
	tasks = append(tasks, loopHistoryIn(t, "b/trace.log", &w, 3, weights.ExplicitBugfix, weights.LayerCrossings, weights.SingleFile)...)
	res, err := Loop(LoopInput{Tasks: tasks, Parent: w, Suite: suite, Holdout: holdout})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Detection.Flagged) != 6 {
		t.Fatalf("%d flagged tasks, want 3 per log", len(res.Detection.Flagged))
	}
	// After the second step the first log's tasks are lifted (-5 +4 = -1); the second log's are at -4.
	if len(res.Steps) < 3 || res.Steps[2].Unresolved != 3 {
		t.Fatalf("outcome %s (%s) after %d steps; the third step must still see the second log's 3 tasks",
			res.Outcome, res.Reason, len(res.Steps))
	}
	if res.Outcome != OutcomeConverged {
		return
	}
	for _, f := range res.Detection.Flagged {
		if lv := res.Final.Level(res.Final.Score(f.Fired)); lv <= weights.L1 {
			t.Fatalf("converged with %s %s still at %s", f.Source, f.MetaTimestamp, lv)
		}
	}
}

func TestLoopEscalatesAtTheStepCapKeepingAcceptedWork(t *testing.T) {
	w := refWeights(t)
	suite, holdout := repoSuite(t)
	// Log a's tasks (-3) are lifted by +2; log b's (-6) still need more at the cap.
	tasks := loopHistoryIn(t, "a/trace.log", &w, 3, weights.ExplicitBugfix, weights.LayerCrossings)
	tasks = append(tasks, loopHistoryIn(t, "b/trace.log", &w, 3, weights.ExplicitBugfix, weights.LayerCrossings, weights.SingleFile)...)
	res, err := Loop(LoopInput{Tasks: tasks, Parent: w, Suite: suite, Holdout: holdout, Config: LoopConfig{MaxSteps: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeEscalated {
		t.Fatalf("outcome %s (%s), want escalated", res.Outcome, res.Reason)
	}
	// Step 1 keeps +2 (log a's tasks reach -1, L2); log b's (-4) would need a third point, which the
	// second step cannot find; the cap ends the run keeping step 1.
	if len(res.Accepted) != 1 || res.Final.Signals[weights.LayerCrossings] != weights.Whole(4) || res.Decision() != weights.DecisionAccept {
		t.Fatalf("accepted %v, final layer-crossings %s, decision %s: the accepted steps must be kept",
			res.Accepted, res.Final.Signals[weights.LayerCrossings], res.Decision())
	}
}

// A loop never keeps a step that lifts nothing: tasks at -6 need +4.5 on layer-crossings, beyond any
// step the loss rule weighs (+1, +2 lift nothing, so their expected gain is negative) and the loop
// stops without measuring a change. (Before issue 28 it kept +1s that lifted nothing and refused the run
// at the cap.)
func TestLoopNeverKeepsAStepThatLiftsNothing(t *testing.T) {
	w := refWeights(t)
	suite, holdout := repoSuite(t)
	h := &genhistory.History{Weights: &w, Start: time.Date(2026, 8, 1, 9, 0, 0, 0, time.UTC)}
	for i := 0; i < 40; i++ {
		// The fixes alternate explicit-bugfix and explicit-bugfix + single-file, so single-file is not
		// tied with layer-crossings.
		sigs := []weights.Signal{weights.ExplicitBugfix}
		if i%2 == 1 {
			sigs = append(sigs, weights.SingleFile)
		}
		task := genhistory.NewTask(&w, fmt.Sprintf("routine bug fix %d", i), 0.05, sigs...)
		if i == 22 || i == 27 || i == 31 {
			task = genhistory.NewTask(&w, fmt.Sprintf("quick patch %d", i), 0.05, weights.ExplicitBugfix, weights.SingleFile, weights.LayerCrossings)
			task.RegressionFollowed = true
		}
		h.Tasks = append(h.Tasks, task)
	}
	res, err := Loop(LoopInput{Tasks: parseLog(t, "minus6.log", h.Render()).Tasks, Parent: w, Suite: suite, Holdout: holdout})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeStalled || len(res.Accepted) != 0 || res.Final != res.Parent || res.Decision() != weights.DecisionNone {
		t.Fatalf("outcome %s (%s), accepted %v, decision %s; want stalled without a measured change", res.Outcome, res.Reason, res.Accepted, res.Decision())
	}
	if !strings.Contains(res.Steps[0].Reason, "no change with a positive expected gain") {
		t.Fatalf("reason %q must say the passing signal's changes do not pay", res.Steps[0].Reason)
	}
}

// loopAtTheDriftBound runs the loop, with v0001 as the origin, from a parent two points up on
// layer-crossings over three regressions that want a third point: -5 -3 +4 = -4 is still L1 under the
// parent, so the tasks are eligible. The routine fixes carry explicit-bugfix and single-file too, so
// layer-crossings is the one signal.
func loopAtTheDriftBound(t *testing.T, acks DriftAcks) (*LoopResult, weights.Weights) {
	t.Helper()
	w := refWeights(t)
	suite, holdout := repoSuite(t)
	origin := w
	parent := Change{Kind: weights.ChangeSignal, Signal: weights.LayerCrossings, Delta: weights.Whole(2)}.Apply(w)
	parent.Version = 2
	h := genhistory.LowOnOneSignal(&parent, time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	res, err := Loop(LoopInput{Tasks: parseLog(t, "drift.log", h.Render()).Tasks, Parent: parent, Origin: &origin,
		Suite: suite, Holdout: holdout, Config: LoopConfig{DriftAcknowledged: acks}})
	if err != nil {
		t.Fatal(err)
	}
	return res, parent
}

// The drift bound: with v0001 as the origin, a third point on one knob escalates instead of proposing.
func TestLoopEscalatesAtTheDriftBound(t *testing.T) {
	res, _ := loopAtTheDriftBound(t, nil)
	if res.Outcome != OutcomeEscalated || res.Drift == nil || res.Drift.Knob != "layer-crossings" {
		t.Fatalf("outcome %s (%s), drift %+v; want an escalation at the drift bound", res.Outcome, res.Reason, res.Drift)
	}
	if res.Final != res.Parent || len(res.Steps[0].Attempts) != 0 {
		t.Fatal("a change beyond the drift bound must not be measured or kept")
	}
}

// A drift-bound stop a human acknowledged in tune.toml at the knob's value does not escalate: the knob
// leaves the run, which then stalls having nothing else to do, and says so; an acknowledgement of another
// value (the knob has moved since) or of another knob does not.
func TestLoopHoldsAnAcknowledgedDrift(t *testing.T) {
	_, parent := loopAtTheDriftBound(t, nil)
	run := func(acks DriftAcks) *LoopResult {
		t.Helper()
		res, _ := loopAtTheDriftBound(t, acks)
		return res
	}
	at := parent.Signals[weights.LayerCrossings]
	res := run(DriftAcks{"layer-crossings": at})
	if res.Outcome != OutcomeStalled || res.Drift != nil || len(res.DriftHeld) != 1 || res.DriftHeld[0].Knob != "layer-crossings" || res.DriftHeld[0].Active != at {
		t.Fatalf("acknowledged at %s: outcome %s (%s), drift %+v, held %+v; want a stall that names the held drift", at, res.Outcome, res.Reason, res.Drift, res.DriftHeld)
	}
	if res.Final != res.Parent || res.Decision() != weights.DecisionNone {
		t.Fatal("a held drift must keep nothing it did not keep before")
	}
	for _, want := range []string{"layer-crossings +1 at the drift bound", "leaves layer-crossings at +4, its active value", "no page"} {
		if !strings.Contains(HeldLine(res.DriftHeld), want) {
			t.Errorf("held line %q lacks %q", HeldLine(res.DriftHeld), want)
		}
	}
	for _, acks := range []DriftAcks{{"layer-crossings": at - weights.Whole(1)}, {"cross-layer": at}, nil} {
		if res := run(acks); res.Outcome != OutcomeEscalated || res.Drift == nil || res.DriftHeld != nil {
			t.Errorf("acknowledged %v: outcome %s, drift %v, held %v; want the escalation", acks, res.Outcome, res.Drift, res.DriftHeld)
		}
	}
}

// Two knobs stop at the drift bound and a human acknowledged one: the other still pages (the
// independent review found the run ending on the first, acknowledged stop without trying the second).
func TestAnAcknowledgedDriftDoesNotHideAnother(t *testing.T) {
	w := refWeights(t)
	suite, holdout := repoSuite(t)
	origin, parent := w, w
	parent.Signals[weights.LayerCrossings] += weights.Whole(2)
	parent.Signals[weights.ContractRuleHit] += weights.Whole(2)
	parent.Version = 3
	// Carriers of each signal regress; each signal wants a third point.
	h := genhistory.Carriers(&parent, time.Date(2026, 5, 31, 13, 0, 0, 0, time.UTC), 100,
		[][]weights.Signal{{weights.Components, weights.LayerCrossings}, {weights.Components, weights.ContractRuleHit}}, []int{8, 6})
	tasks := parseLog(t, "two.log", h.Render()).Tasks
	run := func(acks DriftAcks) *LoopResult {
		res, err := Loop(LoopInput{Tasks: tasks, Parent: parent, Origin: &origin, Suite: suite, Holdout: holdout, Config: LoopConfig{DriftAcknowledged: acks}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := run(nil)
	if first.Drift == nil {
		t.Fatalf("without an acknowledgement: outcome %s (%s); want an escalation at the drift bound", first.Outcome, first.Reason)
	}
	other := map[string]string{"layer-crossings": "contract-rule-hit", "contract-rule-hit": "layer-crossings"}[first.Drift.Knob]
	res := run(DriftAcks{first.Drift.Knob: weights.Whole(4)})
	if res.Outcome != OutcomeEscalated || res.Drift == nil || res.Drift.Knob != other || len(res.DriftHeld) != 1 {
		t.Fatalf("%s acknowledged: outcome %s (%s), drift %+v, held %d; want the escalation on %s", first.Drift.Knob, res.Outcome, res.Reason, res.Drift, len(res.DriftHeld), other)
	}
	if res := run(DriftAcks{"layer-crossings": weights.Whole(4), "contract-rule-hit": weights.Whole(4)}); res.Outcome == OutcomeEscalated || len(res.DriftHeld) != 2 {
		t.Errorf("both acknowledged: outcome %s (%s), held %d; want no page and both held", res.Outcome, res.Reason, len(res.DriftHeld))
	}
}

// Held reads the knob the drift names, at its value in the active version: a parent already past the
// bound on another knob (a hand-applied version) names that knob (the independent review's probe), an
// acknowledgement only the night's own steps reach is not the value a human read, and one of the active
// value holds whatever the night's kept steps did (they are a proposal, reviewed as any other).
func TestHeldReadsTheNamedKnobInTheActiveVersion(t *testing.T) {
	origin := refWeights(t)
	parent := origin
	parent.Signals[weights.ContractRuleHit] += weights.Whole(3)
	c := Change{Kind: weights.ChangeSignal, Signal: weights.LayerCrossings, Delta: weights.Whole(1)}
	cw := c.Apply(parent)
	d := driftOf(c, &cw, &origin)
	if d.Knob != "contract-rule-hit" {
		t.Fatalf("the drift names %s, want contract-rule-hit (the first knob past the bound)", d.Knob)
	}
	crh, lc := parent.Signals[weights.ContractRuleHit], parent.Signals[weights.LayerCrossings]
	if (DriftAcks{d.Knob: crh}).Held(d, &parent, &parent) == nil {
		t.Errorf("contract-rule-hit acknowledged at its value %s: not held", crh)
	}
	if h := (DriftAcks{d.Knob: lc}).Held(d, &parent, &parent); h != nil {
		t.Errorf("contract-rule-hit acknowledged at layer-crossings' value %s: held (%s)", lc, h.Line())
	}
	active := parent
	active.Signals[weights.ContractRuleHit] -= weights.Whole(1)
	if h := (DriftAcks{d.Knob: crh}).Held(d, &parent, &active); h != nil {
		t.Errorf("acknowledged at %s, active at %s, the night's steps at %s: held (%s)", crh, active.Signals[weights.ContractRuleHit], crh, h.Line())
	}
	// Acknowledged at the active value, the night's own kept steps do not matter: they are a proposal.
	at := active.Signals[weights.ContractRuleHit]
	h := (DriftAcks{d.Knob: at}).Held(d, &parent, &active)
	if h == nil || h.Active != at || h.From != crh {
		t.Fatalf("acknowledged at the active %s, the night's steps at %s: held %+v, want At %s From %s", at, crh, h, at, crh)
	}
	if want := "(contract-rule-hit would go from " + crh.String() + " to "; !strings.Contains(h.Line(), want) ||
		!strings.Contains(h.Line(), "leaves contract-rule-hit at "+at.String()+", its active value") {
		t.Errorf("held line %q: want the step's value and the active one", h.Line())
	}
}

func TestLoopStallsWhenNoSignalCanBeNamed(t *testing.T) {
	// greenfield and single-file fire only in the three flagged tasks: their tables are identical, the
	// window cannot tell them apart, and the loop stalls without measuring a change (before the tie rule
	// it tried greenfield +1 and single-file +1, and both broke an edge fixture).
	res := runLoop(t, 0, weights.Greenfield, weights.ExplicitBugfix, weights.SingleFile)
	if res.Outcome != OutcomeStalled {
		t.Fatalf("outcome %s (%s), want stalled", res.Outcome, res.Reason)
	}
	if len(res.Steps) != DefaultStallBound || len(res.Accepted) != 0 {
		t.Fatalf("%d steps, %d accepted; want %d steps without progress", len(res.Steps), len(res.Accepted), DefaultStallBound)
	}
	if !strings.Contains(res.Steps[0].Reason, "no proposal: indistinguishable greenfield, single-file") {
		t.Fatalf("reason %q", res.Steps[0].Reason)
	}
	if res.Final != res.Parent || res.Decision() != weights.DecisionNone {
		t.Fatal("a stalled loop without accepted steps must leave the weights unchanged")
	}
}

func TestLoopNothingToDoOnRealLogs(t *testing.T) {
	w := refWeights(t)
	suite, holdout := repoSuite(t)
	paths, err := filepath.Glob(filepath.Join(repoRoot(), "testdata", "ldd", "traces", "*.log"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("real logs: %v", err)
	}
	res, err := Loop(LoopInput{Tasks: testutil.TraceTasks(t, paths...), Parent: w, Suite: suite, Holdout: holdout})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeNothingToDo || len(res.Steps) != 0 {
		t.Fatalf("outcome %s with %d steps, want nothing-to-do", res.Outcome, len(res.Steps))
	}
}

func TestLoopWitnessCountsPointsToLeaveTheLowSide(t *testing.T) {
	w := refWeights(t)
	f := []Flagged{{Fired: []weights.Signal{weights.ExplicitBugfix, weights.Ambiguous}}} // -3: needs 1.5 to reach -1.5 > -2
	if got := witness(0.25, f, &w); got != 0.25+1.5 {
		t.Fatalf("witness %v, want 1.75", got)
	}
	w.Signals[weights.Ambiguous] += weights.Whole(2)
	if got := witness(0, f, &w); got != 0 {
		t.Fatalf("witness %v for a lifted task, want 0", got)
	}
}

// After a step resolves flagged tasks, the trigger and consistency count only the tasks still on the low
// side, but the screen's statistics stay those of the run's one family (Holm binds across every step).
func TestWithResolvedKeepsTheRunsFamily(t *testing.T) {
	w := refWeights(t)
	det := Detect(DetectInput{Tasks: loopHistory(t, &w, 0, weights.ExplicitBugfix, weights.Ambiguous), Resolver: Resolver{Active: &w}})
	if len(det.Flagged) != 3 || det.Screen[weights.Ambiguous].A != 3 {
		t.Fatalf("setup: %d flagged, ambiguous a=%d", len(det.Flagged), det.Screen[weights.Ambiguous].A)
	}
	later := det.withResolved(map[string]bool{det.Flagged[0].key(): true})
	row := later.Screen[weights.Ambiguous]
	if len(later.Flagged) != 2 || later.Triggered || row.A != 3 || row.HolmP != det.Screen[weights.Ambiguous].HolmP || !row.Consistent {
		t.Fatalf("after resolving one: %d flagged, triggered %v, ambiguous a=%d holm %v consistent %v; want 2, false, 3, unchanged, true",
			len(later.Flagged), later.Triggered, row.A, row.HolmP, row.Consistent)
	}
	if det.Screen[weights.Ambiguous].A != 3 || len(det.Flagged) != 3 {
		t.Fatal("withResolved changed the detection it was derived from")
	}
}

// A run whose first step lifts flagged tasks out of L0/L1 and whose next step finds no change the rules
// allow ends "partial" and keeps the first step (docs/decisions.md#partial-runs): ambiguous +1 lifts the
// three tasks that also carry unknown-file-territory (-5 +3 +1 = -1, L2); the other three need
// ambiguous at +4, which the holdout vetoes (its loss rises 0 → 0.25), and the bucket rule breaks a
// fixture.
func TestLoopPartialKeepsTheStepsThatLifted(t *testing.T) {
	w := refWeights(t)
	suite, holdout := repoSuite(t)
	h := genhistory.HoldoutConflict(&w)
	res, err := Loop(LoopInput{Tasks: parseLog(t, "partial.log", h.Render()).Tasks, Parent: w, Suite: suite, Holdout: holdout,
		Parity: loadParityT(t), Origin: &w})
	if err != nil {
		t.Fatal(err)
	}
	// The loss rule prefers +2 (it lifts all six); refused, its half (+1, lifting three) is kept.
	if res.Outcome != OutcomePartial || res.Refused != "" || res.Decision() != weights.DecisionHalve {
		t.Fatalf("outcome %s (%s), refused %q, decision %s; want partial, halve", res.Outcome, res.Reason, res.Refused, res.Decision())
	}
	if got := res.Final.Signals[weights.Ambiguous]; got != weights.Whole(3) || len(res.Resolved) != 3 {
		t.Fatalf("final ambiguous %s, resolved %v; want 3 and the three tasks with unknown-file-territory", got, res.Resolved)
	}
	if !strings.Contains(res.Reason, "lifted 3 flagged task(s)") || !strings.Contains(res.Reason, "for the 3 flagged task(s) still low") {
		t.Fatalf("reason %q must say what was lifted and what is left", res.Reason)
	}
	// With the history's regressions avoided credited, the parity price no longer stops ambiguous at +4
	// (docs/decisions.md#parity-price); the holdout veto does (its loss rises 0 → 0.25).
	if want := "3 flagged task(s) still on the low side; going further was refused (ambiguous +1: holdout veto: holdout loss rose 0.000 → 0.250)"; res.Partial != want {
		t.Fatalf("partial %q, want %q", res.Partial, want)
	}
	// The vetoed changes are held, one per knob: the +2 the loss rule preferred (+2 → +4), and the L1
	// edge the bucket rule tried after it (docs/decisions.md#held-by-the-holdout).
	var held []string
	for _, h := range res.Held {
		held = append(held, h.String())
	}
	want := []string{
		"ambiguous +2 (+2 → +4; holdout loss 0.000 → 0.250: holdout-L1-failing-after-change L1 → L2, holdout-L2-ambiguous L2 → L3)",
		"bucket L1 edge -1 (-2 → -3; holdout loss 0.000 → 0.125: holdout-L1-failing-after-change L1 → L2)",
	}
	if !slices.Equal(held, want) {
		t.Fatalf("held %q, want %q", held, want)
	}
	var parity bool
	for _, a := range res.Steps[1].Attempts {
		parity = parity || strings.Contains(a.Reason, "holdout veto")
	}
	if !parity {
		t.Fatalf("step 2 attempts %+v: the holdout veto must be what refuses ambiguous at +4", res.Steps[1].Attempts)
	}
	if keys := res.SupportingKeys(); len(keys) != 6 {
		t.Fatalf("supporting keys %v: every flagged task of the run goes into the ledger, lifted or not", keys)
	}
}

// The window summary counts a left-out task under one reason: a ledgered task is "already used" even
// when the active weights (usually the change it supported) lift it too; "lifted by the active weights"
// counts only tasks the ledger does not name.
func TestWindowCountsALedgeredTaskOnceAsUsed(t *testing.T) {
	w := refWeights(t)
	tasks := loopHistory(t, &w, 0, weights.ExplicitBugfix, weights.LayerCrossings)
	active := Change{Kind: weights.ChangeSignal, Signal: weights.LayerCrossings, Delta: weights.Whole(2)}.Apply(w)
	active.Version = 2
	used := map[string]string{}
	var flagged []string
	for i := range tasks {
		if strings.HasPrefix(tasks[i].Title, "quick patch") {
			flagged = append(flagged, TaskKey(&tasks[i]))
		}
	}
	if len(flagged) != 3 {
		t.Fatalf("%d flagged tasks in the history, want 3", len(flagged))
	}
	used[flagged[0]], used[flagged[1]] = "v0002", "v0002"
	det := Detect(DetectInput{Tasks: tasks, Resolver: Resolver{Active: &active, Used: used}})
	win := det.Window
	// -5 +4 = -1: all three flagged tasks are L2 under the active weights; two are in the ledger.
	if win.Used != 2 || win.ResolvedByActive != 1 || len(det.Used) != 2 {
		t.Fatalf("used %d (%d listed), lifted by the active weights %d; want 2 and 1, each task under one reason",
			win.Used, len(det.Used), win.ResolvedByActive)
	}
	if wl := win.Logs[0]; wl.Used != 2 || wl.ResolvedByActive != 1 {
		t.Fatalf("per-log counts used %d, lifted %d; want 2 and 1", wl.Used, wl.ResolvedByActive)
	}
	if win.Eligible+win.ResolvedByActive+win.Used != 12 {
		t.Fatalf("eligible %d + lifted %d + used %d: want the 12 auto L0/L1 closed tasks, each counted once",
			win.Eligible, win.ResolvedByActive, win.Used)
	}
}

// TestLoopNeverProposesARefutedRaise: the same evidence that makes the loop raise layer-crossings +2
// proposes nothing on it while that raise is refuted (the watch rolled it back as not helping).
func TestLoopNeverProposesARefutedRaise(t *testing.T) {
	w := refWeights(t)
	suite, holdout := repoSuite(t)
	tasks := loopHistory(t, &w, 0, weights.ExplicitBugfix, weights.LayerCrossings)
	res, err := Loop(LoopInput{Tasks: tasks, Parent: w, Suite: suite, Holdout: holdout,
		Refuted: []Change{{Kind: weights.ChangeSignal, Signal: weights.LayerCrossings, Delta: weights.Whole(2)}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Final.Signals[weights.LayerCrossings]; got != w.Signals[weights.LayerCrossings] || res.Decision() == weights.DecisionAccept {
		t.Fatalf("refuted raise: layer-crossings %s, decision %s (%s)", got, res.Decision(), res.Reason)
	}
	if res.Detection.Proposal != nil && res.Detection.Proposal.Signal == weights.LayerCrossings {
		t.Errorf("the detection still proposes the refuted raise: %v", res.Detection.Proposal)
	}
}
