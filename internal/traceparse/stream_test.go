package traceparse_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"

	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/traceparse/tracegen"
)

// streamLogs are the logs Stream is checked on: every real log, and a generated one big enough to be
// read in parallel batches.
func streamLogs(t *testing.T) map[string][]byte {
	t.Helper()
	logs := map[string][]byte{}
	paths, _ := filepath.Glob("../../testdata/ldd/traces/*.log")
	paths = append(paths, "../cli/testdata/trace_messy.log")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		logs[p] = data
	}
	var gen bytes.Buffer
	if _, err := tracegen.Write(&gen, 3<<20, tracegen.DefaultTail); err != nil {
		t.Fatal(err)
	}
	logs["generated 3 MB"] = gen.Bytes()
	if len(logs) < 20 {
		t.Fatalf("only %d logs", len(logs))
	}
	return logs
}

// TestStreamIsParse: the tasks, warnings and line counts Stream hands out are exactly Parse's, whether
// the reader is in memory, a plain stream, or one that returns a byte at a time.
func TestStreamIsParse(t *testing.T) {
	for name, data := range streamLogs(t) {
		want, err := traceparse.Parse(bytes.NewReader(data), name)
		if err != nil {
			t.Fatal(err)
		}
		wantJSON, _ := json.Marshal(want)
		readers := map[string]func() io.Reader{
			"bytes":  func() io.Reader { return bytes.NewReader(data) },
			"stream": func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
		}
		for kind, r := range readers {
			got := &traceparse.Result{Tasks: []traceparse.Task{}, Warnings: []traceparse.Warning{}}
			lines, err := traceparse.Stream(r(), name,
				func(task *traceparse.Task) error { got.Tasks = append(got.Tasks, *task); return nil },
				func(w traceparse.Warning) { got.Warnings = append(got.Warnings, w) })
			if err != nil {
				t.Fatal(err)
			}
			got.Lines = lines
			if gotJSON, _ := json.Marshal(got); !bytes.Equal(gotJSON, wantJSON) {
				t.Errorf("%s (%s): Stream differs from Parse: %d tasks, %d warnings vs %d, %d", name, kind,
					len(got.Tasks), len(got.Warnings), len(want.Tasks), len(want.Warnings))
			}
		}
	}
}

// TestStreamStopsAtTheFirstError: an error from emit ends the read, is returned, and no task follows it.
func TestStreamStopsAtTheFirstError(t *testing.T) {
	var gen bytes.Buffer
	if _, err := tracegen.Write(&gen, 4<<20, tracegen.DefaultTail); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("reader gone")
	n := 0
	lines, err := traceparse.Stream(iotest.HalfReader(bytes.NewReader(gen.Bytes())), "gen", func(*traceparse.Task) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	}, nil)
	if !errors.Is(err, stop) || n != 3 {
		t.Errorf("err %v after %d tasks", err, n)
	}
	if lines.Read == 0 || int64(lines.Read) >= int64(bytes.Count(gen.Bytes(), []byte("\n"))) {
		t.Errorf("read %d lines of %d: the read did not stop early", lines.Read, bytes.Count(gen.Bytes(), []byte("\n")))
	}
}

// TestStreamTransientIsParse: a Transient read reuses the memory of tasks already emitted, so each task
// is encoded inside emit, as `tune trace --format jsonl` does; the encodings equal Parse's. The logs
// include one whose big tasks span many batches (more than a read holds for its open task, so some
// batches go to the GC and the rest are reused), with files= names, a close and losses spread over
// them, and a meta line with signals after each.
func TestStreamTransientIsParse(t *testing.T) {
	logs := streamLogs(t)
	var big bytes.Buffer
	for task := range 6 {
		fmt.Fprintf(&big, "2026-04-22T12:%02d:00Z  meta  L2/standard  dispatch=auto  signals=greenfield:+3,single-file:-2  task=\"big #%d\"  loops=inner,refine\n", task, task)
		for k := range 3000 * task {
			fmt.Fprintf(&big, "2026-04-22T12:%02d:01Z  inner  k=%d  action=\"step %d of a long task\"  loss=0.%03d  files=f%d.go,g%d.go\n", task, k, k, k%1000, k%7, k%13)
		}
		fmt.Fprintf(&big, "2026-04-22T12:%02d:02Z  inner  close  terminal=complete  loss_final=0.125\n", task)
	}
	logs["big tasks"] = big.Bytes()
	for name, data := range logs {
		want, err := traceparse.Parse(bytes.NewReader(data), name)
		if err != nil {
			t.Fatal(err)
		}
		var got [][]byte
		for _, r := range []io.Reader{bytes.NewReader(data), iotest.HalfReader(bytes.NewReader(data))} {
			got = got[:0]
			if _, err := traceparse.Stream(r, name, func(task *traceparse.Task) error {
				b, err := json.Marshal(task)
				got = append(got, b)
				return err
			}, nil, traceparse.Transient()); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want.Tasks) {
				t.Fatalf("%s: %d tasks, want %d", name, len(got), len(want.Tasks))
			}
			for i := range got {
				if w, _ := json.Marshal(&want.Tasks[i]); !bytes.Equal(got[i], w) {
					t.Fatalf("%s: task %d differs:\n%s\nwant\n%s", name, i, got[i], w)
				}
			}
		}
	}
}

// TestStreamLogFromIsTheEndOfAWholeRead: a read resumed at a task's meta line (its offset and line)
// gives the tasks and warnings a whole read gives from that task on, with the same line numbers and
// offsets, up to the end asked for (docs/decisions.md#nightly-state).
func TestStreamLogFromIsTheEndOfAWholeRead(t *testing.T) {
	resumed := 0
	for name, data := range streamLogs(t) {
		path := filepath.Join(t.TempDir(), "trace.log")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		whole, err := traceparse.Parse(bytes.NewReader(data), path)
		if err != nil {
			t.Fatal(err)
		}
		if len(whole.Tasks) < 3 || len(whole.Warnings) >= traceparse.MaxWarnings {
			continue
		}
		for _, from := range []int{1, len(whole.Tasks) / 2, len(whole.Tasks) - 1} {
			start := whole.Tasks[from]
			if start.Legacy || start.Offset == 0 {
				continue
			}
			resumed++
			got := &traceparse.Result{Tasks: []traceparse.Task{}, Warnings: []traceparse.Warning{}}
			_, end, err := traceparse.StreamLogFrom(path, start.Offset, int64(len(data)), start.Line,
				func(task *traceparse.Task) error { got.Tasks = append(got.Tasks, *task); return nil },
				func(w traceparse.Warning) { got.Warnings = append(got.Warnings, w) })
			if err != nil || end != int64(len(data)) {
				t.Fatalf("%s from task %d: end %d, %v", name, from, end, err)
			}
			var warns []traceparse.Warning
			for _, w := range whole.Warnings {
				if w.Line >= start.Line {
					warns = append(warns, w)
				}
			}
			gotJSON, _ := json.Marshal(got)
			wantJSON, _ := json.Marshal(&traceparse.Result{Tasks: whole.Tasks[from:], Warnings: append([]traceparse.Warning{}, warns...)})
			if !bytes.Equal(gotJSON, wantJSON) {
				t.Errorf("%s from task %d (line %d): %d tasks, %d warnings; the whole read has %d, %d from there", name, from, start.Line,
					len(got.Tasks), len(got.Warnings), len(whole.Tasks)-from, len(warns))
			}
		}
	}
	if resumed < 6 { // most real logs hold one task; the merged, messy and generated ones hold many
		t.Errorf("only %d resumed reads: the logs test too little", resumed)
	}
}
