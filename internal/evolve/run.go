package evolve

import (
	"slices"
	"strings"

	"github.com/ldd-tools/tune/internal/weights"
)

// RunDecision is the decision of a run of one or more steps (tune propose: one; tune evolve: the
// chain): accept when a full step was kept, halve when only half steps were; without a kept change,
// revert when something was measured (the last step may have had nothing left to try), else none.
func RunDecision(steps []*StepResult) weights.Decision {
	var kept []weights.Decision
	measured := false
	for _, s := range steps {
		if s.Change != nil {
			kept = append(kept, s.Decision)
		}
		measured = measured || len(s.Attempts) > 0
	}
	switch {
	case slices.Contains(kept, weights.DecisionAccept):
		return weights.DecisionAccept
	case len(kept) > 0:
		return weights.DecisionHalve
	case measured:
		return weights.DecisionRevert
	default:
		return weights.DecisionNone
	}
}

// StepResults are the loop's steps as step results, in order.
func (r *LoopResult) StepResults() []*StepResult {
	out := make([]*StepResult, len(r.Steps))
	for i := range r.Steps {
		out[i] = r.Steps[i].StepResult
	}
	return out
}

// Decision is the run's decision over every step (see RunDecision); a refused run (stalled, or its kept
// steps lifted no flagged task out of L0/L1) is a revert: it keeps nothing
// (docs/decisions.md#acceptance).
func (r *LoopResult) Decision() weights.Decision {
	if r.Refused != "" {
		return weights.DecisionRevert
	}
	return RunDecision(r.StepResults())
}

// LossSummary phrases the suite loss of a step or a run next to its attempts
// (docs/decisions.md#suite-loss-of-a-run). A run's before → after is the parent against the candidate it
// keeps, so a run that keeps nothing went "0.000 → 0.000" while its attempts table said "0.000 → 0.027".
// With a kept change it is "before → after"; with only reverted attempts it is the parent's loss, which
// stands, and what the reverted attempts measured ("0.000 (reverted: 0.027)"); with nothing measured it
// is the parent's loss alone. format prints one loss.
func LossSummary(decision weights.Decision, before, after float64, tried []float64, format func(float64) string) string {
	if decision.Applicable() {
		return format(before) + " → " + format(after)
	}
	var seen []string
	for _, l := range tried {
		if s := format(l); !slices.Contains(seen, s) {
			seen = append(seen, s)
		}
	}
	if len(seen) == 0 {
		return format(before)
	}
	return format(before) + " (reverted: " + strings.Join(seen, ", ") + ")"
}

// TriedLosses are the suite losses the attempts measured, in order.
func TriedLosses(attempts []Attempt) []float64 {
	out := make([]float64, len(attempts))
	for i, a := range attempts {
		out[i] = float64(a.SuiteLossAfter)
	}
	return out
}
