package evolve

import (
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/weights"
)

// The frozen holdout is a veto (docs/decisions.md#acceptance): a change that passes every other rule but
// raises the holdout loss is refused, and the holdout is not read while another rule refuses.
// Ambiguous from +3 to +4 leaves the suite and the flagged task's rules satisfied and raises the
// holdout's loss.
func TestHoldoutVetoesAChangeThatPassesEveryOtherRule(t *testing.T) {
	suite, holdout := repoSuite(t)
	w := refWeights(t)
	parent := Change{Kind: weights.ChangeSignal, Signal: weights.Ambiguous, Delta: weights.Whole(1)}.Apply(w)
	change := Change{Kind: weights.ChangeSignal, Signal: weights.Ambiguous, Delta: weights.Whole(1)}
	flagged := []Flagged{{MetaTimestamp: "2026-06-01T09:00:00Z", Title: "maybe tidy the thing", Level: "L1",
		Fired: []weights.Signal{weights.Ambiguous, weights.ExplicitBugfix}}}
	j := func(h *Suite) *judge {
		return &judge{parent: &parent, suite: suite, holdout: h, before: suite.Losses(&parent), flagged: flagged}
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
