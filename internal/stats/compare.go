package stats

import (
	"errors"
	"fmt"
	"math"
)

// Summary describes one arm of an audit: its median and distribution-free CI.
type Summary struct {
	N          int
	Center     float64 // Median
	Lo, Hi     float64 // CI of the median; ±Inf when !CIOK
	CIOK       bool
	Confidence float64
	Warnings   []string
}

// Summarize computes an arm's Summary. Warnings: "no samples", or the
// benchstat-style "need ≥ N samples for a confidence interval at level C".
func Summarize(xs []float64, confidence float64) Summary {
	s := Summary{N: len(xs), Center: Median(xs), Confidence: confidence}
	s.Lo, s.Hi, s.CIOK = MedianCI(xs, confidence)
	switch {
	case s.N == 0:
		s.Warnings = append(s.Warnings, "no samples")
	case !s.CIOK:
		s.Warnings = append(s.Warnings, ciWarning(confidence))
	}
	return s
}

func ciWarning(confidence float64) string {
	if need := MinSamplesForCI(confidence); need > 0 {
		return fmt.Sprintf("need ≥ %d samples for a confidence interval at level %v", need, confidence)
	}
	return fmt.Sprintf("no sample size gives a finite confidence interval at level %v", confidence)
}

// Test kinds used in Comparison.Test.
const (
	KindMannWhitney = "mann-whitney"
	KindSignedRank  = "signed-rank"
	KindSign        = "sign"
)

// Comparison is one metric compared between a baseline arm x and an arm y.
type Comparison struct {
	Test        string // KindMannWhitney, KindSignedRank or KindSign
	Exact       bool   // P from an exact distribution
	N1, N2      int    // arm sizes (pairs: both the number of pairs)
	NonZero     int    // paired tests: non-zero differences used
	Statistic   float64
	P           float64 // two-sided
	MinP        float64 // smallest P attainable at these sizes
	Alpha       float64
	Significant bool // P ≤ Alpha; print "~" otherwise (no difference detected at this n)

	CenterX, CenterY        float64 // medians
	Ratio, RatioLo, RatioHi float64 // Median(y)/Median(x) and its bootstrap CI
	Confidence              float64
	Resamples               int
	Warnings                []string
}

// CompareUnpaired compares independent arms with the Mann–Whitney U test and
// a seeded bootstrap CI (DefaultResamples, seed SeedFrom(x, y)) of the ratio
// of medians. Warnings (data, never printed): an empty arm; all values
// equal; "need ≥ N samples to detect a difference at alpha level A" when
// P > alpha and even complete separation could not have reached alpha; a
// baseline median of 0.
func CompareUnpaired(x, y []float64, alpha, confidence float64) Comparison {
	c := Comparison{Test: KindMannWhitney, N1: len(x), N2: len(y), Alpha: alpha, Confidence: confidence}
	mw := MannWhitneyTest(x, y)
	c.Exact, c.Statistic, c.P = mw.Exact, mw.U, mw.P
	c.MinP = MannWhitneyMinP(len(x), len(y))
	if len(x) == 0 || len(y) == 0 {
		c.Warnings = append(c.Warnings, "an arm has no samples")
	} else if math.IsNaN(c.P) {
		c.Warnings = append(c.Warnings, "a value is NaN: no test")
	} else if c.P > alpha && c.MinP > alpha {
		c.Warnings = append(c.Warnings, fmt.Sprintf("need ≥ %d samples to detect a difference at alpha level %v", MinMWUSamples(alpha), alpha))
	}
	c.finish(x, y, BootstrapRatioCI)
	return c
}

// PairedMethod selects the test of ComparePaired.
type PairedMethod int

const (
	PairedSignedRank PairedMethod = iota // Wilcoxon signed-rank (uses magnitudes)
	PairedSign                           // sign test (only directions)
)

// ErrUnpaired is returned by ComparePaired when the arms differ in length.
var ErrUnpaired = errors.New("paired comparison needs arms of equal length")

// ComparePaired compares paired runs (x[i] and y[i] on the same task) on the
// differences y[i]−x[i], zero differences dropped, with the signed-rank or
// sign test, and a paired bootstrap CI of the ratio of medians. Warnings as
// CompareUnpaired, the sample-size one counting non-zero differences ("need
// ≥ 6 non-zero paired differences …" at 0.05).
func ComparePaired(x, y []float64, alpha, confidence float64, method PairedMethod) (Comparison, error) {
	if len(x) != len(y) {
		return Comparison{}, fmt.Errorf("%w: %d and %d values", ErrUnpaired, len(x), len(y))
	}
	c := Comparison{N1: len(x), N2: len(y), Alpha: alpha, Confidence: confidence}
	diffs := make([]float64, len(x))
	pos, neg := 0, 0
	for i := range x {
		diffs[i] = float64(y[i] - x[i])
		switch {
		case diffs[i] > 0:
			pos++
		case diffs[i] < 0:
			neg++
		}
	}
	c.NonZero = pos + neg
	switch {
	case hasNaN(diffs):
		c.Test, c.P = KindSign, math.NaN()
		if method != PairedSign {
			c.Test = KindSignedRank
		}
		c.Statistic = math.NaN()
	case method == PairedSign:
		c.Test, c.Exact, c.Statistic, c.P = KindSign, true, float64(pos), SignTest(pos, neg)
	default:
		sr := SignedRankTest(diffs)
		c.Test, c.Exact, c.Statistic, c.P = KindSignedRank, sr.Exact, sr.WPlus, sr.P
		c.NonZero = sr.N
	}
	// Both tests' most extreme outcome, all differences one way, has p = 2·0.5^k.
	c.MinP = SignTestMinP(c.NonZero)
	if len(x) == 0 {
		c.Warnings = append(c.Warnings, "no pairs")
	} else if math.IsNaN(c.P) {
		c.Warnings = append(c.Warnings, "a value is NaN: no test")
	} else if c.P > alpha && c.MinP > alpha {
		c.Warnings = append(c.Warnings, fmt.Sprintf("need ≥ %d non-zero paired differences to detect a difference at alpha level %v", MinSignTestPairs(alpha), alpha))
	}
	c.finish(x, y, BootstrapPairedRatioCI)
	return c, nil
}

// finish fills the centres, the bootstrap ratio and the shared warnings.
func (c *Comparison) finish(x, y []float64, ci func(x, y []float64, n int, seed uint64, confidence float64) (float64, float64, float64)) {
	c.Significant = c.P <= c.Alpha
	c.CenterX, c.CenterY = Median(x), Median(y)
	c.Resamples = DefaultResamples
	c.Ratio, c.RatioLo, c.RatioHi = ci(x, y, c.Resamples, SeedFrom(x, y), c.Confidence)
	if len(x) > 0 && len(y) > 0 {
		if allEqual(x, y) {
			c.Warnings = append(c.Warnings, "all values are equal")
		}
		if c.CenterX == 0 {
			c.Warnings = append(c.Warnings, "baseline median is 0: the ratio is not a relative change")
		}
	}
}

func allEqual(xs ...[]float64) bool {
	first := math.NaN()
	for _, s := range xs {
		for _, v := range s {
			if math.IsNaN(first) {
				first = v
			} else if v != first {
				return false
			}
		}
	}
	return true
}
