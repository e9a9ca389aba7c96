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

// NewcombeDiff is Newcombe's hybrid score interval (his method 10) for the difference of two binomial
// proportions k1/n1 − k2/n2 at the given confidence, built from the two Wilson intervals: it keeps
// the Wilson interval's coverage with few trials and stays inside [−1, 1]. An empty sample gives the
// uninformative [−1, 1].
func NewcombeDiff(k1, n1, k2, n2 int, confidence float64) (lo, hi float64) {
	if n1 <= 0 || n2 <= 0 || k1 < 0 || k1 > n1 || k2 < 0 || k2 > n2 {
		return -1, 1
	}
	p1, p2 := float64(k1)/float64(n1), float64(k2)/float64(n2)
	l1, u1 := Wilson(k1, n1, confidence)
	l2, u2 := Wilson(k2, n2, confidence)
	d := p1 - p2
	lo = d - math.Sqrt((p1-l1)*(p1-l1)+(u2-p2)*(u2-p2))
	hi = d + math.Sqrt((u1-p1)*(u1-p1)+(p2-l2)*(p2-l2))
	return math.Max(-1, lo), math.Min(1, hi)
}
