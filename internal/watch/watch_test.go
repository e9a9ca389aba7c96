package watch

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

var (
	parentFrom = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	applied    = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
)

// versions are the store's v0001 and a v0002 that raised contract-rule-hit by 1.
func versions(t testing.TB) (parent, v *weights.Weights) {
	t.Helper()
	data, err := os.ReadFile("../../weights/v0001.toml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := weights.Parse("v0001.toml", data)
	if err != nil {
		t.Fatal(err)
	}
	c := p
	c.Version, c.Parent = 2, 1
	c.Signals[weights.ContractRuleHit] += weights.Whole(1)
	return &p, &c
}

// spec is one synthetic task.
type spec struct {
	level     string
	signals   string
	k         int
	terminal  string
	lossFinal string
	regressed bool
}

// lifted: contract-rule-hit +2, explicit-bugfix −5, unknown-file-territory +1 sums to −2 (L1) under
// v0001 and to −1 (L2) once contract-rule-hit weighs 3.
const liftedSignals = "contract-rule-hit:+2,explicit-bugfix:-5,unknown-file-territory:+1"

func many(n int, s spec) []spec {
	out := make([]spec, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// history writes a trace log: the before tasks one hour apart from parentFrom, the after tasks one
// hour apart from applied, and parses it.
func history(t *testing.T, before, after []spec) []traceparse.Task {
	t.Helper()
	var b strings.Builder
	write := func(start time.Time, ss []spec, tag string) {
		for i, s := range ss {
			at := start.Add(time.Duration(i) * time.Hour)
			ts := func(sec int) string { return at.Add(time.Duration(sec) * time.Second).Format(time.RFC3339) }
			names := map[string]string{"L0": "reflex", "L1": "diagnostic", "L2": "deliberate", "L3": "structural", "L4": "method"}
			fmt.Fprintf(&b, "%s  meta  %s/%s  dispatch=auto  signals=%s  task=\"%s task %d\"  loops=inner\n", ts(0), s.level, names[s.level], s.signals, tag, i)
			fmt.Fprintf(&b, "%s  inner  baseline  loss=0.800\n", ts(1))
			for k := 1; k <= s.k; k++ {
				fmt.Fprintf(&b, "%s  inner  k=%d  skill=s  action=a  loss=0.%d00\n", ts(1+k), k, 9-k)
			}
			close := fmt.Sprintf("%s  inner  close  terminal=%s", ts(30), s.terminal)
			if s.lossFinal != "" {
				close += "  loss_final=" + s.lossFinal
			}
			if s.regressed {
				close += "  regression_followed=true"
			}
			fmt.Fprintln(&b, close)
		}
	}
	write(parentFrom, before, "before")
	write(applied, after, "after")
	res, err := traceparse.Parse(strings.NewReader(b.String()), "trace.log")
	if err != nil {
		t.Fatal(err)
	}
	return res.Tasks
}

func judge(t *testing.T, before, after []spec) *Result {
	t.Helper()
	p, v := versions(t)
	return Judge(Input{Tasks: history(t, before, after), Version: Version{v, applied}, Parent: Version{p, parentFrom},
		Changes: []string{"contract-rule-hit +1"}, Changed: []weights.Signal{weights.ContractRuleHit}})
}

// The flagged pattern before the change: 20 tasks at L1 carrying the signal, 6 of them regressed.
func flaggedBefore() []spec {
	ok := spec{level: "L1", signals: liftedSignals, k: 2, terminal: "complete", lossFinal: "0.100"}
	bad := ok
	bad.regressed = true
	return append(many(14, ok), many(6, bad)...)
}

func TestHolding(t *testing.T) {
	fixed := spec{level: "L2", signals: liftedSignals, k: 2, terminal: "complete", lossFinal: "0.050"}
	r := judge(t, flaggedBefore(), many(20, fixed))
	if r.Verdict != Holding || r.Proposes() {
		t.Fatalf("verdict %q (%s), want holding", r.Verdict, r.Reason)
	}
	if r.Lifted != 20 || r.LiftedRegressed != 0 || r.TasksBefore != 20 || r.TasksAfter != 20 {
		t.Errorf("lifted %d regressed %d, tasks %d → %d", r.Lifted, r.LiftedRegressed, r.TasksBefore, r.TasksAfter)
	}
}

func TestNotHelping(t *testing.T) {
	lifted := spec{level: "L2", signals: liftedSignals, k: 2, terminal: "complete", lossFinal: "0.050"}
	still := lifted
	still.regressed = true
	r := judge(t, flaggedBefore(), append(many(13, lifted), many(7, still)...))
	if r.Verdict != NotHelping || !r.Proposes() {
		t.Fatalf("verdict %q (%s), want not helping", r.Verdict, r.Reason)
	}
	if r.LiftedRegressed != 7 || len(r.Evidence) != 7 || !strings.Contains(r.Evidence[0].Note, "lifted L1 → L2") {
		t.Errorf("lifted regressed %d, evidence %+v", r.LiftedRegressed, r.Evidence)
	}
	// Fewer lifted regressions than before (5/20 < 6/20) is not enough to call it not helping.
	r = judge(t, flaggedBefore(), append(many(15, lifted), many(5, still)...))
	if r.Verdict != Holding {
		t.Errorf("5 of 20 lifted regressed (before 6 of 20): verdict %q, want holding", r.Verdict)
	}
}

func TestHarmfulOverkill(t *testing.T) {
	fixed := spec{level: "L2", signals: liftedSignals, k: 2, terminal: "complete", lossFinal: "0.050"}
	over := spec{level: "L3", signals: "contract-rule-hit:+2,cross-layer:+2", k: 1, terminal: "complete", lossFinal: "0.000"}
	r := judge(t, flaggedBefore(), append(many(12, fixed), many(8, over)...))
	if r.Verdict != Harmful || !r.Proposes() {
		t.Fatalf("verdict %q (%s), want harmful", r.Verdict, r.Reason)
	}
	if r.Overkill.After.K != 8 || r.Overkill.Before.K != 0 || r.Overkill.P > 0.05 || len(r.Evidence) != 8 || !strings.Contains(r.Reason, "overkill rose") {
		t.Errorf("overkill %+v, evidence %d, reason %s", r.Overkill, len(r.Evidence), r.Reason)
	}
	// A rise within the bound is not harmful.
	r = judge(t, flaggedBefore(), append(many(19, fixed), many(1, over)...))
	if r.Verdict == Harmful {
		t.Errorf("overkill 0 → 1/20 (bound 10 points): verdict harmful")
	}
}

func TestHarmfulRegressions(t *testing.T) {
	clean := spec{level: "L1", signals: "contract-rule-hit:+2,explicit-bugfix:-5", k: 2, terminal: "complete", lossFinal: "0.100"}
	bad := clean
	bad.regressed = true
	r := judge(t, many(20, clean), append(many(12, clean), many(8, bad)...))
	if r.Verdict != Harmful || !strings.Contains(r.Reason, "low-side regressions") || r.Regressions.After.K != 8 {
		t.Fatalf("verdict %q (%s) regressions %+v, want harmful", r.Verdict, r.Reason, r.Regressions)
	}
}

func TestTooEarly(t *testing.T) {
	fixed := spec{level: "L2", signals: liftedSignals, k: 2, terminal: "complete", lossFinal: "0.050"}
	r := judge(t, flaggedBefore(), many(7, fixed))
	if r.Verdict != TooEarly || r.NeedMore != 13 || r.Proposes() || !strings.Contains(r.Reason, "13 more") {
		t.Fatalf("verdict %q need %d (%s), want too early with 13 more", r.Verdict, r.NeedMore, r.Reason)
	}
	// An open task does not count.
	open := history(t, flaggedBefore(), many(20, fixed))
	for i := range open {
		open[i].Closed = false
	}
	p, v := versions(t)
	if r := Judge(Input{Tasks: open, Version: Version{v, applied}, Parent: Version{p, parentFrom}}); r.Verdict != TooEarly || r.NeedMore != 20 {
		t.Errorf("open tasks: verdict %q need %d", r.Verdict, r.NeedMore)
	}
}

// TestAttribution: weights= on the meta line wins over the meta time; a version that is no longer
// active stops at Until.
func TestAttribution(t *testing.T) {
	fixed := spec{level: "L2", signals: liftedSignals, k: 2, terminal: "complete", lossFinal: "0.050"}
	tasks := history(t, flaggedBefore(), many(20, fixed))
	tasks[0].WeightsVersion = "v0002" // a before-time task that says it ran under v0002
	tasks[21].WeightsVersion = "v0009"
	p, v := versions(t)
	r := Judge(Input{Tasks: tasks, Version: Version{v, applied}, Parent: Version{p, parentFrom}, Until: applied.Add(10 * time.Hour)})
	if r.TasksBefore != 19 || r.TasksAfter != 1+9 {
		t.Errorf("tasks %d → %d, want 19 → 10", r.TasksBefore, r.TasksAfter)
	}
}

func TestConfig(t *testing.T) {
	if c := (Config{MinTasks: 5}).WithDefaults(); c.MinTasks != 5 || c.OverkillBound != 0.10 || c.MinRecurrences != 2 || c.Alpha != 0.05 {
		t.Errorf("WithDefaults: %+v", c)
	}
	for _, bad := range []Config{{MinTasks: -1}, {OverkillBound: 1.5}, {Alpha: 1}, {MinRecurrences: -2}} {
		if bad.Check() == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestRegressionOf: a later task's regression_of= marks the task it names (in the same log only).
func TestRegressionOf(t *testing.T) {
	clean := spec{level: "L1", signals: "contract-rule-hit:+2,explicit-bugfix:-5", k: 2, terminal: "complete", lossFinal: "0.100"}
	fixed := spec{level: "L2", signals: liftedSignals, k: 2, terminal: "complete", lossFinal: "0.050"}
	tasks := history(t, many(20, clean), many(20, fixed))
	tasks[25].RegressionOf = tasks[3].MetaTimestamp // names before-task 3
	tasks[26].RegressionOf = tasks[4].MetaTimestamp
	other := tasks[27]
	other.Source, other.RegressionOf = "other.log", tasks[5].MetaTimestamp // another log: no effect
	tasks = append(tasks, other)
	p, v := versions(t)
	r := Judge(Input{Tasks: tasks, Version: Version{v, applied}, Parent: Version{p, parentFrom}, Changed: []weights.Signal{weights.ContractRuleHit}})
	if r.Regressions.Before.K != 2 || r.Regressions.Before.N != 20 {
		t.Errorf("low-side regressions before %+v, want 2 of 20", r.Regressions.Before)
	}
}

// TestBuilderKeepsOnlyWhatAVerdictNeeds: tasks are counted as they are added; the builder keeps a
// task only while a later regression_of= can still change the verdict (concerned low-side, lifted,
// overkill after), holds no reference to the caller's task, and judges as Judge does on the slice.
func TestBuilderKeepsOnlyWhatAVerdictNeeds(t *testing.T) {
	lifted := spec{level: "L2", signals: liftedSignals, k: 2, terminal: "complete", lossFinal: "0.050"}
	still := lifted
	still.regressed = true
	other := spec{level: "L2", signals: "greenfield:+3", k: 2, terminal: "complete", lossFinal: "0.050"}
	over := spec{level: "L3", signals: "greenfield:+3", k: 1, terminal: "complete", lossFinal: "0.000"}
	after := append(append(append(many(13, lifted), many(7, still)...), many(200, other)...), over)
	tasks := history(t, flaggedBefore(), after)
	p, v := versions(t)
	in := Input{Version: Version{v, applied}, Parent: Version{p, parentFrom}, Changes: []string{"contract-rule-hit +1"}, Changed: []weights.Signal{weights.ContractRuleHit}}
	want := Judge(Input{Tasks: tasks, Version: in.Version, Parent: in.Parent, Changes: in.Changes, Changed: in.Changed})

	b := NewBuilder(in)
	for i := range tasks {
		task := tasks[i] // a copy the reader would reuse: scribble over it after Add
		b.Add(&task)
		task.Title, task.MetaTimestamp, task.Source, task.Level = "x", "x", "x", "x"
	}
	// 20 concerned low-side tasks before, 20 lifted after, 1 overkill after; not the 200 others.
	if len(b.kept) != 41 {
		t.Errorf("kept %d tasks of %d, want 41", len(b.kept), len(tasks))
	}
	got := b.Result()
	if fmt.Sprint(got) != fmt.Sprint(want) || got.Verdict != NotHelping || got.Evidence[0].Task != "after task 13" {
		t.Errorf("streamed:\n%+v\nwant\n%+v", got, want)
	}
}

// TestRegressionOfBeforeItsTask: a regression_of= line that comes before the task it names (logs
// concatenated out of order) still marks it.
func TestRegressionOfBeforeItsTask(t *testing.T) {
	clean := spec{level: "L1", signals: "contract-rule-hit:+2,explicit-bugfix:-5", k: 2, terminal: "complete", lossFinal: "0.100"}
	fixed := spec{level: "L2", signals: liftedSignals, k: 2, terminal: "complete", lossFinal: "0.050"}
	tasks := history(t, many(20, clean), many(20, fixed))
	namer := tasks[25]
	namer.RegressionOf, namer.Closed = tasks[3].MetaTimestamp, false
	tasks = append([]traceparse.Task{namer}, tasks...)
	p, v := versions(t)
	r := Judge(Input{Tasks: tasks, Version: Version{v, applied}, Parent: Version{p, parentFrom}, Changed: []weights.Signal{weights.ContractRuleHit}})
	if r.Regressions.Before.K != 1 {
		t.Errorf("low-side regressions before %+v, want 1", r.Regressions.Before)
	}
}
