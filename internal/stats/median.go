package stats

import (
	"math"
	"slices"

	moremath "github.com/aclements/go-moremath/stats"
)

// sortedCopy returns xs sorted ascending without touching the caller's slice.
func sortedCopy(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// Median is the ordinary sample median (mean of the middle pair for even n).
// It returns NaN for an empty sample.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return medianSorted(sortedCopy(xs))
}

// medianSorted is Median for input already sorted ascending.
func medianSorted(s []float64) float64 {
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return float64(s[n/2-1]+s[n/2]) / 2
}

// MedianCI is the distribution-free confidence interval of the median at the
// given confidence (e.g. 0.95). ok is false when the sample is too small for
// that confidence; the unbounded side is then -Inf or +Inf.
func MedianCI(xs []float64, confidence float64) (lo, hi float64, ok bool) {
	return QuantileCI(xs, 0.5, confidence)
}

// QuantileCI is the distribution-free confidence interval of the q-quantile
// (0<q<1) from order statistics. It uses go-moremath's QuantileCI, the code
// benchstat uses, so our intervals match benchstat's (exact binomial
// accumulation up to n=30, normal approximation above). ok is false when a
// bound falls outside the sample (reported as ±Inf) or the sample is empty.
func QuantileCI(xs []float64, q, confidence float64) (lo, hi float64, ok bool) {
	n := len(xs)
	if n == 0 || !(q > 0 && q < 1) {
		return math.Inf(-1), math.Inf(1), false
	}
	s := sortedCopy(xs)
	ci := moremath.QuantileCI(n, q, confidence)
	lo, hi = math.Inf(-1), math.Inf(1)
	if ci.LoOrder >= 1 {
		lo = s[ci.LoOrder-1]
	}
	if ci.HiOrder <= n {
		hi = s[ci.HiOrder-1]
	}
	return lo, hi, ci.LoOrder >= 1 && ci.HiOrder <= n
}

// maxCISearch bounds the sample-size search of MinSamplesForCI; a confidence
// that needs more than this is treated as unreachable.
const maxCISearch = 1 << 16

// MinSamplesForCI is the smallest sample size for which MedianCI has finite
// bounds at the given confidence (6 at 0.95, 8 at 0.99). It returns -1 when
// no sample size reaches it (confidence ≥ 1 or not a number).
func MinSamplesForCI(confidence float64) int {
	if !(confidence < 1) {
		return -1
	}
	for n := 1; n <= maxCISearch; n++ {
		ci := moremath.QuantileCI(n, 0.5, confidence)
		if ci.LoOrder >= 1 && ci.HiOrder <= n {
			return n
		}
	}
	return -1
}
