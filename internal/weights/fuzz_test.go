package weights

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzWeightsParse: Parse never panics, every error names the file, and whatever it accepts is a valid
// version whose canonical form (Marshal) parses back to the same canonical form.
// Seeds: the reference v0001.toml, f.Add variants below, and testdata/fuzz/FuzzWeightsParse.
func FuzzWeightsParse(f *testing.F) {
	ref, err := os.ReadFile(filepath.Join("..", "..", "weights", "v0001.toml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ref)
	for _, edit := range [][2]string{
		{"contract-rule-hit = 2", "contract-rule-hit = 2.5"},
		{"contract-rule-hit = 2", "contract-rule-hit = 2.25"},
		{"contract-rule-hit = 2", "contract-rule-hit = 2\nfancy = 1"},
		{"greenfield = 3\n", ""},
		{"L1 = -2", "L1 = -8"},
		{"schema = 1", "schema = 2"},
		{"parent = 0", "parent = 1"},
		{"too_low = 2", "too_low = -1"},
		{`"components>=3"`, `"components≥3"`},
		{"ambiguous = 2", "ambiguous = -1000000"},
		{"ambiguous = 2", "ambiguous = nan"},
		{"L3 = 7", "L3 = inf"},
		{"too_high = 1", "too_high = 9223372036854775807"},
		{"[cost]", "y = " + strings.Repeat("{a=", 2000) + "1" + strings.Repeat("}", 2000) + "\n[cost]"},
	} {
		f.Add(bytes.Replace(ref, []byte(edit[0]), []byte(edit[1]), 1))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := Parse("fuzz.toml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.toml:") { // "fuzz.toml: …" or "fuzz.toml:LINE: …"
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if w.Schema != Schema || w.Version <= 0 || w.Parent < 0 || w.Parent >= w.Version {
			t.Fatalf("accepted an invalid header: %+v", w)
		}
		for _, h := range append(w.Signals[:], w.Buckets.Edges[:]...) {
			if h > 2*MaxMagnitude || h < -2*MaxMagnitude {
				t.Fatalf("accepted a weight outside the sane range: %v", h)
			}
		}
		for i := 1; i < len(w.Buckets.Edges); i++ {
			if w.Buckets.Edges[i] <= w.Buckets.Edges[i-1] {
				t.Fatalf("accepted edges out of order: %v", w.Buckets.Edges)
			}
		}
		canon := w.Marshal()
		back, err := Parse("canonical.toml", canon)
		if err != nil {
			t.Fatalf("canonical form does not parse: %v\n%s", err, canon)
		}
		if again := back.Marshal(); !bytes.Equal(again, canon) {
			t.Fatalf("canonical form is not stable:\n%s\nvs\n%s", canon, again)
		}
		if back.Signals != w.Signals || back.Buckets != w.Buckets || back.Cost != w.Cost || back.Reason != w.Reason || back.Evidence != w.Evidence {
			t.Fatalf("round trip changed the values: %+v vs %+v", w, back)
		}
	})
}
