package evolve

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/tools/genhistory"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// settleTasks is 30 routine fixes (explicit-bugfix, ambiguous: L1) an hour apart from
// 2026-09-01T00:00Z; tasks 2 and 25 regressed.
func settleTasks(t *testing.T, w *weights.Weights) ([]genhistory.Task, time.Time) {
	t.Helper()
	start := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	var tasks []genhistory.Task
	for i := 0; i < 30; i++ {
		task := genhistory.NewTask(w, fmt.Sprintf("routine fix %d", i), 0.05, weights.ExplicitBugfix, weights.Ambiguous)
		task.RegressionFollowed = i == 2 || i == 25
		tasks = append(tasks, task)
	}
	return tasks, start
}

// A task counts once settled (docs/decisions.md#settling): Horizon later labelled tasks, or its log
// quiet for SettleAfter by the clock; without a clock every log is a finished history.
func TestSettlingByHorizonAndClock(t *testing.T) {
	w := refWeights(t)
	tasks, start := settleTasks(t, &w)
	h := &genhistory.History{Weights: &w, Start: start, Step: time.Hour, Tasks: tasks}
	parsed := parseLog(t, "settle.log", h.Render()).Tasks
	last := start.Add(29 * time.Hour)
	detect := func(now time.Time) *Detection {
		return Detect(DetectInput{Tasks: parsed, Now: now, Resolver: Resolver{Active: &w}})
	}
	// An hour after the last task: task 2 has 27 later tasks (settled), task 25 has 4 (pending).
	d := detect(last.Add(time.Hour))
	if d.Accumulated.Flagged != 1 {
		t.Fatalf("an hour after: %+v, want 1 flagged counted", d.Accumulated)
	}
	if d.Accumulated.Pending != Horizon || d.Accumulated.Eligible != 30-Horizon {
		t.Errorf("an hour after: eligible %d pending %d, want %d and %d", d.Accumulated.Eligible, d.Accumulated.Pending, 30-Horizon, Horizon)
	}
	for _, f := range d.Flagged {
		if f.Title == "routine fix 25" && (f.Counted || !f.InWindow) {
			t.Errorf("task 25 is in the window and not settled: %+v", f)
		}
	}
	// A quiet week later, and without a clock: everything is settled.
	for _, now := range []time.Time{last.Add(SettleAfter), {}} {
		if d := detect(now); d.Accumulated.Flagged != 2 || d.Accumulated.Pending != 0 || d.Accumulated.Eligible != 30 {
			t.Errorf("now %v: %+v, want all 30 settled and both regressions counted", now, d.Accumulated)
		}
	}
}

// After an apply the evidence up to its evidence_through is spent (docs/decisions.md#spent-evidence):
// the tables start after it, and what it counted through is what the next proposal records.
func TestEvidenceWatermarkLeavesSpentTasksOut(t *testing.T) {
	w := refWeights(t)
	tasks, start := settleTasks(t, &w)
	h := &genhistory.History{Weights: &w, Start: start, Step: time.Hour, Tasks: tasks}
	parsed := parseLog(t, "settle.log", h.Render()).Tasks
	d := Detect(DetectInput{Tasks: parsed, EvidenceAfter: start.Add(9 * time.Hour), Resolver: Resolver{Active: &w}})
	if d.Accumulated.BeforeWatermark != 10 || d.Accumulated.Eligible != 20 || d.Accumulated.Flagged != 1 {
		t.Fatalf("%+v: want the first 10 tasks spent (the regression of task 2 with them), 20 counted", d.Accumulated)
	}
	if want := start.Add(29 * time.Hour).Format(time.RFC3339Nano); d.Accumulated.Through != want {
		t.Errorf("through %q, want the last counted task %q", d.Accumulated.Through, want)
	}
}

// What a night counted, the nights after it count the same (docs/decisions.md#settling): a night that
// finds a log quiet for SettleAfter (a week) settles its tasks, and a quiet week before the next task ends their
// horizon, so a regression_of= written after it does not flag one of them — the fifth review's case,
// where the table went 5/0 → 0/0 → 5/1 settled/flagged.
func TestAQuietDayEndsTheHorizon(t *testing.T) {
	w := refWeights(t)
	start := time.Date(2026, 9, 1, 8, 0, 0, 0, time.UTC)
	day := &genhistory.History{Weights: &w, Start: start, Step: time.Hour}
	for i := 0; i < 5; i++ {
		task := genhistory.NewTask(&w, fmt.Sprintf("routine fix %d", i), 0.05, weights.ExplicitBugfix, weights.Ambiguous)
		day.Tasks = append(day.Tasks, task)
	}
	last := start.Add(4 * time.Hour)
	for _, gap := range []time.Duration{SettleAfter + 2*time.Hour, SettleAfter, SettleAfter - time.Minute} {
		next := &genhistory.History{Weights: &w, Start: last.Add(gap), Step: time.Hour,
			Tasks: []genhistory.Task{genhistory.NewTask(&w, "follow-up fix", 0.05, weights.ExplicitBugfix, weights.Ambiguous)}}
		// The follow-up names the day's third task as the one it repairs.
		follow := strings.Replace(string(next.Render()), "  loops=inner", "  loops=inner  regression_of="+day.MetaTimestamp(2), 1)
		before := parseLog(t, "quiet.log", day.Render()).Tasks
		after := parseLog(t, "quiet.log", append(day.Render(), follow...)).Tasks
		detect := func(tasks []traceparse.Task, now time.Time) Accumulated {
			return Detect(DetectInput{Tasks: tasks, Now: now, Resolver: Resolver{Active: &w}}).Accumulated
		}
		first := last.Add(SettleAfter) // the night before the follow-up: a quiet week after the day's last task …
		if gap < SettleAfter {
			first = last.Add(gap - time.Minute) // … or, when the follow-up comes within the day, before it
		}
		nights := []Accumulated{detect(before, first), detect(after, last.Add(gap+2*time.Hour)), detect(after, last.Add(gap+SettleAfter))}
		got := make([]string, len(nights))
		for i, a := range nights {
			got[i] = fmt.Sprintf("%d/%d", a.Eligible, a.Flagged)
		}
		want := []string{"5/0", "5/0", "6/0"} // the follow-up settles a day after it, unflagged
		if gap < SettleAfter {
			// Within the day the follow-up is in the third task's horizon: pending, then flagged.
			want = []string{"0/0", "0/0", "6/1"}
		}
		if !slices.Equal(got, want) {
			t.Errorf("follow-up %v after the day: nights counted %v eligible/flagged, want %v", gap, got, want)
		}
	}
}

// A run of failures in one busy module keeps the same-area claims open: they alternate from the log's
// last task (a nearer earlier task takes the witnesses first). A claim still open ClaimWait tasks after
// its horizon is decided by the log read so far, so the detection holds a bounded part of such a run
// (before, all of it: its memory grew with the run and its time with the run's square — 40,000 such
// tasks took 54 s, now 2 s), and what it counted stays counted night after night
// (TestReview6BusyModuleClaims).
func TestABusyModuleDoesNotHoldTheLog(t *testing.T) {
	w := refWeights(t)
	const n = 1000
	res := parseLog(t, "busy.log", failingRun(n))
	now := res.Tasks[n-1].MetaTime.Add(time.Hour)
	det := Detect(DetectInput{Tasks: res.Tasks, Now: now, Resolver: Resolver{Active: &w}})
	st := det.States()
	// Held: the last horizon, the claims still open, the placebo's past and the window.
	// The last horizon, ClaimWait (one horizon) of open claims, the held context: not the run.
	if held := n - st[0].Labelled; len(st) != 1 || held > 2*Horizon+heldContext+2 {
		t.Fatalf("%d of %d tasks held after a run of failures in one module (states %d)", held, n, len(st))
	}
	if acc := det.Accumulated; acc.Eligible+acc.Pending != n || acc.Flagged < n-Horizon-ClaimWait-1 {
		t.Errorf("accumulated %+v: want every task counted or pending, and the failures flagged", acc)
	}
	// A night taken up from an earlier night's state decides as the whole log, claims decided by the
	// bound included.
	for _, cut := range []int{100, 333, 777} {
		first := Detect(DetectInput{Tasks: res.Tasks[:cut], Now: now, Resolver: Resolver{Active: &w}}).States()[0]
		var rest []traceparse.Task
		for _, tk := range res.Tasks {
			if tk.Offset >= first.Offset {
				rest = append(rest, tk)
			}
		}
		got := Detect(DetectInput{Tasks: rest, Now: now, Resolver: Resolver{Active: &w}, Resume: map[string]*LogState{first.Source: first}})
		if !reflect.DeepEqual(got.screenTasks, det.screenTasks) || got.Accumulated != det.Accumulated || !reflect.DeepEqual(got.Flagged, det.Flagged) {
			t.Errorf("cut %d: the detection taken up from the state differs from the whole log's: %+v, want %+v", cut, got.Accumulated, det.Accumulated)
		}
	}
}

// failingRun is a log of n eligible fixes ten minutes apart, every one failed in the same file.
func failingRun(n int) []byte {
	var log strings.Builder
	start := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		ts := func(sec int) string {
			return start.Add(time.Duration(i)*10*time.Minute + time.Duration(sec)*time.Second).Format("2006-01-02T15:04:05.000000Z")
		}
		fmt.Fprintf(&log, "%s  meta  L1/diagnostic  dispatch=auto  signals=explicit-bugfix:-5  task=\"fix %d\"  loops=inner\n", ts(0), i)
		fmt.Fprintf(&log, "%s  inner  k=1  skill=s  action=a  loss=0.500  files=src/a.go\n", ts(1))
		fmt.Fprintf(&log, "%s  inner  close  terminal=failed  loss_final=0.500\n", ts(2))
	}
	return []byte(log.String())
}
