package traceout_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/traceout"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/traceparse/tracegen"
	"github.com/ldd-tools/tune/internal/weights"
)

// stdlibTask is what export wrote before AppendTask: encoding/json's Encoder without HTML escaping.
func stdlibTask(t testing.TB, task *traceparse.Task) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(task); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func sameAsStdlib(t testing.TB, what string, tasks []traceparse.Task) {
	t.Helper()
	for i := range tasks {
		if got, want := traceout.AppendTask(nil, &tasks[i]), stdlibTask(t, &tasks[i]); !bytes.Equal(got, want) {
			t.Fatalf("%s, task %d:\n got %s\nwant %s", what, i, got, want)
		}
	}
}

// logs are the bundled real logs, the demo logs and a generated one, with their bytes.
func logs(t *testing.T) map[string][]byte {
	paths, _ := filepath.Glob("../../testdata/ldd/traces/*.log")
	demo, _ := filepath.Glob("../../demo/traces/*.log")
	if len(paths) == 0 || len(demo) == 0 {
		t.Fatal("no bundled logs")
	}
	out := map[string][]byte{}
	for _, p := range append(paths, demo...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = b
	}
	var gen bytes.Buffer
	if _, err := tracegen.Write(&gen, 2<<20, tracegen.DefaultTail); err != nil {
		t.Fatal(err)
	}
	out["generated"] = gen.Bytes()
	return out
}

// AppendTask writes what encoding/json writes, byte for byte, for every task of the bundled and demo
// logs, a generated 2 MB log, summarised tasks, and a task with every field set to awkward values;
// TaskJSONL and TaskJSON then write what they wrote through encoding/json.
func TestAppendTaskIsEncodingJSON(t *testing.T) {
	for name, data := range logs(t) {
		res, err := traceparse.Parse(bytes.NewReader(data), name)
		if err != nil {
			t.Fatal(err)
		}
		sameAsStdlib(t, name, res.Tasks)
		bounded, err := traceparse.Parse(bytes.NewReader(data), name, traceparse.MaxTaskEntries(2, 0))
		if err != nil {
			t.Fatal(err)
		}
		sameAsStdlib(t, name+" (bounded)", bounded.Tasks)
		checkWriters(t, name, res)
	}
	k, loss, tiny := 7, -0.1, 1e-9
	odd := "tab\t nl\n <html>&amp; \"quoted\" \\ \x00 \u2028 bad\xff → Δ 🙂"
	task := traceparse.Task{Source: odd, Line: 3, Offset: 1 << 40, MetaTimestamp: odd, Legacy: true, Level: "L4", Dispatch: odd,
		Creativity: "inventive", Signals: []weights.SignalWeight{{Name: odd, Weight: 5}, {Name: "x", Weight: -4}, {Name: "z", Weight: 0}},
		WeightsVersion: "v0002", Title: odd, Loops: []string{odd}, LoopsUsed: []string{}, Closed: true, Terminal: odd,
		LossFinal: &tiny, LossFinalFrom: "close", RegressionFollowed: true, RegressionOf: odd, Explore: "raised", ExploreLevel: odd, ExploreShare: "0.2", Files: nil,
		Omitted: &traceparse.Omitted{Line: 9, Offset: 99, Entries: 1, Iterations: 2, Baselines: 3, Departures: 4, Files: 5},
		Entries: []traceparse.Entry{{Line: 1, Offset: 2, Timestamp: odd, Loop: odd, Kind: odd, K: &k, Baseline: true, Epoch: -1, Loss: &loss, DeltaLoss: &tiny,
			Fields: traceparse.FieldsFrom(map[string]string{"z": odd, "a": "", odd: "v", "task": "ghp_" + strings.Repeat("a", 36), "Z": "upper"})}, {}},
	}
	sameAsStdlib(t, "every field", []traceparse.Task{task, {Signals: []weights.SignalWeight{}}, {}})
	// A field added to Task, Entry or Omitted must be added to AppendTask too (the differential above
	// catches it only when the data sets it).
	for typ, n := range map[reflect.Type]int{reflect.TypeFor[traceparse.Task](): 30, reflect.TypeFor[traceparse.Entry](): 11, reflect.TypeFor[traceparse.Omitted](): 7} {
		if typ.NumField() != n {
			t.Errorf("%s has %d fields, AppendTask knows %d: update it and this count", typ, typ.NumField(), n)
		}
	}
}

// checkWriters compares TaskJSONL and TaskJSON with what they wrote through encoding/json: one
// compact object per line, and the indented document of a traceparse.Result.
func checkWriters(t *testing.T, name string, res *traceparse.Result) {
	var lines, doc bytes.Buffer
	jl, jd := traceout.NewTaskJSONL(&lines), traceout.NewTaskJSON(&doc)
	var wantLines bytes.Buffer
	enc := json.NewEncoder(&wantLines)
	enc.SetEscapeHTML(false)
	for i := range res.Tasks {
		if err := jl.Task(&res.Tasks[i]); err != nil {
			t.Fatal(err)
		}
		if err := jd.Task(&res.Tasks[i]); err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(&res.Tasks[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := jl.Close(res.Lines, res.Warnings, res.Tails); err != nil {
		t.Fatal(err)
	}
	if err := jd.Close(res.Lines, res.Warnings, res.Tails); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(lines.Bytes(), wantLines.Bytes()) {
		t.Errorf("%s: TaskJSONL differs from encoding/json", name)
	}
	var wantDoc bytes.Buffer
	enc = json.NewEncoder(&wantDoc)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc.Bytes(), bytes.TrimSuffix(wantDoc.Bytes(), []byte("\n"))) && !bytes.Equal(doc.Bytes(), wantDoc.Bytes()) {
		t.Errorf("%s: TaskJSON differs from encoding/json's document", name)
	}
}

// FuzzAppendTask: whatever a log holds, every task it reads to encodes as encoding/json encodes it.
func FuzzAppendTask(f *testing.F) {
	for _, s := range []string{
		"2026-04-22T12:00:00Z  meta  L1/diagnostic  task=\"a\tb <x> & \\\" \"  signals=a:+2,b:-0.5  loops=inner\n2026-04-22T12:00:01Z  inner  k=1  loss=1e-9  action=\"\x01\u2028\"\n2026-04-22T12:00:02Z  inner  close  loss_final=1e21\n",
		"2026-04-22T12:00:01Z  inner  k=x  loss=-0  files=a.go,b.go  zz=\xff\n",
	} {
		f.Add([]byte(s))
	}
	paths, _ := filepath.Glob("../../testdata/ldd/traces/*.log")
	for _, p := range paths[:min(len(paths), 5)] {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := traceparse.Parse(bytes.NewReader(data), "fuzz.log", traceparse.MaxTaskEntries(3, 0))
		if err != nil {
			t.Fatal(err)
		}
		sameAsStdlib(t, "fuzz", res.Tasks)
	})
}

// BenchmarkTaskJSONL encodes the tasks of a generated 8 MB log as JSON Lines with encoding/json
// (what TaskJSONL did before) and with AppendTask; compare with
// `go test -bench TaskJSONL -count 6 | benchstat -col /encoder -`.
func BenchmarkTaskJSONL(b *testing.B) {
	var gen bytes.Buffer
	if _, err := tracegen.Write(&gen, 8<<20, tracegen.DefaultTail); err != nil {
		b.Fatal(err)
	}
	res, err := traceparse.Parse(bytes.NewReader(gen.Bytes()), "bench.log")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encoder=encoding-json", func(b *testing.B) {
		b.SetBytes(int64(gen.Len()))
		for b.Loop() {
			enc := json.NewEncoder(io.Discard)
			enc.SetEscapeHTML(false)
			for i := range res.Tasks {
				if err := enc.Encode(&res.Tasks[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("encoder=AppendTask", func(b *testing.B) {
		b.SetBytes(int64(gen.Len()))
		for b.Loop() {
			w := traceout.NewTaskJSONL(io.Discard)
			for i := range res.Tasks {
				if err := w.Task(&res.Tasks[i]); err != nil {
					b.Fatal(err)
				}
			}
			w.Close(res.Lines, nil, nil)
		}
	})
}
