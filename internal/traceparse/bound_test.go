package traceparse_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/traceparse"
)

// hugeTask appends a task of n iterations (a legacy one when meta is false) whose every line names a
// file of its own, and which closes on its last line.
func hugeTask(b *bytes.Buffer, meta bool, n int) {
	if meta {
		b.WriteString("2026-05-01T00:00:00Z  meta  L2/deliberate  dispatch=auto  task=huge  loops=inner\n")
	}
	for k := 1; k <= n; k++ {
		base := ""
		if k%10 == 1 {
			base = "  baseline"
		}
		loop := "inner"
		if k == n-1 {
			loop = "refine" // a loop seen only past the bound
		}
		fmt.Fprintf(b, "2026-05-01T00:%02d:%02dZ  %s%s  k=%d  loss=%g  action=\"step %d\"  files=f%d.go\n", k/60%60, k%60, loop, base, k, 1/float64(k), k, k%50)
	}
	b.WriteString("2026-05-01T01:00:00Z  inner  close  terminal=partial  loss_final=0.75\n")
	b.WriteString("2026-05-01T01:00:01Z  inner  close  terminal=complete  loss_final=0.5\n")
}

// A task past MaxTaskEntries keeps its first entries and its last close, counts the rest in Omitted,
// and still takes its close, loss, loops and files from every line; a warning names the task and the
// line where the summary starts. Parse, Stream and ReadLast agree.
func TestTaskBound(t *testing.T) {
	for _, legacy := range []bool{true, false} {
		var b bytes.Buffer
		b.WriteString("2026-04-30T00:00:00Z  meta  L1/diagnostic  task=before  loops=inner\n2026-04-30T00:00:01Z  inner  k=1  loss=0.5\n")
		if legacy {
			b.Reset()
		}
		first := strings.Count(b.String(), "\n") + 1
		if !legacy {
			first++ // its meta line
		}
		hugeTask(&b, !legacy, 1000)
		opt := traceparse.MaxTaskEntries(100, 0)
		path := writeLog(t, b.Bytes())
		res, err := traceparse.Parse(bytes.NewReader(b.Bytes()), path, opt)
		if err != nil {
			t.Fatal(err)
		}
		checkAccountingBound(t, res)
		task := res.Tasks[len(res.Tasks)-1]
		name := fmt.Sprintf("legacy=%v", legacy)
		if len(task.Entries) != 101 || task.Entries[100].Kind != traceparse.KindClose || task.Entries[100].Fields.Value("terminal") != "complete" {
			t.Fatalf("%s: %d entries, last %+v", name, len(task.Entries), task.Entries[len(task.Entries)-1])
		}
		o := task.Omitted
		want := traceparse.Omitted{Line: first + 100, Entries: 1000 + 2 - 101, Iterations: 900, Baselines: 90}
		if o == nil {
			t.Fatalf("%s: no summary", name)
		}
		want.Offset = o.Offset
		if *o != want || !strings.HasPrefix(string(b.Bytes()[o.Offset:]), "2026-05-01T00:01:41Z  inner  baseline  k=101") {
			t.Errorf("%s: omitted %+v, want %+v", name, *o, want)
		}
		if all, nb := task.Iterations(); all != 1000 || nb != 900 {
			t.Errorf("%s: iterations %d (%d not baselines)", name, all, nb)
		}
		if !task.Closed || task.Terminal != "complete" || task.LossFinal == nil || *task.LossFinal != 0.5 || len(task.Files) != 50 ||
			!reflect.DeepEqual(task.LoopsUsed, []string{"inner", "refine"}) {
			t.Errorf("%s: task %+v", name, task)
		}
		var bound []traceparse.Warning
		for _, w := range res.Warnings {
			if strings.Contains(w.Reason, "counted, not kept") {
				bound = append(bound, w)
			}
		}
		if len(bound) != 1 || bound[0].Line != o.Line || bound[0].Skipped || !strings.Contains(bound[0].Reason, fmt.Sprintf("the task of line %d holds more than 100 entries", task.Line)) {
			t.Errorf("%s: warnings %+v", name, bound)
		}
		var streamed []traceparse.Task
		if _, err := traceparse.Stream(bytes.NewReader(b.Bytes()), path, func(t *traceparse.Task) error { streamed = append(streamed, *t); return nil }, nil, opt); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(streamed, res.Tasks) {
			t.Errorf("%s: Stream and Parse differ", name)
		}
		tail, err := traceparse.ReadLast(path, 1, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(withoutLines(tail.Tasks), withoutLines(res.Tasks[len(res.Tasks)-1:])) {
			t.Errorf("%s: ReadLast(1) differs from the end of Parse", name)
		}
		// The byte bound: 2 KB of lines hold about 30 of these entries.
		res, err = traceparse.Parse(bytes.NewReader(b.Bytes()), "huge.log", traceparse.MaxTaskEntries(0, 2<<10))
		if err != nil {
			t.Fatal(err)
		}
		task = res.Tasks[len(res.Tasks)-1]
		if n := len(task.Entries); n < 20 || n > 50 || task.Omitted == nil || task.Omitted.Entries != 1002-n {
			t.Errorf("%s: byte bound: %d entries, omitted %+v", name, n, task.Omitted)
		}
	}
}

// checkAccountingBound: Read == Parsed + Skipped and the skipped lines each have a warning, with the
// entries past the bound counted as parsed.
func checkAccountingBound(t *testing.T, res *traceparse.Result) {
	t.Helper()
	l := res.Lines
	if l.Read != l.Parsed+l.Skipped || l.Blank+l.Comment+len(res.SkippedWarnings()) != l.Skipped {
		t.Errorf("lines %+v, %d skipped warnings", l, len(res.SkippedWarnings()))
	}
	n := 0
	for _, task := range res.Tasks {
		n += len(task.Entries)
		if !task.Legacy {
			n++
		}
		if task.Omitted != nil {
			n += task.Omitted.Entries
		}
	}
	if n != l.Parsed {
		t.Errorf("%d entries kept or omitted, %d parsed lines", n, l.Parsed)
	}
}

// A task's departures (one per skipped line at worst) stop at a thousand and are counted after that;
// a read keeps ten thousand warnings, and the last one kept counts the rest.
func TestDeparturesAndWarningsBound(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("2026-05-01T00:00:00Z  meta  L2/deliberate  task=noisy\n")
	for i := range 12_000 {
		fmt.Fprintf(&b, "garbage line %d\n", i)
	}
	res, err := traceparse.Parse(bytes.NewReader(b.Bytes()), "noisy.log")
	if err != nil {
		t.Fatal(err)
	}
	task := res.Tasks[0]
	if len(task.Departures) != 1000 || task.Omitted == nil || task.Omitted.Departures != 11_000 || task.Omitted.Entries != 0 {
		t.Errorf("%d departures, omitted %+v", len(task.Departures), task.Omitted)
	}
	if res.Lines.Skipped != 12_000 || len(res.Warnings) != 10_000 {
		t.Fatalf("lines %+v, %d warnings", res.Lines, len(res.Warnings))
	}
	if last := res.Warnings[9_999]; last.Line != 10_001 || !strings.Contains(last.Reason, "then 2000 more warnings, 2000 of them for skipped lines, not kept") {
		t.Errorf("last warning %+v", last)
	}
	// Before the first task the departures wait for it, bounded the same way.
	res, err = traceparse.Parse(bytes.NewReader(b.Bytes()[bytes.IndexByte(b.Bytes(), '\n')+1:]), "noisy.log")
	if err != nil || len(res.Tasks) != 0 || len(res.Warnings) != 10_000 {
		t.Fatalf("%v: %d tasks, %d warnings", err, len(res.Tasks), len(res.Warnings))
	}
}

// A tail read passes over a line longer than the cap without holding it: the forward read skips it,
// so it is never a meta line, and ReadLast(n) is still the end of Parse with the same cap.
func TestReadLastPassesOverLongLines(t *testing.T) {
	var b bytes.Buffer
	long := "2026-05-01T00:00:00Z  meta  L2/deliberate  task=long  note=" + strings.Repeat("y", 300<<10) + "\n"
	for i := range 40 {
		fmt.Fprintf(&b, "2026-05-01T00:00:%02dZ  meta  L1/diagnostic  task=t%d\n2026-05-01T00:00:%02dZ  inner  k=1  loss=0.5\n", i, i, i)
		if i%10 == 5 {
			b.WriteString(long)
			b.WriteString(strings.Repeat("z", 200<<10) + "\r\n") // long, and no timestamp
		}
	}
	data := b.Bytes()
	path := writeLog(t, data)
	for _, capBytes := range []int{100 << 10, 1 << 20} {
		opt := traceparse.MaxLineBytes(capBytes)
		whole, err := traceparse.Parse(bytes.NewReader(data), path, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 3, 7, 12, 100} {
			tail, err := traceparse.ReadLast(path, n, opt)
			if err != nil {
				t.Fatal(err)
			}
			if want := lastN(whole.Tasks, n); !reflect.DeepEqual(withoutLines(tail.Tasks), withoutLines(want)) {
				t.Fatalf("cap %d, n=%d: %d tasks, not the last %d of Parse", capBytes, n, len(tail.Tasks), len(want))
			}
		}
	}
}
