package evolve

import (
	"math/rand/v2"
	"testing"

	"github.com/ldd-tools/tune/internal/weights"
)

// Losses (the decision's hot path) must price every scenario exactly as Score's rows do, under any weights.
func TestLossesAgreeWithScore(t *testing.T) {
	suite, holdout := repoSuite(t)
	ref := refWeights(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		w := ref
		for s := range w.Signals {
			w.Signals[s] += weights.Half(rng.IntN(9) - 4)
		}
		w.Buckets.Edges[rng.IntN(len(w.Buckets.Edges))] += weights.Half(rng.IntN(3) - 1)
		for _, s := range []*Suite{suite, holdout} {
			losses, rows := s.Losses(&w), s.Score(&w).Rows
			for i := range rows {
				if losses[i] != rows[i].Loss {
					t.Fatalf("trial %d, %s: Losses %d, Score %d", trial, rows[i].Name, losses[i], rows[i].Loss)
				}
			}
		}
	}
}
