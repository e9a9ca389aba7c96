package traceparse_test

import (
	"bytes"
	"fmt"
	"io"
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

// xs reads n bytes of 'x', held nowhere.
type xs struct{ n int }

func (r *xs) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

// TestAnOverCapLineCostsLittle: a 64 MB line a pull request appends to a log costs a read under the
// default cap a few megabytes, on both paths. Before, the line was carried up to a 64 MB cap in every
// batch buffer in flight: a nightly on a 100 MB line took 1.4 GB and two minutes (the ninth review).
func TestAnOverCapLineCostsLittle(t *testing.T) {
	head := "2026-04-22T12:00:00Z  meta  L1/diagnostic  dispatch=auto  task=t  loops=inner\n2026-04-22T12:00:01Z  inner  k=1  "
	tail := "\n2026-04-22T12:00:02Z  inner  close  terminal=complete\n"
	for _, procs := range []int{runtime.GOMAXPROCS(0), 1} {
		prev := runtime.GOMAXPROCS(procs)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r := io.MultiReader(strings.NewReader(head), &xs{64 << 20}, strings.NewReader(tail))
		var warns []traceparse.Warning
		lines, err := traceparse.Stream(r, "long.log", func(*traceparse.Task) error { return nil },
			func(w traceparse.Warning) { warns = append(warns, w) })
		runtime.ReadMemStats(&after)
		runtime.GOMAXPROCS(prev)
		if err != nil || lines.Skipped != 1 || len(warns) != 1 || !strings.Contains(warns[0].Reason, "longer than 1 MB") {
			t.Fatalf("procs=%d: %v %+v %+v", procs, err, lines, warns)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
			t.Errorf("procs=%d: a 64 MB line over the default cap allocated %d MB, want at most 32", procs, alloc>>20)
		}
	}
}
