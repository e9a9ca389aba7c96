package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// SignTest is the exact two-sided sign test (McNemar exact test on the
// discordant pairs): the probability, under Binomial(pos+neg, ½), of a split
// at least as uneven as the observed one. pos+neg = 0 gives 1.
func SignTest(pos, neg int) (p float64) {
	n := pos + neg
	if pos < 0 || neg < 0 {
		return math.NaN()
	}
	if n == 0 || pos == neg {
		return 1
	}
	k := min(pos, neg)
	if k == 0 {
		// Exact closed form; also avoids any rounding in the binomial CDF.
		return math.Min(1, 2*math.Pow(0.5, float64(n)))
	}
	b := distuv.Binomial{N: float64(n), P: 0.5}
	return math.Min(1, 2*b.CDF(float64(k)))
}

// SignTestMinP is the smallest two-sided sign-test p with k discordant pairs:
// min(1, 2·0.5^k).
func SignTestMinP(k int) float64 {
	if k <= 0 {
		return 1
	}
	return math.Min(1, 2*math.Pow(0.5, float64(k)))
}

// MinSignTestPairs is the smallest number of discordant pairs, all in one
// direction, for which the two-sided sign test can reach p ≤ alpha (6 at
// 0.05). It returns -1 for alpha ≤ 0.
func MinSignTestPairs(alpha float64) int {
	if !(alpha > 0) {
		return -1
	}
	for k := 1; ; k++ {
		if SignTestMinP(k) <= alpha {
			return k
		}
	}
}

// SignedRankExactLimit is the largest number of non-zero differences for
// which SignedRankTest uses the exact distribution.
const SignedRankExactLimit = 50

// SignedRankResult is the full result of SignedRankTest.
type SignedRankResult struct {
	N     int     // non-zero differences used
	Zeros int     // zero differences dropped
	WPlus float64 // sum of the ranks of positive differences
	P     float64 // two-sided
	Exact bool
	Ties  bool // some |d| tie (mid-ranks were used)
}

// SignedRankTest is the two-sided Wilcoxon signed-rank test. Zero
// differences are dropped; tied |d| share mid-ranks. With at most
// SignedRankExactLimit non-zero differences the p-value is exact: every one
// of the 2^n sign patterns is equally likely under the null, and the
// distribution of W+ is counted by dynamic programming (neither gonum nor
// go-moremath has this test). Above the limit, the normal approximation with
// tie and continuity correction is used. NaN differences give p=NaN.
func SignedRankTest(diffs []float64) SignedRankResult {
	var abs []float64
	var positive []bool
	res := SignedRankResult{}
	for _, d := range diffs {
		switch {
		case math.IsNaN(d):
			res.P, res.WPlus = math.NaN(), math.NaN()
			return res
		case d == 0:
			res.Zeros++
		default:
			abs = append(abs, math.Abs(d))
			positive = append(positive, d > 0)
		}
	}
	res.N = len(abs)
	if res.N == 0 {
		res.P = 1
		return res
	}
	ranks2, ties := doubledMidRanks(abs)
	res.Ties = hasTie(ties)
	wPlus2, total2 := 0, 0
	for i, r := range ranks2 {
		total2 += r
		if positive[i] {
			wPlus2 += r
		}
	}
	res.WPlus = float64(wPlus2) / 2
	if res.N <= SignedRankExactLimit {
		res.Exact = true
		ranks, divisor := reduceScale(ranks2)
		res.P = twoSidedFromCounts(signedRankCounts(ranks), wPlus2/divisor)
		return res
	}
	n := float64(res.N)
	mean := float64(total2) / 4
	variance := float64(n*(n+1)*(2*n+1))/24 - tieSum(ties)/48
	res.P = twoSidedNormal(res.WPlus-mean, math.Sqrt(variance))
	return res
}

// signedRankCounts returns counts[s] = number of subsets of ranks (the
// positive differences) whose rank sum is s.
func signedRankCounts(ranks []int) []float64 {
	maxSum := 0
	for _, r := range ranks {
		maxSum += r
	}
	counts := make([]float64, maxSum+1)
	counts[0] = 1
	seen := 0
	for _, r := range ranks {
		seen += r
		for s := seen; s >= r; s-- {
			counts[s] += counts[s-r]
		}
	}
	return counts
}
