package app

import (
	"strings"
	"testing"
	"time"

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
	if dup, _ := r.repeated(0, task("merged.log", 1, "checkout fails"), names); dup {
		t.Fatal("the first sight of a task is a repeat")
	}
	if dup, _ := r.repeated(0, task("merged.log", 9, "checkout fails"), names); dup {
		t.Error("a task repeated inside its own log was dropped")
	}
	dup, w := r.repeated(1, task("t1.log", 4, "checkout fails"), names)
	if !dup || w == nil || w.File != "t1.log" || w.Line != 4 || !strings.HasPrefix(w.Reason, "a task of merged.log again") {
		t.Fatalf("the task again in t1.log: repeat %v, warning %+v", dup, w)
	}
	r.repeated(0, task("merged.log", 10, "other"), names)
	if dup, w := r.repeated(1, task("t1.log", 12, "other"), names); !dup || w != nil {
		t.Errorf("a second repeat of merged.log in t1.log: repeat %v, warning %+v (want one warning per pair)", dup, w)
	}
	if dup, w := r.repeated(2, task("t2.log", 3, "other"), names); !dup || w == nil || w.Line != 3 {
		t.Errorf("the first repeat in another log: repeat %v, warning %+v", dup, w)
	}
	legacy := task("t1.log", 1, "(legacy-trace, no meta header)")
	legacy.Legacy = true
	for _, tk := range []*traceparse.Task{legacy, task("t1.log", 2, "")} {
		r.repeated(0, tk, names)
		if dup, _ := r.repeated(2, tk, names); dup {
			t.Errorf("%+v counted as a repeat: it has no key", tk)
		}
	}
	if one := newRepeatedTasks(1); one != nil {
		t.Error("one log keeps a set of keys")
	}
}
