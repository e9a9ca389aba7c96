package evolve

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/tools/genhistory"
	"github.com/ldd-tools/tune/internal/weights"
)

// The second review of the drift acknowledgement (a helper session with its own probes, 7 December)
// found a held stop counted as a step of the cap, and a held edge stop that dropped the step's measured
// attempts from the exclusions, so the next step measured them again
// (docs/decisions.md#a-drift-bound-a-human-has-read).

// A held stop measures nothing: the cap does not count it. With max_steps = 2 an acknowledged stop and
// nothing else to do stalls as the same run without the stop would, instead of paging for the cap.
func TestAHeldStopIsNotAStepOfTheCap(t *testing.T) {
	w := refWeights(t)
	suite, holdout := repoSuite(t)
	origin := w
	parent := Change{Kind: weights.ChangeSignal, Signal: weights.LayerCrossings, Delta: weights.Whole(2)}.Apply(w)
	parent.Version = 2
	tasks := parseLog(t, "drift.log", genhistory.LowOnOneSignal(&parent, time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)).Render()).Tasks
	res, err := Loop(LoopInput{Tasks: tasks, Parent: parent, Origin: &origin, Suite: suite, Holdout: holdout,
		Config: LoopConfig{MaxSteps: 2, DriftAcknowledged: DriftAcks{"layer-crossings": parent.Signals[weights.LayerCrossings]}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeStalled || len(res.DriftHeld) != 1 {
		t.Fatalf("max_steps 2, the stop acknowledged: outcome %s (%s), held %d; want a stall, no page", res.Outcome, res.Reason, len(res.DriftHeld))
	}
}

// A signal change measured and reverted, then the bucket rule stops on an acknowledged edge: the held
// step's attempts stay out of the run, as a refused step's do, so nothing is measured twice (the review
// saw 4 attempts where the run without the acknowledgement has 2). Unacknowledged, the page names the
// active value to write.
func TestAHeldEdgeStopIsNotMeasuredAgain(t *testing.T) {
	w, tasks, suite := revertThenBucketInput(t)
	origin := w
	origin.Buckets.Edges[weights.L1] += weights.Whole(2) // v0001's L1 edge at 0; the active one at -2
	origin.Version = 1
	parent := w
	parent.Version = 4
	attempts := func(res *LoopResult) []string {
		var all []string
		for _, s := range res.Steps {
			for _, a := range s.Attempts {
				all = append(all, fmt.Sprintf("%s:%s", a.Change, a.Decision))
			}
		}
		return all
	}
	run := func(acks DriftAcks) *LoopResult {
		res, err := Loop(LoopInput{Tasks: tasks, Parent: parent, Origin: &origin, Suite: suite, Config: LoopConfig{DriftAcknowledged: acks}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	paged := run(nil)
	if paged.Drift == nil || paged.Drift.Knob != "L1 edge" || paged.Drift.Active != weights.Whole(-2) ||
		!strings.Contains(paged.Reason, "L1 edge is -2 in the active weights (v0004): to leave it there, name it at -2") {
		t.Fatalf("unacknowledged: outcome %s (%s), drift %+v; want the page on the L1 edge naming its active -2", paged.Outcome, paged.Reason, paged.Drift)
	}
	held := run(DriftAcks{"L1 edge": weights.Whole(-2)})
	if held.Outcome != OutcomeStalled || len(held.DriftHeld) != 1 || held.DriftHeld[0].Active != weights.Whole(-2) ||
		held.DriftHeld[0].Reason != held.DriftHeld[0].Line() {
		t.Fatalf("acknowledged: outcome %s (%s), held %+v; want a stall holding the L1 edge", held.Outcome, held.Reason, held.DriftHeld)
	}
	if a, b := attempts(held), attempts(paged); !slices.Equal(a, b) {
		t.Errorf("acknowledged, the run measured %v; unacknowledged %v: a held stop's attempts were measured again", a, b)
	}
}
