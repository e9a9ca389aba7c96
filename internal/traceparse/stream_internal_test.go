package traceparse

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/traceparse/tracegen"
)

// Both reading paths must give the same result wherever batch boundaries fall: a "\r\n" split by
// a boundary, a line longer than a batch, and whole logs with every kind of line end.
func TestSequentialAndParallelReadsAgree(t *testing.T) {
	meta := "2026-04-22T12:00:00Z  meta  L1/diagnostic  task=t\r\n"
	pad := "2026-04-22T12:00:01Z  inner  k=1  action=" + strings.Repeat("x", batchSize-len(meta)-len("2026-04-22T12:00:01Z  inner  k=1  action=")-1) + "\r\n"
	var gen bytes.Buffer
	if _, err := tracegen.Write(&gen, 3*batchSize+12345, tracegen.DefaultTail); err != nil {
		t.Fatal(err)
	}
	inputs := map[string]struct {
		data  string
		lines int
	}{
		"crlf split by the batch end": {meta + pad + "2026-04-22T12:00:02Z  inner  close  terminal=complete\r\n", 3},
		"line longer than a batch":    {meta + "2026-04-22T12:00:01Z  inner  action=" + strings.Repeat("y", 2*batchSize+7) + "\n# end\n", 3},
		"generated lf":                {gen.String(), strings.Count(gen.String(), "\n")},
		"generated cr":                {strings.ReplaceAll(gen.String(), "\n", "\r"), strings.Count(gen.String(), "\n")},
		"generated crlf, cut":         {strings.ReplaceAll(gen.String(), "\n", "\r\n") + "2026", strings.Count(gen.String(), "\n") + 1},
	}
	for name, in := range inputs {
		seq, par := newParser("x", 0), newParser("x", 0)
		if err := seq.readSequential(strings.NewReader(in.data)); err != nil {
			t.Fatal(err)
		}
		seq.finishTask()
		if err := par.readParallel(strings.NewReader(in.data), 3); err != nil {
			t.Fatal(err)
		}
		par.finishTask()
		a, b := seq.result(), par.result()
		if a.Lines.Read != in.lines || a.Lines.Read != a.Lines.Parsed+a.Lines.Skipped {
			t.Errorf("%s: lines %+v, want %d read", name, a.Lines, in.lines)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: sequential and parallel reads differ: %+v vs %+v", name, a.Lines, b.Lines)
		}
	}
}
