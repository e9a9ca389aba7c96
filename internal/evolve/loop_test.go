package evolve

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/tools/genhistory"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// loopHistory builds a 20-task window: three auto tasks dispatched low with the given signals, each
// closed with regression_followed=true, among fillers that carry none of those signals (half of them
// explicit bug fixes, so that explicit-bugfix is never the consistent pattern by itself).
func loopHistory(t *testing.T, w *weights.Weights, seed int, flaggedSignals ...weights.Signal) []traceparse.Task {
	t.Helper()
	return loopHistoryIn(t, fmt.Sprintf("loop-%d.log", seed), w, seed, flaggedSignals...)
}

// loopHistoryIn is loopHistory written to the log name (two logs of the same seed share every timestamp).
func loopHistoryIn(t *testing.T, name string, w *weights.Weights, seed int, flaggedSignals ...weights.Signal) []traceparse.Task {
	t.Helper()
	h := &genhistory.History{Weights: w}
	h.Start = time.Date(2026, 5, 1+seed, 9, 0, 0, 0, time.UTC)
	for i := 0; i < 20; i++ {
		var task genhistory.Task
		switch {
		case i == 2 || i == 7 || i == 11:
			task = genhistory.NewTask(w, fmt.Sprintf("quick patch %d (seed %d)", i, seed), 0.05, flaggedSignals...)
			task.RegressionFollowed = true
		case i%2 == 0:
			task = genhistory.NewTask(w, fmt.Sprintf("routine bug fix %d", i), float64(i%5)/10, weights.ExplicitBugfix)
		default:
			task = genhistory.NewTask(w, fmt.Sprintf("feature work %d", i), float64(i%7)/10, weights.CrossLayer)
		}
		h.Tasks = append(h.Tasks, task)
	}
	return parseLog(t, name, h.Render()).Tasks
}

func runLoop(t *testing.T, maxSteps int, flaggedSignals ...weights.Signal) *LoopResult {
	t.Helper()
	w := refWeights(t)
	suite, holdout := repoSuite(t)
	res, err := Loop(LoopInput{Tasks: loopHistory(t, &w, maxSteps, flaggedSignals...), Parent: w, Suite: suite, Holdout: holdout,
		Config: LoopConfig{MaxSteps: maxSteps}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestLoopConvergesInTwoAcceptedSteps(t *testing.T) {
	// explicit-bugfix -5 + ambiguous +2 = -3 (L1): one +1 on ambiguous leaves the tasks on L1's upper
	// edge, the second lifts them to L2.
	res := runLoop(t, 0, weights.ExplicitBugfix, weights.Ambiguous)
	if res.Outcome != OutcomeConverged {
		t.Fatalf("outcome %s (%s), want converged", res.Outcome, res.Reason)
	}
	if len(res.Accepted) != 2 || len(res.Steps) != 2 {
		t.Fatalf("accepted steps %v of %d, want 2 of 2", res.Accepted, len(res.Steps))
	}
	for _, s := range res.Steps {
		if s.Change == nil || s.Change.Signal != weights.Ambiguous || s.Change.Delta != weights.Whole(1) || !s.Progress {
			t.Fatalf("step %d: change %v progress %v, want ambiguous +1 with progress", s.N, s.Change, s.Progress)
		}
	}
	if got := res.Final.Signals[weights.Ambiguous]; got != weights.Whole(4) {
		t.Fatalf("final ambiguous weight %s, want +4", got)
	}
	if len(res.Resolved) != 3 {
		t.Fatalf("resolved %v, want the 3 flagged tasks", res.Resolved)
	}
	if res.Steps[0].SuiteLossAfter != 0 || res.Steps[1].SuiteLossAfter != 0 {
		t.Fatal("an accepted step turned a contract scenario red")
	}
}

// Two projects' logs can hold the same meta timestamps. Lifting the tasks of one log must not count the
// other log's tasks, still on the low side, as resolved.
func TestLoopResolvesTasksPerLogNotPerTimestamp(t *testing.T) {
	w := refWeights(t)
	suite, holdout := repoSuite(t)
	tasks := loopHistoryIn(t, "a/trace.log", &w, 3, weights.ExplicitBugfix, weights.Ambiguous)
	// -5 +2 -3 = -6: two more +1 steps on ambiguous than the first log's tasks need.
	tasks = append(tasks, loopHistoryIn(t, "b/trace.log", &w, 3, weights.ExplicitBugfix, weights.Ambiguous, weights.SingleFile)...)
	res, err := Loop(LoopInput{Tasks: tasks, Parent: w, Suite: suite, Holdout: holdout})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Detection.Flagged) != 6 {
		t.Fatalf("%d flagged tasks, want 3 per log", len(res.Detection.Flagged))
	}
	// After the second step the first log's tasks are lifted (-5 +4 = -1); the second log's are at -4.
	if len(res.Steps) < 3 || res.Steps[2].Unresolved != 3 {
		t.Fatalf("outcome %s (%s) after %d steps; the third step must still see the second log's 3 tasks",
			res.Outcome, res.Reason, len(res.Steps))
	}
	if res.Outcome != OutcomeConverged {
		return
	}
	for _, f := range res.Detection.Flagged {
		if lv := res.Final.Level(res.Final.Score(f.Fired)); lv <= weights.L1 {
			t.Fatalf("converged with %s %s still at %s", f.Source, f.MetaTimestamp, lv)
		}
	}
}

func TestLoopEscalatesAtTheStepCapKeepingAcceptedWork(t *testing.T) {
	res := runLoop(t, 1, weights.ExplicitBugfix, weights.Ambiguous)
	if res.Outcome != OutcomeEscalated {
		t.Fatalf("outcome %s (%s), want escalated", res.Outcome, res.Reason)
	}
	if len(res.Accepted) != 1 || res.Final.Signals[weights.Ambiguous] != weights.Whole(3) {
		t.Fatalf("accepted %v, final ambiguous %s: the accepted step must be kept", res.Accepted, res.Final.Signals[weights.Ambiguous])
	}
}

func TestLoopStallsWhenEveryCandidateBreaksAFixture(t *testing.T) {
	// greenfield, explicit-bugfix and single-file are pinned by edge fixtures: any raise breaks one. The
	// flagged sum (-5) is off every bucket edge, so no edge move applies either.
	res := runLoop(t, 0, weights.Greenfield, weights.ExplicitBugfix, weights.SingleFile)
	if res.Outcome != OutcomeStalled {
		t.Fatalf("outcome %s (%s), want stalled", res.Outcome, res.Reason)
	}
	if len(res.Steps) != DefaultStallBound || len(res.Accepted) != 0 {
		t.Fatalf("%d steps, %d accepted; want %d steps without progress", len(res.Steps), len(res.Accepted), DefaultStallBound)
	}
	if res.Steps[0].Tried == nil || res.Steps[1].Tried == nil || res.Steps[0].Tried.Signal == res.Steps[1].Tried.Signal {
		t.Fatal("the second step must try a different change than the reverted first one")
	}
	if res.Final != res.Parent {
		t.Fatal("a stalled loop without accepted steps must leave the weights unchanged")
	}
}

func TestLoopNothingToDoOnRealLogs(t *testing.T) {
	w := refWeights(t)
	suite, holdout := repoSuite(t)
	paths, err := filepath.Glob(filepath.Join(repoRoot(), "testdata", "ldd", "traces", "*.log"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("real logs: %v", err)
	}
	all, err := traceparse.ReadLogs(paths, 0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Loop(LoopInput{Tasks: all.Tasks, Parent: w, Suite: suite, Holdout: holdout})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeNothingToDo || len(res.Steps) != 0 {
		t.Fatalf("outcome %s with %d steps, want nothing-to-do", res.Outcome, len(res.Steps))
	}
}

func TestLoopWitnessCountsPointsToLeaveTheLowSide(t *testing.T) {
	w := refWeights(t)
	f := []Flagged{{Fired: []weights.Signal{weights.ExplicitBugfix, weights.Ambiguous}}} // -3: needs 1.5 to reach -1.5 > -2
	if got := witness(0.25, f, &w); got != 0.25+1.5 {
		t.Fatalf("witness %v, want 1.75", got)
	}
	w.Signals[weights.Ambiguous] += weights.Whole(2)
	if got := witness(0, f, &w); got != 0 {
		t.Fatalf("witness %v for a lifted task, want 0", got)
	}
}

// After a step resolves flagged tasks, the screen and the trigger count only the tasks still on the low
// side: a resolved task is no longer a flagged one anywhere.
func TestWithResolvedRescreensWithoutTheResolvedTasks(t *testing.T) {
	w := refWeights(t)
	det := Detect(DetectInput{Tasks: loopHistory(t, &w, 0, weights.ExplicitBugfix, weights.Ambiguous), Resolver: Resolver{Active: &w}})
	if len(det.Flagged) != 3 || det.Screen[weights.Ambiguous].A != 3 {
		t.Fatalf("setup: %d flagged, ambiguous a=%d", len(det.Flagged), det.Screen[weights.Ambiguous].A)
	}
	later := det.withResolved(map[string]bool{det.Flagged[0].key(): true})
	row := later.Screen[weights.Ambiguous]
	if len(later.Flagged) != 2 || later.Triggered || row.A != 2 || row.B != 1 {
		t.Fatalf("after resolving one: %d flagged, triggered %v, ambiguous a=%d b=%d; want 2, false, 2, 1",
			len(later.Flagged), later.Triggered, row.A, row.B)
	}
	if det.Screen[weights.Ambiguous].A != 3 || len(det.Flagged) != 3 {
		t.Fatal("withResolved changed the detection it was derived from")
	}
}
