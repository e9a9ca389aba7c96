package scorer

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/weights"
)

// FuzzDetect: Detect never panics and is deterministic, and Score keeps the reference's invariants.
// Seeds: f.Add below plus testdata/fuzz/FuzzDetect.
func FuzzDetect(f *testing.F) {
	for _, s := range []string{
		"", "fix the typo in README.md line 12", "fix\u00a0forward", "FİX fıx ſchema R３５", "LDD[level=L0]: LDD++:",
		"when x\ndoesn't between a\nand b", "into\vthe\u00a0x loop", "new new new gate anew layer", "ΑΣ.py ΑΣ-x.py",
		"a.py.b.py/-x.md café.py", "take your time volle \u212aanne", "\xff\xfe invalid utf8 fix", "team of ５",
	} {
		f.Add(s, "")
		f.Add(s, "src/a.py\nREADME.md")
	}
	w := weights.Weights{}
	if ref, err := weights.Load(testutil.ReferenceWeightsPath()); err == nil {
		w = ref
	} else {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text, hist string) {
		var history []string
		if hist != "" {
			history = strings.Split(hist, "\n")
		}
		d := Detect(text, history)
		if !reflect.DeepEqual(d, Detect(text, history)) {
			t.Fatal("Detect is not deterministic")
		}
		for i, s := range d.Fired {
			if s < 0 || s >= weights.NumSignals || (i > 0 && s <= d.Fired[i-1]) {
				t.Fatalf("fired signals out of order or duplicated: %v", d.Fired)
			}
		}
		if history == nil && has(d, weights.UnknownFileTerritory) {
			t.Fatal("unknown-file-territory without history")
		}
		if paths := ExtractPaths(text); !reflect.DeepEqual(paths, extractPathsForward(text)) {
			t.Fatalf("ExtractPaths %q, forward walk %q", paths, extractPathsForward(text))
		}
		if low := asciiLower(text); isASCII(text) && low != strings.ToLower(text) {
			t.Fatalf("asciiLower %q", low)
		}
		if has(d, weights.SingleFile) && len(ExtractPaths(text)) != 1 {
			t.Fatal("single-file needs exactly one path")
		}
		r := d.Score(&w)
		var sum weights.Half
		for i, s := range r.Signals {
			sum += s.Weight
			if s.Name != d.Fired[i].String() || s.Weight != w.Signals[d.Fired[i]] {
				t.Fatalf("signal %d: %+v", i, s)
			}
		}
		if sum != r.RawScore {
			t.Fatalf("raw %s is not the sum %s", r.RawScore.Plain(), sum.Plain())
		}
		bucket := w.Level(r.RawScore)
		clamped := bucket == weights.L4 && d.Creativity == Standard
		if (clamped && r.AutoLevel != weights.L3) || (!clamped && r.AutoLevel != bucket) {
			t.Fatalf("auto %s for bucket %s, creativity %s", r.AutoLevel, bucket, d.Creativity)
		}
		if d.Override == nil && (r.FinalLevel != r.AutoLevel || r.DispatchSource != SourceAuto) {
			t.Fatalf("no override but final %s, source %s", r.FinalLevel, r.DispatchSource)
		}
		if (r.ClampReason != nil) != (clamped && d.Override == nil) {
			t.Fatalf("clamp reason %v, clamped %v, override %v", r.ClampReason, clamped, d.Override)
		}
		if !strings.HasPrefix(r.DispatchHeader, "Dispatched: "+r.FinalLevel.Label()) || strings.Contains(r.DispatchHeader, "\n") {
			t.Fatalf("header %q", r.DispatchHeader)
		}
		js, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back Result
		if err := json.Unmarshal(js, &back); err != nil {
			t.Fatalf("%v: %s", err, js)
		}
		if back.FinalLevel != r.FinalLevel || back.RawScore != r.RawScore || back.DispatchHeader != strings.ToValidUTF8(r.DispatchHeader, "\ufffd") {
			t.Fatalf("JSON round trip: %+v vs %+v", back, r)
		}
	})
}
