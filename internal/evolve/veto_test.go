package evolve

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/fixtures"
	"github.com/ldd-tools/tune/internal/weights"
)

// The frozen holdout is a veto (docs/decisions.md#acceptance): a change that passes every other rule but
// raises the holdout loss is refused, and the holdout is not read while another rule refuses.
// Ambiguous from +3 to +4 leaves the suite and the flagged task's rules satisfied and raises the
// holdout's loss.
func TestHoldoutVetoesAChangeThatPassesEveryOtherRule(t *testing.T) {
	change, base := ambiguousIntoTheHoldout(t)
	holdout := base.holdout
	j := func(h *Suite) *judge {
		j := base
		j.holdout = h
		return &j
	}

	without, _ := evaluate(change, false, j(nil))
	if !without.Accepted || without.Holdout.Verdict != "not read" {
		t.Fatalf("without a holdout: accepted %v (%s), holdout %s; the change must pass every other rule",
			without.Accepted, without.Reason, without.Holdout.Verdict)
	}
	with, _ := evaluate(change, false, j(holdout))
	if with.Accepted || with.Decision != weights.DecisionRevert || with.Holdout.Verdict != "worse" ||
		!strings.HasPrefix(with.Reason, "holdout veto: holdout loss rose ") {
		t.Fatalf("with the holdout: accepted %v, decision %s, holdout %s, reason %q; want a holdout veto",
			with.Accepted, with.Decision, with.Holdout.Verdict, with.Reason)
	}
	t.Logf("vetoed: %s", with.Reason)
	// The scenarios it makes worse are named for the human who decides (docs/escalation.md).
	if got, want := strings.Join(with.Holdout.Worse, "; "), "holdout-L2-ambiguous L2 → L3"; !strings.Contains(got, want) {
		t.Fatalf("holdout worse %q, want it to name %q", got, want)
	}

	// Read last: a change another rule refuses never reads the holdout.
	refused, _ := evaluate(Change{Kind: weights.ChangeSignal, Signal: weights.Ambiguous, Delta: -weights.Whole(1)}, false, j(holdout))
	if refused.Accepted || refused.Holdout.Verdict != "not read" || refused.Holdout.Reads != 0 {
		t.Fatalf("a refused change read the holdout: %+v (%s)", refused.Holdout, refused.Reason)
	}
}

// Under HoldoutPriced (tune.toml [evolve] holdout = "priced") the loss a change adds on the holdout is
// paid like the suite's: by the history's expected gain, in the same units. A gain too small to pay is
// refused with what it would have had to pay; a large one is accepted, and the reason and the holdout's
// verdict say the holdout was paid. The veto (the default) refuses both.
func TestAPricedHoldoutIsPaidByTheHistory(t *testing.T) {
	change, base := ambiguousIntoTheHoldout(t)
	// Eligible ambiguous bug fixes at -2 under the parent, which +1 lifts to L2, at an excess of 0.8:
	// each is expected to save 2 × 0.8 − 0.2 = 1.4 in the suite's units.
	judgeWith := func(lifted int, priced bool) *judge {
		j := base
		j.holdoutPriced, j.excess, j.tasks = priced, excessEstimate{excess: 0.8}, lossTasks(lifted, true, true, weights.ExplicitBugfix, weights.Ambiguous)
		return &j
	}
	small, _ := evaluate(change, false, judgeWith(1, true))
	if small.Accepted || !small.Holdout.Priced || small.Holdout.Paid || small.Holdout.AddedLoss == 0 ||
		!strings.HasPrefix(small.Reason, "holdout loss not paid: holdout-") || !strings.Contains(small.Reason, "more than the expected gain 1.4") {
		t.Fatalf("one lifted task: accepted %v, holdout %+v, reason %q; want a refusal saying the gain 1.4 does not pay", small.Accepted, small.Holdout, small.Reason)
	}
	large, _ := evaluate(change, false, judgeWith(10, true))
	if !large.Accepted || !large.Holdout.Paid || large.Holdout.Verdict != "worse" ||
		!strings.Contains(large.Reason, fmt.Sprintf("on the holdout (%d) is paid for by the expected gain", large.Holdout.AddedLoss)) {
		t.Fatalf("ten lifted tasks: accepted %v, holdout %+v, reason %q; want the holdout paid", large.Accepted, large.Holdout, large.Reason)
	}
	vetoed, _ := evaluate(change, false, judgeWith(10, false))
	if vetoed.Accepted || vetoed.Holdout.Priced || vetoed.Holdout.Paid || !strings.HasPrefix(vetoed.Reason, "holdout veto: ") || strings.Contains(vetoed.Reason, "expected gain") {
		t.Fatalf("the veto: accepted %v, holdout %+v, reason %q; want a veto whatever the gain", vetoed.Accepted, vetoed.Holdout, vetoed.Reason)
	}
}

// ambiguousIntoTheHoldout is ambiguous +1 from +3 (v0001 with ambiguous +1) and the judge of it against
// the repository's suite and holdout, with one flagged ambiguous bug fix: it passes every rule but the
// holdout's, whose loss it raises.
func ambiguousIntoTheHoldout(t *testing.T) (Change, judge) {
	suite, holdout := repoSuite(t)
	w := refWeights(t)
	change := Change{Kind: weights.ChangeSignal, Signal: weights.Ambiguous, Delta: weights.Whole(1)}
	parent := change.Apply(w)
	flagged := []Flagged{{MetaTimestamp: "2026-06-01T09:00:00Z", Title: "maybe tidy the thing", Level: "L1",
		Fired: []weights.Signal{weights.Ambiguous, weights.ExplicitBugfix}}}
	return change, judge{parent: &parent, suite: suite, holdout: holdout, before: suite.Losses(&parent), flagged: flagged}
}

// A priced holdout is decided as the suite is: every scenario the change makes worse adds its loss,
// whatever the total does. Here one prompt is a scenario twice, accepting L2 and accepting L3:
// ambiguous +1 makes the first worse and the second better, so the holdout's loss does not rise. The
// veto lets it through; priced, with no history to pay, it is refused. And the leave-one-out folds pay
// the holdout's loss with the suite's: a suite scenario whose loss tips the payment flips its fold.
func TestAPricedHoldoutChargesEveryScenarioMadeWorse(t *testing.T) {
	change, base := ambiguousIntoTheHoldout(t)
	var l2 fixtures.Scenario
	for _, sc := range base.holdout.Scenarios {
		if sc.Name == "holdout-L2-ambiguous" {
			l2 = sc
		}
	}
	l3 := l2
	l3.Name, l3.Levels = "the same prompt, accepting L3", []weights.Level{weights.L3}
	mixed := PrepareSuite([]fixtures.Scenario{l2, l3})
	j := base
	j.holdout = mixed
	vetoed, _ := evaluate(change, false, &j)
	if !vetoed.Accepted || vetoed.Holdout.Verdict == "worse" {
		t.Fatalf("the veto: accepted %v, holdout %+v (%s); want accepted, the holdout's loss does not rise", vetoed.Accepted, vetoed.Holdout, vetoed.Reason)
	}
	j.holdoutPriced = true
	priced, _ := evaluate(change, false, &j)
	if priced.Accepted || priced.Holdout.AddedLoss != 1 || !strings.HasPrefix(priced.Reason, "holdout loss not paid: holdout-L2-ambiguous L2 → L3") {
		t.Fatalf("priced: accepted %v, holdout %+v (%s); want a refusal for the scenario made worse", priced.Accepted, priced.Holdout, priced.Reason)
	}

	// Leave-one-out: the same L2 scenario in the suite too adds 1 there; with the holdout's 1, a gain of
	// 1.4 (one lifted task at excess 0.8) does not pay 2, but pays 1 once the suite's copy is left out.
	inSuite := l2
	inSuite.Name = "a suite copy of holdout-L2-ambiguous"
	suite := PrepareSuite(append(slices.Clone(base.suite.Scenarios), inSuite))
	j.suite, j.before, j.holdout = suite, suite.Losses(j.parent), PrepareSuite([]fixtures.Scenario{l2})
	j.excess, j.tasks = excessEstimate{excess: 0.8}, lossTasks(1, true, true, weights.ExplicitBugfix, weights.Ambiguous)
	a, _ := evaluate(change, false, &j)
	if a.Accepted || a.AddedLoss != 1 || a.Holdout.AddedLoss != 1 || !slices.Equal(a.LOO.Flips, []string{inSuite.Name}) {
		t.Fatalf("accepted %v, suite added %d, holdout added %d, LOO flips %v (%s); want a refusal that leaving out %q flips",
			a.Accepted, a.AddedLoss, a.Holdout.AddedLoss, a.LOO.Flips, a.Reason, inSuite.Name)
	}
}

// Every kept change a priced holdout was paid for is named, each from its own step's parent, even two
// steps on the same knob; a vetoed change is held once per knob.
func TestHoldoutPaidNamesEveryKeptChange(t *testing.T) {
	w := refWeights(t)
	one := Change{Kind: weights.ChangeSignal, Signal: weights.Ambiguous, Delta: weights.Whole(1)}
	before, after := Num(0), Num(0.125)
	paid := Attempt{Change: one, Accepted: true, Holdout: Holdout{Verdict: "worse", LossBefore: &before, LossAfter: &after, Priced: true, Paid: true}}
	vetoed := Attempt{Change: one, Holdout: Holdout{Verdict: "worse", LossBefore: &before, LossAfter: &after}}
	steps := []*StepResult{{Attempts: []Attempt{paid}, Change: &one}, {Attempts: []Attempt{paid}, Change: &one}}
	got := HoldoutPaidBy(w, steps)
	if len(got) != 2 || got[0].From != weights.Whole(2) || got[1].From != weights.Whole(3) || got[1].To != weights.Whole(4) {
		t.Fatalf("holdout paid %v: want both ambiguous +1 steps, +2 → +3 and +3 → +4", got)
	}
	if held := HeldBy(w, []*StepResult{{Attempts: []Attempt{vetoed, vetoed}}}); len(held) != 1 {
		t.Fatalf("held %v: want the vetoed knob once", held)
	}
}
