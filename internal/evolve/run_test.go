package evolve

import (
	"fmt"
	"testing"

	"github.com/ldd-tools/tune/internal/weights"
)

// A run's suite loss must not contradict its attempts table: a run that kept nothing said
// "0.000 → 0.000" while its reverted attempt said "0.000 → 0.027".
func TestLossSummary(t *testing.T) {
	f := func(l float64) string { return fmt.Sprintf("%.3f", l) }
	for _, c := range []struct {
		decision      weights.Decision
		before, after float64
		tried         []float64
		want          string
	}{
		{weights.DecisionAccept, 0.1, 0.05, []float64{0.2, 0.05}, "0.100 → 0.050"},
		{weights.DecisionHalve, 0.1, 0.08, []float64{0.3, 0.08}, "0.100 → 0.080"},
		{weights.DecisionRevert, 0, 0, []float64{0.027, 0.027}, "0.000 (reverted: 0.027)"},
		{weights.DecisionRevert, 0, 0, []float64{0.027, 0.013}, "0.000 (reverted: 0.027, 0.013)"},
		{weights.DecisionNone, 0.25, 0.25, nil, "0.250"},
	} {
		if got := LossSummary(c.decision, c.before, c.after, c.tried, f); got != c.want {
			t.Errorf("LossSummary(%s, %v, %v, %v) = %q, want %q", c.decision, c.before, c.after, c.tried, got, c.want)
		}
	}
	if got := TriedLosses([]Attempt{{SuiteLossAfter: 0.5}, {SuiteLossAfter: 0.25}}); fmt.Sprint(got) != "[0.5 0.25]" {
		t.Errorf("TriedLosses = %v", got)
	}
}

func TestUniqueWarnings(t *testing.T) {
	a := Warning{Source: "a.log", Line: 3, Reason: "x"}
	b := Warning{Source: "a.log", Line: 4, Reason: "x"}
	c := Warning{Source: "a.log", Line: 3, Reason: "y"}
	got := UniqueWarnings([]Warning{a, b, a, c, b})
	if fmt.Sprint(got) != fmt.Sprint([]Warning{a, b, c}) {
		t.Errorf("UniqueWarnings = %v", got)
	}
}
