package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/traceparse"
)

// TestRepeatedTasks: a task another log already gave (same meta time and title) is a repeat, warned
// once per pair of logs at its first line; a task repeated inside its own log, a legacy task (its time is
// its first line's, its title made up: the real logs 3a-arch-conservative and 4-neg-config share one) and
// a task without a title are never repeats; one log alone has no check at all.
func TestRepeatedTasks(t *testing.T) {
	at := time.Date(2026, 4, 22, 17, 44, 27, 848586000, time.UTC)
	task := func(src string, line int, title string) *traceparse.Task {
		return &traceparse.Task{Source: src, Line: line, MetaTimestamp: at.Format(time.RFC3339Nano), MetaTime: at, Title: title}
	}
	names := []string{"merged.log", "t1.log", "t2.log"}
	r := newRepeatedTasks(len(names))
	rep := func(i int, t *traceparse.Task) (bool, *traceparse.Warning) {
		p, ok := taskPrint(t)
		return r.repeated(i, t, p, ok, names)
	}
	if dup, _ := rep(0, task("merged.log", 1, "checkout fails")); dup {
		t.Fatal("the first sight of a task is a repeat")
	}
	if dup, _ := rep(0, task("merged.log", 9, "checkout fails")); dup {
		t.Error("a task repeated inside its own log was dropped")
	}
	dup, w := rep(1, task("t1.log", 4, "checkout fails"))
	if !dup || w == nil || w.File != "t1.log" || w.Line != 4 || !strings.HasPrefix(w.Reason, "a task of merged.log again") {
		t.Fatalf("the task again in t1.log: repeat %v, warning %+v", dup, w)
	}
	rep(0, task("merged.log", 10, "other"))
	if dup, w := rep(1, task("t1.log", 12, "other")); !dup || w != nil {
		t.Errorf("a second repeat of merged.log in t1.log: repeat %v, warning %+v (want one warning per pair)", dup, w)
	}
	if dup, w := rep(2, task("t2.log", 3, "other")); !dup || w == nil || w.Line != 3 {
		t.Errorf("the first repeat in another log: repeat %v, warning %+v", dup, w)
	}
	legacy := task("t1.log", 1, "(legacy-trace, no meta header)")
	legacy.Legacy = true
	for _, tk := range []*traceparse.Task{legacy, task("t1.log", 2, "")} {
		rep(0, tk)
		if dup, _ := rep(2, tk); dup {
			t.Errorf("%+v counted as a repeat: it has no key", tk)
		}
	}
	// another project's task at the same second with the same title, but its own level and signals
	same := task("merged.log", 20, "fix the failing test")
	rep(0, same)
	other := task("t2.log", 20, "fix the failing test")
	other.Level = "L2"
	if dup, _ := rep(2, other); dup {
		t.Error("a task of another level at the same time and title counted as a repeat")
	}
	if one := newRepeatedTasks(1); one != nil {
		t.Error("one log keeps a set of keys")
	}
}

// TestPrintsRoundTrip: a state's prints read back as written, sorted and each once; anything else is
// refused (a state is hostile input).
func TestPrintsRoundTrip(t *testing.T) {
	got, ok := decodePrints(encodePrints([]uint64{9, 3, 9, 1 << 63}))
	if !ok || len(got) != 3 || got[0] != 3 || got[1] != 9 || got[2] != 1<<63 {
		t.Errorf("round trip: %v %v", got, ok)
	}
	for _, bad := range []string{"!", "AAAA", encodePrints([]uint64{1})[:8]} {
		if _, ok := decodePrints(bad); ok {
			t.Errorf("%q decoded", bad)
		}
	}
	unsorted := encodePrints([]uint64{1}) + encodePrints([]uint64{1})
	if _, ok := decodePrints(unsorted); ok {
		t.Errorf("%q (two encodings glued) decoded", unsorted)
	}
}

// TestPrintIsTheWholeMetaLine: two projects' tasks of the same second, title, level and signals that
// differ in another key of the meta line (regression_of=, loops=) are two tasks; the same meta line
// is one, whatever follows it (the copies re-review, finding A).
func TestPrintIsTheWholeMetaLine(t *testing.T) {
	const head = "2026-03-02T10:00:00Z  meta  L1/diagnostic  dispatch=auto  signals=explicit-bugfix:-5  task=\"fix the failing test\""
	print := func(meta, body string) uint64 {
		t.Helper()
		log := filepath.Join(t.TempDir(), "trace.log")
		if err := os.WriteFile(log, []byte(meta+"\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
		tasks := testutil.TraceTasks(t, log)
		p, ok := taskPrint(&tasks[0])
		if len(tasks) != 1 || !ok {
			t.Fatalf("%q: %d task(s), print %v", meta, len(tasks), ok)
		}
		return p
	}
	closeA := "2026-03-02T10:00:09Z  inner  close  terminal=complete  loss_final=0.100  regression_followed=true\n"
	closeB := "2026-03-02T10:00:04Z  inner  close  terminal=complete  loss_final=0.000\n"
	base := print(head+"  regression_of=2026-03-01T09:00:00Z  loops=inner", closeA)
	if print(head+"  regression_of=2026-03-01T09:00:00Z  loops=inner", closeB) != base {
		t.Error("the same meta line with another body: two prints (a copy taken mid-task would count twice)")
	}
	for _, meta := range []string{head + "  regression_of=2026-02-27T15:00:00Z  loops=inner", head + "  regression_of=2026-03-01T09:00:00Z  loops=inner,outer"} {
		if print(meta, closeA) == base {
			t.Errorf("%q: the print of another task", meta)
		}
	}
}

// BenchmarkTaskPrint is the cost a read of two or more logs adds per task: its print and the lookup.
func BenchmarkTaskPrint(b *testing.B) {
	tasks := testutil.TraceTasks(b, "../../demo/traces/checkout-service.log")
	names := []string{"a.log", "b.log"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r := newRepeatedTasks(len(names))
		for i := range tasks {
			p, ok := taskPrint(&tasks[i])
			r.repeated(i%2, &tasks[i], p, ok, names)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(tasks)), "ns/task")
}
