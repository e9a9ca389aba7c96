package app

import (
	"strings"
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
	change := evolve.Change{Kind: weights.ChangeSignal, Signal: weights.Greenfield, Delta: weights.Whole(1)}
	step := func(decision weights.Decision, attempts ...weights.Decision) *evolve.StepResult {
		s := &evolve.StepResult{Detection: &evolve.Detection{Screen: make([]evolve.ScreenRow, weights.NumSignals)}, Decision: decision}
		for _, d := range attempts {
			s.Attempts = append(s.Attempts, evolve.Attempt{Change: change, Decision: d})
		}
		if decision == weights.DecisionAccept || decision == weights.DecisionHalve {
			s.Change = &change
		}
		return s
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		steps []*evolve.StepResult
		want  weights.Decision
	}{
		{"reverted then nothing left", []*evolve.StepResult{step(weights.DecisionRevert, weights.DecisionRevert, weights.DecisionRevert), step(weights.DecisionNone)}, weights.DecisionRevert},
		{"nothing measured", []*evolve.StepResult{step(weights.DecisionNone), step(weights.DecisionNone)}, weights.DecisionNone},
		{"accepted then reverted", []*evolve.StepResult{step(weights.DecisionAccept, "accept"), step(weights.DecisionRevert, "revert", "revert")}, weights.DecisionAccept},
		{"half step only", []*evolve.StepResult{step(weights.DecisionHalve, "revert", "halve"), step(weights.DecisionNone)}, weights.DecisionHalve},
	} {
		if got := ProposalFromSteps(c.steps, &parent, parent, now).Decision; got != c.want {
			t.Errorf("%s: decision %q, want %q", c.name, got, c.want)
		}
	}
}

// The stored reason leads with the change the run keeps. A first step whose signal change was reverted
// and whose bucket edge was kept used to lead with the signal's rule ("greenfield is the consistent
// candidate…"), naming another knob than the one the proposal changes.
func TestProposalReasonNamesTheKeptChange(t *testing.T) {
	parent, err := weights.Load(testutil.ReferenceWeightsPath())
	if err != nil {
		t.Fatal(err)
	}
	signal := evolve.Change{Kind: weights.ChangeSignal, Signal: weights.Greenfield, Delta: weights.Whole(1)}
	edge := evolve.Change{Kind: weights.ChangeBucket, Edge: weights.Level(1), Delta: weights.Half(1)}
	step := &evolve.StepResult{
		Detection: &evolve.Detection{Screen: make([]evolve.ScreenRow, weights.NumSignals),
			Reason:  "greenfield is the consistent candidate with the highest z",
			Flagged: make([]evolve.Flagged, 3)},
		Attempts: []evolve.Attempt{{Change: signal, Decision: weights.DecisionRevert}, {Change: edge, Decision: weights.DecisionAccept}},
		Decision: weights.DecisionAccept, Change: &edge,
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	got := ProposalFromSteps([]*evolve.StepResult{step}, &parent, edge.Apply(parent), now).Reason
	want := "keeps " + edge.String() + "; 3 flagged task(s); tried greenfield +1: revert, " + edge.String() +
		": accept; first pick: greenfield is the consistent candidate with the highest z"
	if got != want {
		t.Errorf("reason\n got %q\nwant %q", got, want)
	}
	step.Decision, step.Change, step.Attempts[1].Decision = weights.DecisionRevert, nil, weights.DecisionRevert
	if got := ProposalFromSteps([]*evolve.StepResult{step}, &parent, parent, now).Reason; !strings.HasPrefix(got, "keeps no change; ") {
		t.Errorf("a run that keeps nothing: reason %q", got)
	}
}
