package app

import (
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/weights"
)

// The run's decision comes from every step: a loop whose first step was measured and reverted and whose
// last step had nothing left to try reverted a change; "none" would claim nothing was replayed.
func TestProposalFromStepsDecision(t *testing.T) {
	parent, err := weights.Load(testutil.ReferenceWeightsPath())
	if err != nil {
		t.Fatal(err)
	}
	change := evolve.Change{Kind: evolve.ChangeSignal, Signal: weights.Greenfield, Delta: weights.Whole(1)}
	step := func(decision string, attempts ...string) *evolve.StepResult {
		s := &evolve.StepResult{Detection: &evolve.Detection{Screen: make([]evolve.ScreenRow, weights.NumSignals)}, Decision: decision}
		for _, d := range attempts {
			s.Attempts = append(s.Attempts, evolve.Attempt{Change: change, Decision: d})
		}
		if decision == evolve.DecisionAccept || decision == evolve.DecisionHalve {
			s.Change = &change
		}
		return s
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		steps []*evolve.StepResult
		want  string
	}{
		{"reverted then nothing left", []*evolve.StepResult{step(evolve.DecisionRevert, "revert", "revert"), step(evolve.DecisionNone)}, evolve.DecisionRevert},
		{"nothing measured", []*evolve.StepResult{step(evolve.DecisionNone), step(evolve.DecisionNone)}, evolve.DecisionNone},
		{"accepted then reverted", []*evolve.StepResult{step(evolve.DecisionAccept, "accept"), step(evolve.DecisionRevert, "revert", "revert")}, evolve.DecisionAccept},
		{"half step only", []*evolve.StepResult{step(evolve.DecisionHalve, "revert", "halve"), step(evolve.DecisionNone)}, evolve.DecisionHalve},
	} {
		if got := ProposalFromSteps(c.steps, &parent, parent, now).Decision; got != c.want {
			t.Errorf("%s: decision %q, want %q", c.name, got, c.want)
		}
	}
}
