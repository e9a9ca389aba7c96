package stats

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
)

// DefaultResamples is the number of bootstrap resamples used when the caller
// passes n ≤ 0 (benchseries' recommendation).
const DefaultResamples = 1000

// SeedFrom derives a bootstrap seed from the data: FNV-1a over each slice's
// length and its values' IEEE bits (−0 folded into +0). The same data always
// gives the same seed, so a report can be rerun byte for byte.
func SeedFrom(data ...[]float64) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	for _, xs := range data {
		binary.LittleEndian.PutUint64(buf[:], uint64(len(xs)))
		h.Write(buf[:])
		for _, v := range xs {
			if v == 0 {
				v = 0 // fold −0 into +0
			}
			binary.LittleEndian.PutUint64(buf[:], math.Float64bits(v))
			h.Write(buf[:])
		}
	}
	return h.Sum64()
}

// newRand is the package's one RNG constructor: PCG with a fixed second word,
// so a seed fully determines the stream.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

// medianRatio is num/den with the conventions of the package doc for a zero
// denominator, so ratios always sort (no NaN).
func medianRatio(num, den float64) float64 {
	if den == 0 {
		switch {
		case num > 0:
			return math.Inf(1)
		case num < 0:
			return math.Inf(-1)
		}
		return 1
	}
	return num / den
}

// percentileSorted is the type-7 percentile of sorted a (linear interpolation
// between the order statistics around (len−1)·p). The float64 conversions
// forbid fused multiply-add so results are identical on every architecture.
func percentileSorted(a []float64, p float64) float64 {
	n := len(a)
	if n == 0 {
		return math.NaN()
	}
	h := float64(float64(n-1) * p)
	i := int(math.Floor(h))
	if i < 0 {
		return a[0]
	}
	if i >= n-1 {
		return a[n-1]
	}
	frac := h - float64(i)
	if frac == 0 || a[i] == a[i+1] {
		return a[i]
	}
	if math.IsInf(a[i], 0) || math.IsInf(a[i+1], 0) {
		// Interpolating towards an infinity is meaningless (and -Inf..+Inf
		// would give NaN): take the nearer order statistic.
		if frac < 0.5 {
			return a[i]
		}
		return a[i+1]
	}
	return float64(a[i]*(1-frac)) + float64(a[i+1]*frac)
}

// BootstrapRatioCI is the ratio of medians Median(y)/Median(x) (y against
// baseline x) and its percentile-bootstrap confidence interval from n
// resamples (DefaultResamples when n ≤ 0), each arm resampled independently
// with a PCG stream seeded by seed (use SeedFrom(x, y)). Empty arms give
// NaNs. See the package doc for the zero-baseline convention.
func BootstrapRatioCI(x, y []float64, n int, seed uint64, confidence float64) (ratio, lo, hi float64) {
	if len(x) == 0 || len(y) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	ratio = medianRatio(Median(y), Median(x))
	rx := make([]float64, len(x))
	ry := make([]float64, len(y))
	lo, hi = bootstrapCI(n, seed, confidence, func(r *rand.Rand) float64 {
		resample(r, x, rx)
		resample(r, y, ry)
		return medianRatio(medianSorted(ry), medianSorted(rx))
	})
	return ratio, lo, hi
}

// BootstrapPairedRatioCI is BootstrapRatioCI for paired runs: pairs
// (x[i], y[i]) are resampled together, which keeps the pairing's reduced
// noise in the interval. x and y must have the same length (else NaNs).
func BootstrapPairedRatioCI(x, y []float64, n int, seed uint64, confidence float64) (ratio, lo, hi float64) {
	if len(x) == 0 || len(x) != len(y) {
		return math.NaN(), math.NaN(), math.NaN()
	}
	ratio = medianRatio(Median(y), Median(x))
	rx := make([]float64, len(x))
	ry := make([]float64, len(y))
	lo, hi = bootstrapCI(n, seed, confidence, func(r *rand.Rand) float64 {
		for i := range rx {
			j := r.IntN(len(x))
			rx[i], ry[i] = x[j], y[j]
		}
		slices.Sort(rx)
		slices.Sort(ry)
		return medianRatio(medianSorted(ry), medianSorted(rx))
	})
	return ratio, lo, hi
}

// bootstrapCI draws n statistics with one seeded stream and returns their
// equal-tailed percentile interval.
func bootstrapCI(n int, seed uint64, confidence float64, draw func(*rand.Rand) float64) (lo, hi float64) {
	if n <= 0 {
		n = DefaultResamples
	}
	if !(confidence > 0 && confidence < 1) {
		return math.NaN(), math.NaN()
	}
	r := newRand(seed)
	stats := make([]float64, n)
	for i := range stats {
		stats[i] = draw(r)
	}
	slices.Sort(stats)
	tail := (1 - confidence) / 2
	return percentileSorted(stats, tail), percentileSorted(stats, 1-tail)
}

// resample fills dst with a sorted resample (with replacement) of src.
func resample(r *rand.Rand, src, dst []float64) {
	for i := range dst {
		dst[i] = src[r.IntN(len(src))]
	}
	slices.Sort(dst)
}
