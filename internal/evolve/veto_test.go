package evolve

import (
	"fmt"
	"strings"
	"testing"

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
		!strings.HasPrefix(small.Reason, "holdout veto: holdout loss rose ") || !strings.Contains(small.Reason, "more than the expected gain 1.4") {
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
