package scorer

import (
	"math/rand/v2"
	"testing"

	"github.com/ldd-tools/tune/internal/weights"
)

// The replay fast path (Levels, DispatchSource, Top2) must agree with the full Result under any weights:
// replay decides on it while reports show the Result.
func TestFastPathAgreesWithScore(t *testing.T) {
	recs := loadParity(t)
	ref := *referenceWeights(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 40; trial++ {
		w := ref
		for s := range w.Signals {
			w.Signals[s] += weights.Half(rng.IntN(9) - 4) // ±2 points in half steps
		}
		for _, r := range recs {
			d := Detect(r.Prompt, r.History)
			res := d.Score(&w)
			_, auto, final, _ := d.Levels(&w)
			if final != res.FinalLevel || auto != res.AutoLevel {
				t.Fatalf("%s: Levels %s/%s, Score %s/%s", r.ID, auto, final, res.AutoLevel, res.FinalLevel)
			}
			if got := d.DispatchSource(auto, final); got != res.DispatchSource {
				t.Fatalf("%s: DispatchSource %s, Score %s", r.ID, got, res.DispatchSource)
			}
			top, n := d.Top2(&w)
			want := res.TopSignals(2)
			if n != len(want) {
				t.Fatalf("%s: Top2 gives %d signals, TopSignals %d", r.ID, n, len(want))
			}
			for i := 0; i < n; i++ {
				if top[i].String() != want[i].Name {
					t.Fatalf("%s: Top2 %v, TopSignals %v", r.ID, top[:n], want)
				}
			}
		}
	}
}
