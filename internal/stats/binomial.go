package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Wilson is the Wilson score interval for a binomial proportion k/n at the given two-sided
// confidence (0.95 for 95%). It stays inside [0, 1] and keeps a useful width at k = 0 or k = n,
// where the normal (Wald) interval collapses to a point; with the few tasks a trace log holds per
// level that is the normal case (docs/decisions.md#accuracy-additions). n = 0 gives the uninformative [0, 1].
func Wilson(k, n int, confidence float64) (lo, hi float64) {
	if n <= 0 || k < 0 || k > n {
		return 0, 1
	}
	z := distuv.UnitNormal.Quantile(1 - (1-confidence)/2)
	nf, p := float64(n), float64(k)/float64(n)
	z2 := z * z
	centre := (p + z2/(2*nf)) / (1 + z2/nf)
	half := z / (1 + z2/nf) * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	lo, hi = math.Max(0, centre-half), math.Min(1, centre+half)
	// Exact ends: at k = 0 (k = n) the lower (upper) bound is 0 (1), which the
	// arithmetic above reaches only up to rounding.
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return lo, hi
}
