package stats

import (
	"math"
	"slices"
)

// doubledMidRanks ranks values (1-based) with ties sharing their mid-rank
// and returns each rank doubled, so that mid-ranks such as 2.5 stay integers
// and the exact permutation distributions below can be built by counting.
// It also returns the size of every tie group (including groups of one).
func doubledMidRanks(values []float64) (ranks2 []int, ties []int) {
	order := make([]int, len(values))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		switch {
		case values[i] < values[j]:
			return -1
		case values[i] > values[j]:
			return 1
		}
		return 0
	})
	ranks2 = make([]int, len(values))
	for i := 0; i < len(order); {
		j := i
		for j < len(order) && values[order[j]] == values[order[i]] {
			j++
		}
		// Positions i..j-1 hold ranks i+1..j; doubled mean is i+1+j.
		for k := i; k < j; k++ {
			ranks2[order[k]] = i + 1 + j
		}
		ties = append(ties, j-i)
		i = j
	}
	return ranks2, ties
}

// hasTie reports whether any tie group has more than one member.
func hasTie(ties []int) bool {
	for _, t := range ties {
		if t > 1 {
			return true
		}
	}
	return false
}

// tieSum is Σ(t³−t) over tie groups, the usual variance correction.
func tieSum(ties []int) float64 {
	s := 0.0
	for _, t := range ties {
		ft := float64(t)
		s += float64(ft*ft*ft) - ft
	}
	return s
}

// reduceScale divides the doubled ranks by 2 when all are even (no
// half-ranks), halving the size of the counting tables. divisor is what the
// ranks were divided by (1 or 2); divide observed doubled sums by it too.
func reduceScale(ranks2 []int) (ranks []int, divisor int) {
	for _, r := range ranks2 {
		if r%2 != 0 {
			return ranks2, 1
		}
	}
	ranks = make([]int, len(ranks2))
	for i, r := range ranks2 {
		ranks[i] = r / 2
	}
	return ranks, 2
}

// twoSidedFromCounts turns a discrete null distribution (counts[s] ways of
// getting statistic s) into a two-sided p: twice the smaller tail at the
// observed value, capped at 1. Doubling the smaller tail does not assume the
// distribution is symmetric about the observation.
func twoSidedFromCounts(counts []float64, observed int) float64 {
	var below, above, total float64
	for s, c := range counts {
		total += c
		if s <= observed {
			below += c
		}
		if s >= observed {
			above += c
		}
	}
	if total == 0 {
		return math.NaN()
	}
	return math.Min(1, 2*math.Min(below, above)/total)
}

// twoSidedNormal is the two-sided p of a normal approximation with
// continuity correction: d is observed−mean, sd the standard deviation.
func twoSidedNormal(d, sd float64) float64 {
	if sd == 0 {
		return 1
	}
	ad := math.Max(math.Abs(d)-0.5, 0)
	return math.Min(1, math.Erfc(ad/sd/math.Sqrt2))
}
