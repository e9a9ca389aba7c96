package traceparse_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

func lossOf(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// The writer computes Δ against the previous line of the same loop anywhere in the file; the package
// recomputes it within task + loop + epoch (docs/decisions.md#trace-logs), resets at a baseline, and leaves it
// unknown next to an unknown loss.
func TestDeltaLossRecomputedPerTaskLoopEpoch(t *testing.T) {
	log := `2026-04-22T12:00:00Z  meta  L1/diagnostic  dispatch=auto  task=a  loops=inner
2026-04-22T12:00:01Z  inner  k=0  baseline  loss=0.600
2026-04-22T12:00:02Z  inner  k=1  loss=0.400  Δloss=-0.200
2026-04-22T12:00:03Z  inner  close  terminal=complete  loss_final=0.400
2026-04-22T12:01:00Z  meta  L2/deliberate  dispatch=auto  task=b  loops=inner,refine
2026-04-22T12:01:01Z  inner  k=1  loss=0.600  Δloss=+0.200
2026-04-22T12:01:02Z  inner  k=2  loss=0.500
2026-04-22T12:01:03Z  refine  k=1  loss=0.900
2026-04-22T12:01:04Z  inner  k=3  skill=s
2026-04-22T12:01:05Z  inner  k=4  loss=0.200
2026-04-22T12:01:06Z  epoch  epoch=1  reason="rubric grew"
2026-04-22T12:01:07Z  inner  k=5  loss=0.700  epoch=1
2026-04-22T12:01:08Z  inner  k=6  loss=0.650
2026-04-22T12:01:09Z  inner  k=7  baseline  loss=0.800  epoch=1
2026-04-22T12:01:10Z  inner  k=8  loss=0.750  epoch=1
`
	res := parseString(t, log)
	var got []any
	for _, task := range res.Tasks {
		for _, e := range task.Entries {
			if e.Kind == traceparse.KindIter {
				got = append(got, lossOf(e.DeltaLoss))
			}
		}
	}
	want := []any{
		nil, -0.2, // task a: baseline, then -0.200
		nil,   // task b k=1: first of its group; the writer's +0.200 crossed the task boundary
		-0.1,  // k=2
		nil,   // refine k=1: its own loop
		nil,   // k=3: loss unknown
		-0.3,  // k=4 against k=2 (the last known loss)
		nil,   // k=5: epoch 1 starts a new group
		-0.05, // k=6: no epoch= field, so the epoch line's 1 applies
		nil,   // k=7: a baseline resets
		-0.05, // k=8
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Δloss\n got %v\nwant %v", got, want)
	}
	if e := res.Tasks[1].Entries[5]; e.Kind != traceparse.KindEpoch || e.Epoch != 1 {
		t.Errorf("the epoch line stays in its task: %+v", e)
	}
}

func TestTaskFields(t *testing.T) {
	log := `2026-04-20T19:57:58Z  inner  k=1  skill=a  loss_norm=0.5  files=b.go,a.go
2026-04-20T19:58:00Z  inner  close  terminal=complete
2026-04-22T12:00:00Z  meta  task="fix it"  loops=inner,outer  level_chosen=L1  dispatch_source=auto-level  weights=v0002  signals=explicit-bugfix:-5,ambiguous:+2.5
2026-04-22T12:00:01Z  inner  k=0  baseline  loss=0.6  files=src/x.go
2026-04-22T12:00:02Z  inner  close  terminal=handoff  loss_final=0.333
2026-04-22T12:00:03Z  outer  k=0  baseline  loss=0.5  files="src/y.go, src/x.go"
2026-04-22T12:00:04Z  outer  close  terminal=complete  regression_followed=true
2026-04-22T12:00:05Z  outer  k=1  loss=0.25
2026-04-22T12:01:00Z  meta  L0/reflex  dispatch=user-bump  task=later  regression_of=2026-04-22T12:00:00Z
`
	res := parseString(t, log)
	if len(res.Tasks) != 3 {
		t.Fatalf("%d tasks", len(res.Tasks))
	}
	legacy, task, later := res.Tasks[0], res.Tasks[1], res.Tasks[2]
	if !legacy.Legacy || legacy.Level != "" || legacy.Title != traceparse.LegacyTitle || legacy.Line != 1 ||
		!slices.Equal(legacy.Files, []string{"a.go", "b.go"}) || legacy.Terminal != "complete" {
		t.Errorf("legacy task %+v", legacy)
	}
	// loss_norm is read as loss (docs/decisions.md#trace-logs); the legacy task's final loss is its last iteration's.
	if lossOf(legacy.LossFinal) != 0.5 || legacy.LossFinalFrom != "iteration" {
		t.Errorf("legacy loss_final %v from %q", lossOf(legacy.LossFinal), legacy.LossFinalFrom)
	}
	wantSignals := []weights.SignalWeight{{Name: "explicit-bugfix", Weight: weights.Whole(-5)}, {Name: "ambiguous", Weight: 5}}
	if task.Level != "L1" || task.Dispatch != "auto" || task.WeightsVersion != "v0002" || !task.HasSignals ||
		!reflect.DeepEqual(task.Signals, wantSignals) || task.Title != "fix it" || !slices.Equal(task.Loops, []string{"inner", "outer"}) {
		t.Errorf("meta fields: %+v", task)
	}
	// The last close wins for terminal; it has no loss_final, so the last iteration's loss stands
	// (the one after the close: iterations after a close stay in the task).
	if !task.Closed || task.Terminal != "complete" || lossOf(task.LossFinal) != 0.25 || task.LossFinalFrom != "iteration" {
		t.Errorf("close: closed %v terminal %q loss_final %v from %q", task.Closed, task.Terminal, lossOf(task.LossFinal), task.LossFinalFrom)
	}
	if !task.RegressionFollowed || !slices.Equal(task.Files, []string{"src/x.go", "src/y.go"}) || !slices.Equal(task.LoopsUsed, []string{"inner", "outer"}) {
		t.Errorf("regression %v files %v loops used %v", task.RegressionFollowed, task.Files, task.LoopsUsed)
	}
	if later.Dispatch != "bump" || later.RegressionOf != "2026-04-22T12:00:00Z" || later.Closed || later.LossFinal != nil || later.Signals != nil || later.HasSignals {
		t.Errorf("later task %+v", later)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings %+v", res.Warnings)
	}
}

func TestMissingLossIsUnknown(t *testing.T) {
	res := parseString(t, "2026-04-22T12:00:00Z  meta  L1/diagnostic  task=t\n2026-04-22T12:00:01Z  inner  k=1  skill=a\n2026-04-22T12:00:02Z  inner  close  terminal=complete  loss_final=n/a\n")
	task := res.Tasks[0]
	if task.LossFinal != nil || task.LossFinalFrom != "" || task.Entries[0].Loss != nil {
		t.Errorf("loss_final %v from %q, iteration loss %v: want unknown", lossOf(task.LossFinal), task.LossFinalFrom, task.Entries[0].Loss)
	}
	if !hasWarning(res, `loss_final="n/a" is not a number`, false) {
		t.Errorf("warnings %+v", res.Warnings)
	}
}

// Every line end (\n, \r\n, lone \r) ends a line, wherever the reader's buffer happens to cut.
func TestLineEndsAcrossReadBoundaries(t *testing.T) {
	lines := []string{
		"2026-04-22T12:00:00Z  meta  L1/diagnostic  dispatch=auto  task=\"a b\"  loops=inner",
		"",
		"# a comment",
		"2026-04-22T12:00:01Z  inner  k=0  baseline  loss=0.6",
		"2026-04-22T12:00:02Z  inner  close  terminal=complete  loss_final=0.1",
	}
	for _, sep := range []string{"\n", "\r\n", "\r"} {
		log := "\ufeff" + strings.Join(lines, sep) + sep
		whole := parseString(t, log)
		res, err := traceparse.Parse(iotest.OneByteReader(strings.NewReader(log)), "case.log")
		if err != nil {
			t.Fatal(err)
		}
		want := traceparse.LineCounts{Read: 5, Parsed: 3, Skipped: 2, Blank: 1, Comment: 1}
		if res.Lines != want || whole.Lines != want {
			t.Errorf("sep %q: lines %+v / %+v, want %+v", sep, res.Lines, whole.Lines, want)
		}
		if !reflect.DeepEqual(res.Tasks, whole.Tasks) {
			t.Errorf("sep %q: one-byte reads and one read differ", sep)
		}
		task := whole.Tasks[0]
		if task.MetaTimestamp != "2026-04-22T12:00:00Z" || task.Title != "a b" || lossOf(task.LossFinal) != 0.1 {
			t.Errorf("sep %q: task %+v", sep, task)
		}
		if e := task.Entries[1]; e.Line != 5 || e.Offset != int64(len("\ufeff")+len(strings.Join(lines[:4], sep))+len(sep)) {
			t.Errorf("sep %q: close at line %d offset %d", sep, e.Line, e.Offset)
		}
	}
}

func TestIncompleteLastLine(t *testing.T) {
	res := parseString(t, "2026-04-22T12:00:00Z  meta  L1/diagnostic  task=t\n2026-04-22T12:00:02Z  inner  close  terminal=complete  loss_final=0.1")
	if res.Tasks[0].Closed || !hasWarning(res, "incomplete last line", true) || res.Lines.Skipped != 1 {
		t.Errorf("a cut last line must be reported, not parsed: %+v %+v", res.Tasks[0], res.Warnings)
	}
	// Trailing spaces without a line end are only a blank line.
	res = parseString(t, "2026-04-22T12:00:00Z  meta  L1/diagnostic  task=t\n   ")
	if res.Lines.Blank != 1 || len(res.Warnings) != 0 {
		t.Errorf("lines %+v warnings %+v", res.Lines, res.Warnings)
	}
}

// A value holding newlines spans several physical lines: the opening line is kept by the fallback
// split, and every continuation is skipped and points back at it.
func TestContinuationLinesAreReported(t *testing.T) {
	log := "2026-04-22T12:00:00Z  meta  L1/diagnostic  task=\"one\ntwo\nthree\"  loops=inner\n" +
		"2026-04-22T12:00:01Z  inner  k=1  loss=0.5\nstray prose\n"
	res := parseString(t, log)
	var reasons []string
	for _, w := range res.SkippedWarnings() {
		reasons = append(reasons, w.Reason)
	}
	want := []string{
		"continuation of line 1: a quoted value there holds a newline",
		"continuation of line 1: a quoted value there holds a newline",
		"does not start with a timestamp (YYYY-MM-DD…): a continuation of a value that held a newline, or not a trace line",
	}
	if !slices.Equal(reasons, want) {
		t.Errorf("skip reasons\n got %q\nwant %q", reasons, want)
	}
	if len(res.Tasks) != 1 || res.Tasks[0].Level != "L1" || len(res.Tasks[0].Entries) != 1 {
		t.Errorf("tasks %+v", res.Tasks)
	}
}

func TestWarningsForQuestionableFields(t *testing.T) {
	log := "2026-04-22 meta  L1/diagnostic  task=t  signals=ghost:+1,bad  weights=vX  level=L9\n" +
		"2026-04-22T12:00:01Z  inner  k=one  loss=NaN  regression_followed=maybe\n" +
		"2026-04-22T12:00:02Z  epoch  reason=x\n" +
		"2026-04-22T12:00:03Z\n" +
		"x ⟪LDD-TRACE-v1⟫\n" +
		"2026-04-22T12:00:04Z  inner  action=\xff\n"
	res := parseString(t, log)
	for _, want := range []struct {
		substr  string
		skipped bool
	}{
		{`timestamp "2026-04-22" is not RFC 3339`, false},
		{`"ghost" is not a scorer signal`, false},
		{`"bad" has no :weight`, false},
		{`weights="vX" is not a weights version`, false},
		{`level="L9" is not L0..L4`, false},
		{`k="one" is not an integer`, false},
		{`loss="NaN" is not a number`, false},
		{`regression_followed="maybe"`, false},
		{"epoch line without epoch=N", false},
		{"a timestamp with no loop name", true},
		{"with no entry after it", true},
		{"not valid UTF-8", false},
	} {
		if !hasWarning(res, want.substr, want.skipped) {
			t.Errorf("no warning %q (skipped %v) in %+v", want.substr, want.skipped, res.Warnings)
		}
	}
	if task := res.Tasks[0]; task.Level != "" || !task.MetaTime.IsZero() || task.RegressionFollowed {
		t.Errorf("task %+v", task)
	}
}

// Weights are written in points, and an encoder that leaves HTML characters alone (as the CLI's does)
// prints the signal name as written.
func TestSignalWeightJSON(t *testing.T) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode([]weights.SignalWeight{{Name: "components>=3", Weight: 5}, {Name: "single-file", Weight: weights.Whole(-3)}})
	if want := `[{"name":"components>=3","weight":2.5},{"name":"single-file","weight":-3}]` + "\n"; err != nil || b.String() != want {
		t.Errorf("got %s (%v), want %s", b.String(), err, want)
	}
}
