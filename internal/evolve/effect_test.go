package evolve

import (
	"testing"

	"github.com/ldd-tools/tune/internal/weights"
)

// The minimum effect (docs/decisions.md#screen): a Holm-significant signal is a candidate only when it
// is at least MinEffect more common among the flagged tasks than among the other eligible ones; below
// that it is "small-effect", however small its p.
func TestScreenMinimumEffect(t *testing.T) {
	// window: nFlagged flagged tasks, all with ambiguous, and nOther other eligible tasks, withSig of them
	// with ambiguous.
	window := func(nFlagged, nOther, withSig int) ScreenRow {
		var tasks []screenTask
		for i := range nFlagged + nOther {
			var st screenTask
			st.flagged = i < nFlagged
			st.fired[weights.Ambiguous] = st.flagged || i-nFlagged < withSig
			tasks = append(tasks, st)
		}
		return Screen(tasks, nFlagged)[weights.Ambiguous]
	}
	for _, c := range []struct {
		name                    string
		nFlagged, nOther, other int
		verdict                 string
	}{
		{"large effect", 10, 200, 20, VerdictCandidate},    // effect 1 − 0.10 = 0.90
		{"at the bound", 10, 200, 100, VerdictCandidate},   // effect 1 − 0.50 = 0.50
		{"small effect", 10, 200, 110, VerdictSmallEffect}, // effect 1 − 0.55 = 0.45, Holm p still ≤ 0.05
	} {
		r := window(c.nFlagged, c.nOther, c.other)
		t.Logf("%s: a=%d b=%d c=%d d=%d effect %.2f Holm p %.4f → %s", c.name, r.A, r.B, r.C, r.D, float64(r.Effect), float64(r.HolmP), r.Verdict)
		if r.Verdict != c.verdict {
			t.Errorf("%s: verdict %s, want %s (effect %.2f, Holm p %.4f)", c.name, r.Verdict, c.verdict, float64(r.Effect), float64(r.HolmP))
		}
		if c.verdict == VerdictSmallEffect && !(float64(r.HolmP) <= Alpha && float64(r.Effect) < MinEffect) {
			t.Errorf("%s: Holm p %.4f, effect %.2f: the case must be significant with an effect below %.2f", c.name, float64(r.HolmP), float64(r.Effect), MinEffect)
		}
	}
}
