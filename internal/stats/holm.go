package stats

import (
	"math"
	"slices"
)

// Holm returns Holm–Bonferroni adjusted p-values in the input order: sort
// the m p-values ascending, multiply the i-th smallest (1-based) by m−i+1,
// carry the running maximum so the adjustment stays monotone, and cap at 1.
// NaN entries stay NaN and are not counted in m. Reject a hypothesis at
// family-wise level α when its adjusted p ≤ α.
func Holm(ps []float64) []float64 {
	adj := make([]float64, len(ps))
	var idx []int
	for i, p := range ps {
		if math.IsNaN(p) {
			adj[i] = math.NaN()
			continue
		}
		idx = append(idx, i)
	}
	// Stable sort keeps equal p-values in input order: deterministic output.
	slices.SortStableFunc(idx, func(i, j int) int {
		switch {
		case ps[i] < ps[j]:
			return -1
		case ps[i] > ps[j]:
			return 1
		}
		return 0
	})
	m := len(idx)
	running := 0.0
	for rank, i := range idx {
		v := math.Min(1, float64(m-rank)*ps[i])
		running = math.Max(running, v)
		adj[i] = running
	}
	return adj
}
