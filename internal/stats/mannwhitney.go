package stats

import (
	"math"
	"slices"
)

// Exact-distribution limits for the Mann–Whitney U test, per sample. They
// are benchstat's (go-moremath MannWhitneyExactLimit and
// MannWhitneyTiesExactLimit) so that tune's audit agrees with benchstat on
// the same data; above them the normal approximation is used.
const (
	MannWhitneyExactLimit     = 50
	MannWhitneyTiesExactLimit = 25
)

// MannWhitneyResult is the full result of MannWhitneyTest.
type MannWhitneyResult struct {
	N1, N2 int
	U      float64 // U for x: #(x>y) + ½·#(x=y)
	P      float64 // two-sided
	Exact  bool    // P from the exact permutation distribution
	Ties   bool    // some values tie (mid-ranks were used)
}

// MannWhitneyTest is the two-sided Wilcoxon–Mann–Whitney U test.
//
// Hand-written rather than calling go-moremath's MannWhitneyUTest (which the
// tests cross-check against) because: its tie-aware exact path doubles
// CDF(min(U1,U2)), which assumes the null distribution is symmetric, and with
// ties it is not (p could exceed 1 or be off); and it returns an error for
// all-equal samples where the audit wants p=1. Here the exact p is twice the
// smaller tail of the permutation distribution of the rank sum, counted by
// dynamic programming over (doubled) mid-ranks.
func MannWhitneyTest(x, y []float64) MannWhitneyResult {
	n1, n2 := len(x), len(y)
	res := MannWhitneyResult{N1: n1, N2: n2, U: math.NaN(), P: math.NaN()}
	if n1 == 0 || n2 == 0 || hasNaN(x) || hasNaN(y) {
		return res
	}
	all := make([]float64, 0, n1+n2)
	all = append(all, x...)
	all = append(all, y...)
	ranks2, ties := doubledMidRanks(all)
	res.Ties = hasTie(ties)

	r1x2 := 0 // doubled rank sum of x
	for _, r := range ranks2[:n1] {
		r1x2 += r
	}
	res.U = float64(r1x2)/2 - float64(n1*(n1+1))/2
	if len(ties) == 1 {
		// Every value is equal: no ordering evidence at all.
		res.P = 1
		return res
	}

	limit := MannWhitneyExactLimit
	if res.Ties {
		limit = MannWhitneyTiesExactLimit
	}
	if n1 <= limit && n2 <= limit {
		res.Exact = true
		res.P = exactRankSumP(ranks2, n1)
		return res
	}
	// Normal approximation with tie and continuity correction (same formula
	// as go-moremath / benchstat).
	N := float64(n1 + n2)
	mean := float64(n1*n2) / 2
	variance := float64(n1*n2) * ((N + 1) - tieSum(ties)/float64(N*(N-1))) / 12
	res.P = twoSidedNormal(res.U-mean, math.Sqrt(variance))
	return res
}

// exactRankSumP is the exact two-sided p of the rank sum of the first n1
// entries of ranks2 among all of them, under random assignment of n1 of the
// ranks to the first sample. It counts subsets of the smaller group's size
// (the distributions of both groups' rank sums carry the same information).
func exactRankSumP(ranks2 []int, n1 int) float64 {
	N := len(ranks2)
	observed := 0
	for _, r := range ranks2[:n1] {
		observed += r
	}
	k := n1
	if N-n1 < n1 {
		k = N - n1
		total := 0
		for _, r := range ranks2 {
			total += r
		}
		observed = total - observed
	}
	ranks, divisor := reduceScale(ranks2)
	observed /= divisor
	counts := subsetSumCounts(ranks, k)
	return twoSidedFromCounts(counts, observed)
}

// subsetSumCounts returns counts[s] = number of k-element subsets of ranks
// whose sum is s. Counts are float64: C(100,50)≈1e29 exceeds any integer
// type, and the relative error of float64 is far below what a p-value needs.
//
// The ranks are taken in ascending order so that j picks among the first i
// of them can only sum to [smallest j, largest j of those i]; looping over
// that band alone, and skipping pick counts that can no longer reach k, makes
// 50 v 50 several times cheaper than the full table.
func subsetSumCounts(ranks []int, k int) []float64 {
	sorted := slices.Clone(ranks)
	slices.Sort(sorted)
	prefix := make([]int, len(sorted)+1)
	for i, r := range sorted {
		prefix[i+1] = prefix[i] + r
	}
	// dp[j][s]: ways to pick j of the ranks seen so far with sum s.
	dp := make([][]float64, k+1)
	for j := range dp {
		dp[j] = make([]float64, prefix[len(sorted)]+1)
	}
	dp[0][0] = 1
	for i, r := range sorted {
		// Before this rank, j−1 picks among the first i ranks sum to
		// [prefix[j−1], prefix[i]−prefix[i−j+1]]. Counts for j < k−(ranks
		// still to come) can never grow to k picks, so they are skipped.
		for j := min(i+1, k); j >= max(1, k-(len(sorted)-1-i)); j-- {
			prev, cur := dp[j-1], dp[j]
			for s := prefix[j-1]; s <= prefix[i]-prefix[i-j+1]; s++ {
				cur[s+r] += prev[s]
			}
		}
	}
	return dp[k]
}

// MannWhitneyMinP is the smallest two-sided p the Mann–Whitney test can give
// for samples of n1 and n2 values without ties: 2/C(n1+n2, n1), capped at 1.
// For n1=n2=1..5 it is 1, 1/3, 0.1, 0.0286, 0.0079.
func MannWhitneyMinP(n1, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	return math.Min(1, 2/chooseFloat(n1+n2, n1))
}

// MinMWUSamples is the smallest n such that two samples of n values can
// reach a two-sided Mann–Whitney p ≤ alpha (4 at alpha=0.05). It returns -1
// for alpha ≤ 0.
func MinMWUSamples(alpha float64) int {
	if !(alpha > 0) {
		return -1
	}
	for n := 1; ; n++ {
		if MannWhitneyMinP(n, n) <= alpha {
			return n
		}
	}
}

// chooseFloat is C(n, k) as a float64, by the multiplicative formula, which is
// exact while the value fits in 53 bits and then overflows gracefully to +Inf.
func chooseFloat(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	k = min(k, n-k)
	c := 1.0
	for i := 1; i <= k; i++ {
		c = float64(c*float64(n-k+i)) / float64(i)
	}
	return c
}

// logChoose is log C(n, k) from math.Lgamma.
func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

func hasNaN(xs []float64) bool {
	for _, v := range xs {
		if math.IsNaN(v) {
			return true
		}
	}
	return false
}
