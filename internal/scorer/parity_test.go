package scorer

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/weights"
)

// ParityRecord is one line of testdata/ldd/parity.jsonl: a prompt and the reference scorer's JSON for it.
type parityRecord struct {
	ID      string          `json:"id"`
	Tags    []string        `json:"tags"`
	Prompt  string          `json:"prompt"`
	History []string        `json:"history"`
	Want    json.RawMessage `json:"-"`
}

func repoFile(parts ...string) string {
	return filepath.Join(append([]string{"..", ".."}, parts...)...)
}

func loadParity(t testing.TB) []parityRecord {
	t.Helper()
	f, err := os.Open(repoFile("testdata", "ldd", "parity.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []parityRecord
	r := bufio.NewReader(f)
	for line := 1; ; line++ {
		b, err := r.ReadBytes('\n')
		if len(b) > 0 {
			var rec parityRecord
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatalf("parity.jsonl:%d: %v", line, err)
			}
			rec.Want = append(json.RawMessage(nil), b...)
			out = append(out, rec)
		}
		if err != nil {
			break
		}
	}
	if len(out) != 255 {
		t.Fatalf("parity.jsonl: %d records, want 255", len(out))
	}
	return out
}

func referenceWeights(t testing.TB) *weights.Weights {
	t.Helper()
	w, err := weights.Load(testutil.ReferenceWeightsPath())
	if err != nil {
		t.Fatal(err)
	}
	return &w
}

// referenceFields are the fields of the reference --json payload that parity compares.
var referenceFields = []string{"raw_score", "auto_level", "final_level", "creativity", "dispatch_source", "signals",
	"clamp_reason", "override_fragment", "dispatch_header"}

// CompareReference compares the reference fields of two JSON objects by value and lists the differences.
func compareReference(t testing.TB, want, got []byte) []string {
	t.Helper()
	var w, g map[string]any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%v in %s", err, got)
	}
	var diffs []string
	for _, k := range referenceFields {
		if !reflect.DeepEqual(w[k], g[k]) {
			wb, _ := json.Marshal(w[k])
			gb, _ := json.Marshal(g[k])
			diffs = append(diffs, k+": want "+string(wb)+", got "+string(gb))
		}
	}
	return diffs
}

// TestParity runs every prompt of the parity corpus through the library and compares every field of the
// reference JSON, through Result.MarshalJSON.
func TestParity(t *testing.T) {
	w := referenceWeights(t)
	matched := 0
	recs := loadParity(t)
	for _, rec := range recs {
		got, err := json.Marshal(Score(rec.Prompt, rec.History, w))
		if err != nil {
			t.Fatal(err)
		}
		if d := compareReference(t, rec.Want, got); len(d) > 0 {
			t.Errorf("%s %v %q:\n  %v", rec.ID, rec.Tags, truncate(rec.Prompt, 120), d)
			continue
		}
		matched++
	}
	t.Logf("parity: %d/%d records match the reference field for field", matched, len(recs))
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// TestContractScenarios checks the nine fixture scenarios of the reference test suite land where the
// reference puts them (level, source, creativity, header).
func TestContractScenarios(t *testing.T) {
	data, err := os.ReadFile(repoFile("testdata", "ldd", "fixtures", "thinking-levels-contract.json"))
	if err != nil {
		t.Fatal(err)
	}
	var contract struct {
		Scenarios []struct {
			Name                string   `json:"name"`
			Prompt              string   `json:"prompt"`
			AcceptLevels        []string `json:"accept_levels"`
			ExpectedSource      string   `json:"expected_dispatch_source"`
			ExpectedCreativity  *string  `json:"expected_creativity"`
			ReferenceHeader     string   `json:"reference_scorer_header"`
			ReferenceFinalLevel string   `json:"reference_final_level"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &contract); err != nil {
		t.Fatal(err)
	}
	if len(contract.Scenarios) != 9 {
		t.Fatalf("%d scenarios, want 9", len(contract.Scenarios))
	}
	w := referenceWeights(t)
	for _, sc := range contract.Scenarios {
		r := Score(sc.Prompt, nil, w)
		accepted := false
		for _, l := range sc.AcceptLevels {
			accepted = accepted || l == r.FinalLevel.String()
		}
		if !accepted || r.FinalLevel.String() != sc.ReferenceFinalLevel {
			t.Errorf("%s: final level %s, contract accepts %v, reference gives %s", sc.Name, r.FinalLevel, sc.AcceptLevels, sc.ReferenceFinalLevel)
		}
		if r.DispatchSource != sc.ExpectedSource {
			t.Errorf("%s: source %s, want %s", sc.Name, r.DispatchSource, sc.ExpectedSource)
		}
		if sc.ExpectedCreativity != nil && r.Creativity != *sc.ExpectedCreativity {
			t.Errorf("%s: creativity %s, want %s", sc.Name, r.Creativity, *sc.ExpectedCreativity)
		}
		if r.DispatchHeader != sc.ReferenceHeader {
			t.Errorf("%s: header\n  %s\nwant\n  %s", sc.Name, r.DispatchHeader, sc.ReferenceHeader)
		}
	}
}
