package evolve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/weights"
)

func loadParityT(t testing.TB) *Parity {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot(), "testdata", "ldd", "parity.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ReadParity(f, "parity.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The measured prices quoted in docs/decisions.md#parity-price, from v0001.
func TestParityPrices(t *testing.T) {
	p := loadParityT(t)
	if p.Len() != 255 {
		t.Fatalf("%d prompts, want 255", p.Len())
	}
	w := refWeights(t)
	for _, c := range []struct {
		s    weights.Signal
		d    int
		cost float64
		over bool
	}{
		{weights.Ambiguous, 1, 0.004, false},
		{weights.LayerCrossings, 2, 0.020, false},
		{weights.Ambiguous, 2, 0.051, true},
		{weights.ContractRuleHit, 2, 0.067, true},
	} {
		cand := Change{Kind: weights.ChangeSignal, Signal: c.s, Delta: weights.Whole(c.d)}.Apply(w)
		got := PriceParity(p, &w, &cand, DefaultParityBudget, 0, 0)
		if diff := float64(got.TooHighCost) - c.cost; diff > 0.0005 || diff < -0.0005 || got.OverBudget != c.over || got.LevelsDown != 0 {
			t.Errorf("%s +%d: %s, want cost %.3f over %v", c.s, c.d, got, c.cost, c.over)
		}
	}
}

func TestReadParityErrorsNameTheLine(t *testing.T) {
	for in, want := range map[string]string{
		"{\"prompt\": \"a\"}\nnot json\n": "p.jsonl:2:",
		"{\"id\": \"x\"}\n":               "p.jsonl:1: no \"prompt\"",
	} {
		if _, err := ReadParity(strings.NewReader(in), "p.jsonl"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
	long := "{\"prompt\": \"" + strings.Repeat("a", maxParityLine) + "\"}\n"
	if _, err := ReadParity(strings.NewReader(long), "p.jsonl"); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("an over-long line: %v", err)
	}
}

func FuzzReadParity(f *testing.F) {
	f.Add([]byte("{\"id\": \"a\", \"prompt\": \"fix the typo in README.md\", \"history\": null}\n"))
	f.Add([]byte("\n{\"prompt\": \"x\"}"))
	f.Add([]byte("{\"prompt\": 3}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ReadParity(strings.NewReader(string(data)), "fuzz.jsonl")
		if err == nil && p.Len() != len(p.IDs) {
			t.Fatalf("%d detections for %d ids", p.Len(), len(p.IDs))
		}
	})
}
