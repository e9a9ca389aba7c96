package traceparse_test

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ldd-tools/tune/internal/traceparse"
)

// TestLineCap: a line over the cap is skipped while it streams past — counted as one line, reported
// with its line number and offset — and the lines around it read as if it were a short skipped line,
// on the parallel and the sequential path, in the middle of a log and at its end.
func TestLineCap(t *testing.T) {
	var head bytes.Buffer
	for i := range 3000 { // more than one batch before the long line
		fmt.Fprintf(&head, "2026-04-22T12:%02d:%02dZ  meta  L1/diagnostic  dispatch=auto  task=t%d  loops=inner\n", i/60%60, i%60, i)
		fmt.Fprintf(&head, "2026-04-22T12:%02d:%02dZ  inner  k=1  loss=0.5\n", i/60%60, i%60)
	}
	longAt := int64(head.Len())
	long := "2026-04-22T13:00:00Z  inner  k=2  action=\"" + strings.Repeat("x", 3<<20) + "\"  loss=0.25"
	tail := "2026-04-22T13:00:01Z  inner  k=3  loss=0.125\n2026-04-22T13:00:02Z  inner  close  terminal=complete\n"
	longLine := 3000*2 + 1
	for _, procs := range []int{runtime.GOMAXPROCS(0), 1} {
		prev := runtime.GOMAXPROCS(procs)
		for _, atEnd := range []bool{false, true} {
			log := head.String() + long + "\n" + tail
			if atEnd {
				log = head.String() + long
			}
			var tasks []traceparse.Task
			var warns []traceparse.Warning
			lines, err := traceparse.Stream(iotest.HalfReader(strings.NewReader(log)), "big.log",
				func(task *traceparse.Task) error { tasks = append(tasks, *task); return nil },
				func(w traceparse.Warning) { warns = append(warns, w) },
				traceparse.MaxLineBytes(1<<20))
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("procs=%d atEnd=%v", procs, atEnd)
			wantLines := longLine + 2
			if atEnd {
				wantLines = longLine
			}
			if lines.Read != wantLines || lines.Skipped != 1 || len(warns) != 1 {
				t.Fatalf("%s: %+v, warnings %+v", name, lines, warns)
			}
			w := warns[0]
			if w.Line != longLine || w.Offset != longAt || !w.Skipped || (!atEnd && !strings.Contains(w.Reason, "longer than 1 MB")) {
				t.Errorf("%s: warning %+v", name, w)
			}
			last := tasks[len(tasks)-1]
			if len(tasks) != 3000 || (!atEnd && (!last.Closed || len(last.Entries) != 3)) {
				t.Errorf("%s: %d tasks, last %+v", name, len(tasks), last.Entries)
			}
			// Under a cap above it, the same line is an entry like any other.
			if !atEnd {
				res, err := traceparse.Parse(strings.NewReader(log), "big.log", traceparse.MaxLineBytes(8<<20))
				if err != nil || res.Lines.Skipped != 0 || len(res.Tasks[2999].Entries) != 4 {
					t.Errorf("%s: cap 8 MB: %v %+v", name, err, res.Lines)
				}
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}
