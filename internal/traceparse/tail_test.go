package traceparse_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/traceparse/tracegen"
)

// withoutLines clears the line numbers, which a tail read counts from its own start; everything else,
// byte offsets included, must be identical to a whole-file parse.
func withoutLines(tasks []traceparse.Task) []traceparse.Task {
	out := make([]traceparse.Task, len(tasks))
	for i, t := range tasks {
		t.Line, t.Meta.Line = 0, 0
		t.Entries = append([]traceparse.Entry(nil), t.Entries...)
		for j := range t.Entries {
			t.Entries[j].Line = 0
		}
		if t.Omitted != nil {
			o := *t.Omitted
			o.Line, t.Omitted = 0, &o
		}
		t.Departures = append([]traceparse.Departure(nil), t.Departures...)
		for j := range t.Departures {
			t.Departures[j].Line = 0
		}
		out[i] = t
	}
	return out
}

func lastN(tasks []traceparse.Task, n int) []traceparse.Task {
	if n > 0 && len(tasks) > n {
		return tasks[len(tasks)-n:]
	}
	return tasks
}

// checkReadLast asserts the property ReadLast(n) == the last n tasks of Parse, and that tail line
// numbers are the whole-file numbers shifted by the lines before the tail start.
func checkReadLast(t *testing.T, path string, data []byte, n int) {
	t.Helper()
	whole, err := traceparse.Parse(bytes.NewReader(data), path)
	if err != nil {
		t.Fatal(err)
	}
	tail, err := traceparse.ReadLast(path, n)
	if err != nil {
		t.Fatal(err)
	}
	checkAccounting(t, tail)
	want := lastN(whole.Tasks, n)
	if !reflect.DeepEqual(withoutLines(tail.Tasks), withoutLines(want)) {
		t.Fatalf("n=%d: ReadLast gives %d tasks, not the last %d of Parse (%d)", n, len(tail.Tasks), n, len(whole.Tasks))
	}
	shift := 0
	if len(tail.Tails) == 1 {
		off := tail.Tails[0].Offset
		if len(want) == 0 || want[0].Offset != off {
			t.Fatalf("tail starts at %d, first task at %v", off, want)
		}
		shift = physicalLines(data[:off])
	} else if len(tail.Tails) > 1 {
		t.Fatalf("tails %+v", tail.Tails)
	}
	for i := range want {
		if tail.Tasks[i].Line+shift != want[i].Line {
			t.Fatalf("n=%d: task line %d + %d lines before the tail != %d", n, tail.Tasks[i].Line, shift, want[i].Line)
		}
	}
}

func writeLog(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadLastIsTheEndOfParse(t *testing.T) {
	var gen bytes.Buffer
	if _, err := tracegen.Write(&gen, 400<<10, tracegen.DefaultTail); err != nil {
		t.Fatal(err)
	}
	legacy := "2026-04-20T19:57:58Z  inner  k=1  skill=a  loss=1\n\n# hand note\n"
	variants := map[string][]byte{
		"lf":         gen.Bytes(),
		"crlf":       bytes.ReplaceAll(gen.Bytes(), []byte("\n"), []byte("\r\n")),
		"legacy+cut": append([]byte("\ufeff"+legacy), append(gen.Bytes(), "2027-01-01T00:00:00Z  meta  L1/diagnostic  task=cut"...)...),
		"tiny":       []byte(legacy + "2026-04-22T12:00:00Z  meta  L0/reflex  task=\"a\n" + "continued\"\n"),
	}
	for name, data := range variants {
		t.Run(name, func(t *testing.T) {
			path := writeLog(t, data)
			for _, n := range []int{1, 2, 7, 20, 500, 1 << 20} {
				checkReadLast(t, path, data, n)
			}
		})
	}
}

func TestReadLogsKeepsSources(t *testing.T) {
	a := writeLog(t, []byte("2026-04-22T12:00:00Z  meta  L1/diagnostic  task=a\n2026-04-22T12:00:01Z  inner  k=1  loss=0.5\n"))
	b := writeLog(t, []byte("\n2026-04-22T12:01:00Z  meta  L2/deliberate  task=b\n2026-04-22T12:02:00Z  meta  L3/structural  task=c\n"))
	res, err := traceparse.ReadLogs([]string{a, b}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tasks) != 2 || res.Tasks[0].Source != a || res.Tasks[0].Title != "a" || res.Tasks[1].Source != b || res.Tasks[1].Title != "c" {
		t.Fatalf("tasks %+v", res.Tasks)
	}
	if res.Lines != (traceparse.LineCounts{Read: 3, Parsed: 3}) || len(res.Tails) != 1 || res.Tails[0].File != b {
		t.Errorf("lines %+v tails %+v", res.Lines, res.Tails)
	}
	if _, err := traceparse.ReadLogs([]string{a, filepath.Join(t.TempDir(), "missing.log")}, 1); err == nil || !strings.Contains(err.Error(), "missing.log") {
		t.Errorf("a missing log must be an error naming it, got %v", err)
	}
}

// A writer appends while readers read. The writer cuts every line in two writes, so readers see cut
// lines; a cut line must be reported as incomplete, never parsed, and every parsed entry must be the
// entry that the finished log has at the same offset.
func TestReadWhileAppending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.log")
	const tasks = 60
	var lines [][]byte
	for i := range tasks {
		task := tracegen.AppendTask(nil, uint64(i), time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC))
		for _, l := range bytes.SplitAfter(task, []byte("\n")) {
			if len(l) > 0 {
				lines = append(lines, l)
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// At every 10th line the writer stops between the two halves until a reader has read, so cut
	// lines are certainly seen; between those hand-offs, reads and writes race freely.
	cutWritten, cutRead := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(cutWritten)
		for i, l := range lines {
			half := len(l) / 2
			f.Write(l[:half])
			if i%10 == 0 {
				cutWritten <- struct{}{}
				<-cutRead
			}
			f.Write(l[half:])
		}
	}()
	type snapshot struct {
		res     *traceparse.Result
		n       int
		mustCut bool
	}
	var snaps []snapshot
	read := func(mustCut bool) {
		for _, n := range []int{0, 3} {
			res, err := traceparse.ReadLast(path, n)
			if err != nil {
				t.Fatal(err)
			}
			snaps = append(snaps, snapshot{res, n, mustCut})
		}
	}
	for running := true; running; {
		select {
		case _, ok := <-cutWritten:
			if !ok {
				running = false
				break
			}
			read(true)
			cutRead <- struct{}{}
		default:
			read(false)
		}
	}
	f.Close()
	final, err := traceparse.ReadLast(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(final.Warnings) != 0 || len(final.Tasks) != tasks {
		t.Fatalf("finished log: %d tasks, warnings %+v", len(final.Tasks), final.Warnings)
	}
	byOffset := map[int64]traceparse.Entry{}
	for _, e := range entries(final) {
		e.Line = 0
		byOffset[e.Offset] = e
	}
	cut := 0
	for _, s := range snaps {
		checkAccounting(t, s.res)
		if s.mustCut && len(s.res.Warnings) != 1 {
			t.Fatalf("read of a cut line (n=%d): warnings %+v lines %+v", s.n, s.res.Warnings, s.res.Lines)
		}
		for _, w := range s.res.Warnings {
			if !w.Skipped || !strings.HasPrefix(w.Reason, "incomplete last line") || w.Line != s.res.Lines.Read {
				t.Fatalf("read during append (n=%d): unexpected warning %+v", s.n, w)
			}
			cut++
		}
		for _, e := range entries(s.res) {
			e.Line = 0
			if want, ok := byOffset[e.Offset]; !ok || !reflect.DeepEqual(e, want) {
				t.Fatalf("read during append (n=%d): entry at %d misparsed:\n got %+v\nwant %+v", s.n, e.Offset, e, want)
			}
		}
	}
	t.Logf("%d reads during the append, %d saw a cut last line", len(snaps), cut)
}
