package accuracy

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/traceparse"
)

// now is the clock the reference values were computed with (testdata/SOURCES.md).
var now = time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)

const lifetime = 36500

func read(t *testing.T, logs ...string) []traceparse.Task {
	t.Helper()
	return testutil.TraceTasks(t, logs...)
}

// referenceFields decodes the reference's keys of a report (or of a reference output) for comparison.
func referenceFields(t *testing.T, v any) map[string]any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, k := range []string{"window_days", "n_tasks_total", "n_tasks_with_level", "per_level", "overall"} {
		v, ok := m[k]
		if !ok {
			t.Fatalf("no %q in %s", k, data)
		}
		out[k] = v
	}
	return out
}

func expected(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "reference", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return referenceFields(t, m)
}

func sameAsReference(t *testing.T, name string, rep *Report) {
	t.Helper()
	got, want := referenceFields(t, rep), expected(t, name)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("%s: reference fields differ\n--- reference\n%s\n--- tune\n%s", name, w, g)
		return
	}
	// The same bytes too, not only the same values: a script that compares the reference's output as
	// text sees 1.0 where Python writes 1.0.
	ref, err := os.ReadFile(filepath.Join("testdata", "reference", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, ref); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out) // as tune prints it: components>=3, not components\u003e=3
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rep.Summary); err != nil {
		t.Fatal(err)
	}
	if mine := bytes.TrimSuffix(out.Bytes(), []byte("\n")); !bytes.Equal(mine, compact.Bytes()) {
		t.Errorf("%s: the reference's fields have other bytes\n--- reference\n%s\n--- tune\n%s", name, compact.Bytes(), mine)
	}
}

// TestPyFloatIsPythonsRepr: the values of the reference's fields are written as Python's json.dumps
// writes floats (want is json.dumps of the same list, CPython 3.11).
func TestPyFloatIsPythonsRepr(t *testing.T) {
	tenth := 0.1 // a variable: the constant 0.1 + 0.2 is exactly 0.3
	vals := []float64{0.0, 1.0, 0.5, 2.5, 0.028, 1e-05, 1.5e-05, 0.0001, 0.00012345, 1e15, 1e16, 9999999999999998.0,
		123456789012345.6, 1e22, -3.0, math.Copysign(0, -1), tenth + 0.2, 5e-324, 1.7976931348623157e308}
	want := "[0.0,1.0,0.5,2.5,0.028,1e-05,1.5e-05,0.0001,0.00012345,1000000000000000.0,1e+16,9999999999999998.0," +
		"123456789012345.6,1e+22,-3.0,-0.0,0.30000000000000004,5e-324,1.7976931348623157e+308]"
	py := make([]PyFloat, len(vals))
	for i, v := range vals {
		py[i] = PyFloat(v)
	}
	got, err := json.Marshal(py)
	if err != nil || string(got) != want {
		t.Errorf("json of %v:\n got %s (err %v)\nwant %s", vals, got, err, want)
	}
	if _, err := json.Marshal(PyFloat(math.NaN())); err == nil {
		t.Error("NaN marshalled; the reference's JSON has no NaN")
	}
}

// TestReferenceRealLogs: on every real trace log (one at a time, and all together) and on the demo
// logs, the reference's fields equal dispatch_accuracy's output, and no task is read beyond it.
func TestReferenceRealLogs(t *testing.T) {
	logs, _ := filepath.Glob("../../testdata/ldd/traces/*.log")
	if len(logs) != 25 {
		t.Fatalf("want the 25 real logs, found %d", len(logs))
	}
	// The demo logs as they were when the reference output was computed (demo/traces has moved on since:
	// issue 11 regenerated checkout-service.log); see testdata/SOURCES.md.
	demo, _ := filepath.Glob("testdata/demo/*.log")
	cases := map[string][]string{"all-traces": logs, "demo": demo}
	for _, l := range logs {
		cases[filepath.Base(l[:len(l)-len(".log")])] = []string{l}
	}
	for name, ls := range cases {
		rep := Build(read(t, ls...), Options{Days: lifetime, Now: now})
		sameAsReference(t, name, rep)
		if rep.Beyond.NTasks != 0 {
			t.Errorf("%s: %d tasks read beyond the reference, want none: %+v", name, rep.Beyond.NTasks, rep.Beyond.Tasks)
		}
	}
}

// TestReferenceGenerated: synthetic histories the reference reads fully, whole and in a 30-day
// window, equal the reference; the committed logs are what writeHistory writes.
func TestReferenceGenerated(t *testing.T) {
	for _, g := range generated {
		var buf bytes.Buffer
		writeHistory(&buf, g.seed, g.n)
		path := filepath.Join("testdata", g.name)
		if on, err := os.ReadFile(path); err != nil || !bytes.Equal(on, buf.Bytes()) {
			t.Fatalf("%s is not what writeHistory(%d, %d) writes (err %v): run go test -run TestGenerate -gen and recompute the reference", path, g.seed, g.n, err)
		}
		name := g.name[:len(g.name)-len(".log")]
		rep := Build(read(t, path), Options{Days: lifetime, Now: now})
		sameAsReference(t, name, rep)
		if rep.Beyond.NTasks != 0 {
			t.Errorf("%s: %d tasks read beyond the reference, want none", name, rep.Beyond.NTasks)
		}
	}
	rep := Build(read(t, "testdata/generated-a.log"), Options{Days: 30, Now: time.Date(2026, 10, 15, 0, 0, 0, 0, time.UTC)})
	sameAsReference(t, "generated-a-30d", rep)
	if rep.NTasksTotal == 0 || rep.NTasksTotal == Build(read(t, "testdata/generated-a.log"), Options{Days: lifetime, Now: now}).NTasksTotal {
		t.Errorf("the 30-day window kept %d tasks: it should keep some and drop some", rep.NTasksTotal)
	}
}

// TestBeyondReference: on logs tune reads further than the reference, the tasks it reports as read
// beyond it are exactly the difference: without them, tune's numbers equal the reference's on the
// same log with those tasks' lines removed.
func TestBeyondReference(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines []int // meta lines of the tasks reported
	}{
		{"quirks", []int{1, 7, 14, 17, 20, 23, 29}},
		{"messy", []int{2, 5, 9}},
	} {
		tasks := read(t, filepath.Join("testdata", c.name+".log"))
		rep := Build(tasks, Options{Days: lifetime, Now: now})
		var lines []int
		for _, b := range rep.Beyond.Tasks {
			lines = append(lines, b.Line)
			if len(b.Reasons) == 0 {
				t.Errorf("%s:%d reported without a reason", c.name, b.Line)
			}
		}
		if rep.Beyond.NTasks != len(rep.Beyond.Tasks) || !slices.Equal(lines, c.lines) {
			t.Errorf("%s: beyond the reference n=%d lines %v, want lines %v", c.name, rep.Beyond.NTasks, lines, c.lines)
		}
		var rest []traceparse.Task
		for _, task := range tasks {
			if !slices.Contains(lines, task.Line) {
				rest = append(rest, task)
			}
		}
		sameAsReference(t, c.name+"-clean", Build(rest, Options{Days: lifetime, Now: now}))
		if got, whole := referenceFields(t, rep), expected(t, c.name); reflect.DeepEqual(got, whole) {
			t.Errorf("%s: equal to the reference although tasks were read beyond it", c.name)
		}
	}
}

func TestPyRound(t *testing.T) {
	for _, c := range []struct {
		x      float64
		places int
		want   float64
	}{
		{0.125, 2, 0.12}, // exact tie: to even
		{0.375, 2, 0.38}, // exact tie: to even
		{2.675, 2, 2.67}, // 2.67499999… in binary
		{1.0 / 3, 4, 0.3333},
		{2.0 / 3, 4, 0.6667},
		{0.0005, 3, 0.001}, // 0.000500000000000000010… in binary
		{2.5, 0, 2},
	} {
		if got := PyRound(c.x, c.places); got != c.want {
			t.Errorf("PyRound(%v, %d) = %v, want %v", c.x, c.places, got, c.want)
		}
	}
}

func loss(v float64) *float64 { return &v }

func task(level, terminal string, k int, lossFinal *float64) traceparse.Task {
	t := traceparse.Task{Level: level, Terminal: terminal, Closed: true, LossFinal: lossFinal}
	t.Entries = append(t.Entries, traceparse.Entry{Kind: traceparse.KindIter, Baseline: true})
	for range k {
		t.Entries = append(t.Entries, traceparse.Entry{Kind: traceparse.KindIter})
	}
	t.Entries = append(t.Entries, traceparse.Entry{Kind: traceparse.KindEpoch}, traceparse.Entry{Kind: traceparse.KindClose})
	return t
}

// TestClassify pins the boundaries of the definitions.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		name       string
		task       traceparse.Task
		over, unde bool
	}{
		{"L3 complete k=1 loss 0.01", task("L3", "complete", 1, loss(0.01)), true, false},
		{"L4 complete k=0 loss unknown", task("L4", "complete", 0, nil), true, false},
		{"L3 complete k=1 loss 0.011", task("L3", "complete", 1, loss(0.011)), false, false},
		{"L3 complete k=2", task("L3", "complete", 2, loss(0)), false, false},
		{"L4 partial k=0", task("L4", "partial", 0, loss(0)), false, false},
		{"L2 complete k=0", task("L2", "complete", 0, loss(0)), false, false},
		{"L0 failed", task("L0", "failed", 1, loss(0)), false, true},
		{"L1 aborted", task("L1", "aborted", 0, nil), false, true},
		{"L1 complete k=5", task("L1", "complete", 5, loss(0)), false, true},
		{"L1 complete k=4", task("L1", "complete", 4, loss(0)), false, false},
		{"L2 failed k=9", task("L2", "failed", 9, loss(1)), false, false},
	} {
		o := Classify(&c.task)
		if o.Overkill != c.over || o.Underkill != c.unde {
			t.Errorf("%s: overkill %v underkill %v, want %v %v (k=%d)", c.name, o.Overkill, o.Underkill, c.over, c.unde, o.K)
		}
	}
	if o := Classify(&traceparse.Task{Closed: true}); o.Terminal != UnknownKey {
		t.Errorf("a close without terminal= counts as %q, want %q", o.Terminal, UnknownKey)
	}
}

// TestSplitByVersion: weights= wins; otherwise the version active at the meta time per the log.
func TestSplitByVersion(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 9, 1, h, 0, 0, 0, time.UTC) }
	mk := func(h int, wv string) traceparse.Task {
		t := task("L1", "complete", 1, loss(0))
		t.MetaTime, t.WeightsVersion = at(h), wv
		return t
	}
	tasks := []traceparse.Task{mk(1, ""), mk(3, ""), mk(5, ""), mk(6, "v0001"), mk(7, "")}
	rep := Build(tasks, Options{Days: 10, Now: at(8), Versions: []VersionStart{{"v0002", at(4)}, {"v0001", at(2)}}})
	var got []string
	for _, g := range rep.ByWeightsVersion {
		got = append(got, g.Key, string(rune('0'+g.Summary.NTasksTotal)), string(rune('0'+*g.NFromMeta)), string(rune('0'+*g.NFromLog)))
	}
	want := []string{"v0001", "2", "1", "1", "v0002", "2", "0", "2", UnknownKey, "1", "0", "0"}
	if !slices.Equal(got, want) {
		t.Errorf("by weights version %v, want %v", got, want)
	}
}

// TestGoldenJSON locks the whole JSON of a report (reference fields and tune's).
func TestGoldenJSON(t *testing.T) {
	for _, name := range []string{"quirks", "generated-c"} {
		rep := Build(read(t, filepath.Join("testdata", name+".log")), Options{Days: lifetime, Now: now,
			Versions: []VersionStart{{"v0001", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, {"v0002", time.Date(2026, 9, 3, 0, 0, 0, 0, time.UTC)}}})
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			t.Fatal(err)
		}
		testutil.Golden(t, "golden/"+name+".json", buf.Bytes())
	}
}

// TestStreamedEqualsRead: tasks streamed one at a time (what tune accuracy does) give the report that
// the whole read gives, departures included (a meta line with unbalanced quotes names the task
// before it, which a stream has already handed over).
func TestStreamedEqualsRead(t *testing.T) {
	for _, name := range []string{"messy", "quirks", "generated-b"} {
		path := filepath.Join("testdata", name+".log")
		opt := Options{Days: lifetime, Now: now}
		b := NewBuilder(opt)
		if _, err := traceparse.StreamLog(path, func(task *traceparse.Task) error { b.Add(task); return nil }, nil); err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(b.Report())
		want, _ := json.Marshal(Build(read(t, path), opt))
		if !bytes.Equal(got, want) {
			t.Errorf("%s: streamed report differs\n--- read\n%s\n--- streamed\n%s", name, want, got)
		}
	}
}

// A task whose close is the incomplete last line is open here and closed for the reference (which reads
// the line): it is listed beyond the reference, not lost silently (the trace review). An incomplete last
// line that is not a close changes nothing the reference counts, and is not listed.
func TestIncompleteCloseIsListed(t *testing.T) {
	dir := t.TempDir()
	head := "2026-12-01T10:00:00Z  meta  L1/diagnostic  dispatch=auto  task=\"t\"  loops=inner\n2026-12-01T10:00:01Z  inner  k=1  loss=0.4\n"
	for name, c := range map[string]struct {
		last   string
		listed bool
	}{
		"close": {"2026-12-01T10:00:02Z  inner  close  terminal=failed  loss_final=0.4", true},
		"inner": {"2026-12-01T10:00:02Z  inner  k=2  loss=0.3", false},
	} {
		log := filepath.Join(dir, name+".log")
		if err := os.WriteFile(log, []byte(head+c.last), 0o644); err != nil {
			t.Fatal(err)
		}
		rep := Build(read(t, log), Options{Days: lifetime, Now: now})
		if got := len(rep.Beyond.Tasks) == 1; got != c.listed || rep.NTasksTotal != 0 {
			t.Errorf("%s: listed %v (%+v), want %v; none counted", name, got, rep.Beyond.Tasks, c.listed)
		}
	}
}

// TestYearZeroIsUndated: a meta time in year 0000, which Go parses and the reference's Python does not,
// is counted undated and listed, not dropped as older than every window (trace review, minor).
func TestYearZeroIsUndated(t *testing.T) {
	log := filepath.Join(t.TempDir(), "y0.log")
	body := "0000-06-01T10:00:00Z  meta  L1/diagnostic  dispatch=auto  signals=explicit-bugfix:-5  task=\"year zero\"  loops=inner\n" +
		"0000-06-01T10:00:01Z  inner  k=1  skill=s  action=a  loss=0.100\n" +
		"0000-06-01T10:00:02Z  inner  close  terminal=complete  loss_final=0.100\n"
	if err := os.WriteFile(log, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := Build(read(t, log), Options{Days: lifetime, Now: now})
	if rep.Undated != 1 || rep.Beyond.NTasks != 1 || rep.NTasksTotal != 0 {
		t.Errorf("year 0000: undated %d, listed %d, counted %d; want 1, 1, 0", rep.Undated, rep.Beyond.NTasks, rep.NTasksTotal)
	}
}
