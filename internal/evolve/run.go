package evolve

import "slices"

// RunDecision is the decision of a run of one or more steps (tune propose: one; tune evolve: the
// chain): accept when a full step was kept, halve when only half steps were; without a kept change,
// revert when something was measured (the last step may have had nothing left to try), else none.
func RunDecision(steps []*StepResult) string {
	var kept []string
	measured := false
	for _, s := range steps {
		if s.Change != nil {
			kept = append(kept, s.Decision)
		}
		measured = measured || len(s.Attempts) > 0
	}
	switch {
	case slices.Contains(kept, DecisionAccept):
		return DecisionAccept
	case len(kept) > 0:
		return DecisionHalve
	case measured:
		return DecisionRevert
	default:
		return DecisionNone
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
func (r *LoopResult) Decision() string {
	if r.Refused != "" {
		return DecisionRevert
	}
	return RunDecision(r.StepResults())
}
