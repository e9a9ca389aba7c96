package watch

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/ldd-tools/tune/internal/traceparse"
)

// TestStateResumesAsAWholeRead: a Builder that takes up a log's part (through its JSON, as the nightly
// state keeps it) and is given the log's tasks after it judges byte for byte as one given the whole
// log, whatever task the split falls on: open trials, namings within and beyond the horizon, single
// witnesses, regression_followed, and two logs.
func TestStateResumesAsAWholeRead(t *testing.T) {
	tasks := history(t, slices.Concat(many(20, liftedLow), many(12, regressed(liftedLow)), many(40, otherLow)),
		slices.Concat(many(12, liftedHigh), many(6, regressed(liftedHigh)), many(10, otherLow)))
	files := func(i int, file, terminal string) {
		tasks[i].Files, tasks[i].Terminal = []string{file}, cmp.Or(terminal, tasks[i].Terminal)
	}
	files(3, "d.go", "")
	files(5, "d.go", "failed")
	files(73, "a.go", "")
	files(75, "a.go", "aborted")
	tasks[23].RegressionOf = tasks[3].MetaTimestamp
	tasks[30].RegressionOf = tasks[8].MetaTimestamp // beyond the horizon
	tasks[80].RegressionOf = tasks[74].MetaTimestamp
	tasks[99].RegressionOf = tasks[85].MetaTimestamp
	// A second log: the first 40 tasks again under another name, read after the first.
	second := slices.Clone(tasks[:40])
	for i := range second {
		second[i].Source = "b.log"
	}
	p, v := versions(t)
	in := Input{Version: Version{v, applied}, Parent: Version{p, parentFrom}, Changes: []string{"contract-rule-hit +1"}, Logs: []string{"trace.log", "b.log"}}
	all := slices.Concat(tasks, second)
	want := judgeJSON(t, in, all)
	for split := range len(tasks) + 1 {
		b := NewBuilder(in)
		for i := range tasks[:split] {
			b.Add(&tasks[i])
		}
		data, err := json.Marshal(b.State("trace.log"))
		if err != nil {
			t.Fatal(err)
		}
		var st LogState
		if err := json.Unmarshal(data, &st); err != nil {
			t.Fatal(err)
		}
		r := NewBuilder(in)
		if err := r.Restore(&st); err != nil {
			t.Fatalf("split %d: %v\n%s", split, err, data)
		}
		for i := range all[split:] {
			r.Add(&all[split+i])
		}
		got, err := json.Marshal(r.Result())
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("split at task %d: resumed\n%s\nwant\n%s", split, got, want)
		}
	}
	if r := Judge(Input{Tasks: all, Version: in.Version, Parent: in.Parent}); r.Before.LiftedWhileLow.K == 0 || r.Tests[0].K == 0 {
		t.Errorf("the history tests too little: %+v, %+v", r.Before.LiftedWhileLow, r.Tests[0])
	}
}

func judgeJSON(t *testing.T, in Input, tasks []traceparse.Task) string {
	t.Helper()
	b := NewBuilder(in)
	for i := range tasks {
		b.Add(&tasks[i])
	}
	data, err := json.Marshal(b.Result())
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestStateCheckRefuses: a part that no Builder could have made is refused before anything is taken up.
func TestStateCheckRefuses(t *testing.T) {
	p, v := versions(t)
	in := Input{Version: Version{v, applied}, Parent: Version{p, parentFrom}}
	tasks := history(t, many(20, liftedLow), many(3, liftedHigh))
	b := NewBuilder(in)
	for i := range tasks {
		b.Add(&tasks[i])
	}
	good := b.State("trace.log")
	if err := good.Check(); err != nil || len(good.Open) == 0 || len(good.Kept) != 3 {
		t.Fatalf("a Builder's own state: %v (%d open, %d kept)", err, len(good.Open), len(good.Kept))
	}
	const big = math.MaxInt/2 + 1
	for name, edit := range map[string]func(st *LogState){
		"no name":             func(st *LogState) { st.Source = "" },
		"more regressed":      func(st *LogState) { st.BeforeK[0] = st.BeforeN[0] + 1 },
		"trials beyond tasks": func(st *LogState) { st.BeforeN[1] = st.Before + 1 },
		"open beyond horizon": func(st *LogState) { st.Open[0].At = st.Labelled - 21 },
		"open out of order":   func(st *LogState) { st.Open[1].At = st.Open[0].At },
		"open kept out":       func(st *LogState) { st.Open[len(st.Open)-1].Kept = len(st.Kept) },
		"open category":       func(st *LogState) { st.Open[0].Kept, st.Open[0].Cat = -1, 3 },
		"kept level":          func(st *LogState) { st.Kept[0].To = "L9" },
		"kept test":           func(st *LogState) { st.Kept[0].Test = "x" },
		"not counted":         func(st *LogState) { st.NotCounted["bump"] = -1 },
		"kept beyond after":   func(st *LogState) { st.After = 0 },
		// Counts so large that the check's sums would wrap around (docs/decisions.md#fourth-review-the-watch-state-and-explore).
		"before and after wrap": func(st *LogState) { st.Before, st.After = big, big },
		"trials wrap": func(st *LogState) {
			st.Before, st.After, st.Labelled = 5, 0, 5
			st.BeforeN, st.BeforeK, st.Kept, st.Open = [3]int{big, big, 0}, [3]int{}, nil, nil
		},
		"not counted wrap": func(st *LogState) {
			st.NotCounted = map[string]int{"bump": big, "pin": big}
			st.Kept, st.Open = nil, nil
		},
		"raised levels wrap": func(st *LogState) {
			st.Before, st.Labelled = math.MaxInt/4+1, math.MaxInt
			st.RaisedLevels = 8
		},
		"labelled at the top":    func(st *LogState) { st.Labelled = math.MaxInt; st.Open = nil },
		"a count beyond the top": func(st *LogState) { st.After, st.Labelled = math.MaxInt, math.MaxInt; st.Open = nil },
	} {
		data, _ := json.Marshal(good)
		var st LogState
		if err := json.Unmarshal(data, &st); err != nil {
			t.Fatal(err)
		}
		edit(&st)
		if err := NewBuilder(in).Restore(&st); err == nil {
			t.Errorf("%s: taken up", name)
		}
	}
}
