package app

import (
	"testing"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/weights"
)

// TestEvolveStepJSON: a step's --json shape names its change flat (kind, signal or edge, delta in
// points): the kept change, else the first tried, and a null delta when nothing was tried. Reasons keep
// their "<" and ">" (the evolve documents are written without HTML escaping).
func TestEvolveStepJSON(t *testing.T) {
	bucket := &evolve.Change{Kind: weights.ChangeBucket, Edge: weights.L1, Delta: -weights.Whole(1)}
	signal := &evolve.Change{Kind: weights.ChangeSignal, Signal: weights.Signals()[0], Delta: weights.Half(1)}
	step := func(res evolve.StepResult, reason string) EvolveStep {
		res.Detection = &evolve.Detection{Reason: reason}
		return EvolveStep{evolve.LoopStep{N: 2, StepResult: &res, Unresolved: 3, WitnessBefore: 1.5, WitnessAfter: 1, Progress: true}}
	}
	for _, c := range []struct {
		name string
		step EvolveStep
		want string
	}{
		{"kept bucket", step(evolve.StepResult{Decision: weights.DecisionAccept, Change: bucket, Tried: signal, SuiteLossBefore: 0.5, SuiteLossAfter: 0.25, Lifted: []string{"t1"}}, ""),
			`{"n":2,"decision":"accept","kind":"bucket","edge":"L1","delta":-1,"suite_loss_before":0.5,"suite_loss_after":0.25,"witness_before":1.5,"witness_after":1,"progress":true,"unresolved":3,"lifted":["t1"],"attempts":null,"reason":""}`},
		{"tried signal", step(evolve.StepResult{Decision: weights.DecisionRevert, Tried: signal}, "loss 3 -> 4 > budget"),
			`{"n":2,"decision":"revert","kind":"signal","signal":"` + weights.Signals()[0].String() + `","delta":0.5,"suite_loss_before":0,"suite_loss_after":0,"witness_before":1.5,"witness_after":1,"progress":true,"unresolved":3,"lifted":null,"attempts":null,"reason":"loss 3 -> 4 > budget"}`},
		{"nothing tried", step(evolve.StepResult{Decision: weights.DecisionNone}, ""),
			`{"n":2,"decision":"none","delta":null,"suite_loss_before":0,"suite_loss_after":0,"witness_before":1.5,"witness_after":1,"progress":true,"unresolved":3,"lifted":null,"attempts":null,"reason":""}`},
	} {
		got, err := c.step.MarshalJSON()
		if err != nil || string(got) != c.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", c.name, got, err, c.want)
		}
	}
}
