package stats

import (
	"math"
	"testing"
)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(want) && math.IsNaN(got) {
		return
	}
	if math.IsInf(want, 0) && got == want {
		return
	}
	if !(math.Abs(got-want) <= tol) {
		t.Errorf("%s = %.10g, want %.10g (±%g)", name, got, want, tol)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4, 10}, 3}, // gonum LinInterp gives 2.5 here (anchors gotcha)
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7}, 7},
		{[]float64{10, 1}, 5.5},
		{nil, math.NaN()},
	} {
		near(t, "Median", Median(tc.xs), tc.want, 0)
	}
	xs := []float64{3, 1, 2}
	Median(xs)
	if xs[0] != 3 || xs[1] != 1 {
		t.Errorf("Median sorted the caller's slice: %v", xs)
	}
}

func TestMedianCI(t *testing.T) {
	// benchstat: at 95% a median CI needs ≥ 6 samples; n=5 still has -Inf.
	lo, hi, ok := MedianCI([]float64{5, 4, 3, 2, 1}, 0.95)
	if ok || !math.IsInf(lo, -1) {
		t.Errorf("n=5: got [%v, %v] ok=%v, want -Inf lower bound and ok=false", lo, hi, ok)
	}
	lo, hi, ok = MedianCI([]float64{6, 5, 4, 3, 2, 1}, 0.95)
	if !ok || lo != 1 || hi != 6 {
		t.Errorf("n=6: got [%v, %v] ok=%v, want [1, 6] true", lo, hi, ok)
	}
	if got := MinSamplesForCI(0.95); got != 6 {
		t.Errorf("MinSamplesForCI(0.95) = %d, want 6", got)
	}
	if got := MinSamplesForCI(0.99); got != 8 {
		t.Errorf("MinSamplesForCI(0.99) = %d, want 8", got)
	}
	if got := MinSamplesForCI(1); got != -1 {
		t.Errorf("MinSamplesForCI(1) = %d, want -1", got)
	}
}

func TestMannWhitneyPublished(t *testing.T) {
	// Smallest two-sided p with n per side, completely separated samples:
	// 2/C(2n,n) = 1, 1/3, 0.1, 0.0286, 0.0079 (benchstat anone.go table).
	want := []float64{1, 1.0 / 3, 0.1, 2.0 / 70, 2.0 / 252}
	for n := 1; n <= 5; n++ {
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i], y[i] = float64(i), float64(i+n)
		}
		u, p := MannWhitney(x, y)
		near(t, "U", u, 0, 0)
		near(t, "p", p, want[n-1], 1e-12)
		near(t, "MannWhitneyMinP", MannWhitneyMinP(n, n), want[n-1], 1e-12)
		// Swapping the arms gives U' = n1·n2 − U and the same p.
		u2, p2 := MannWhitney(y, x)
		near(t, "U swapped", u2, float64(n*n), 0)
		near(t, "p swapped", p2, p, 1e-15)
	}
	if got := MinMWUSamples(0.05); got != 4 {
		t.Errorf("MinMWUSamples(0.05) = %d, want 4", got)
	}
	// scipy.stats.mannwhitneyu([1,2,3,4,5],[6,7,8,9,10,11,12], method="exact"):
	// U=0, p = 2/C(12,5) = 2/792.
	_, p := MannWhitney([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10, 11, 12})
	near(t, "p 5v7", p, 2.0/792, 1e-15)
	// Hand count: x={1,3}, y={2,4}: rank sums of x over the 6 subsets are
	// 3,4,5,5,6,7; observed 4 → P(≤4)=2/6, p=2/3.
	u, p := MannWhitney([]float64{1, 3}, []float64{2, 4})
	near(t, "U 1,3 vs 2,4", u, 1, 0)
	near(t, "p 1,3 vs 2,4", p, 2.0/3, 1e-15)
}

func TestMannWhitneyEdges(t *testing.T) {
	u, p := MannWhitney(nil, []float64{1})
	if !math.IsNaN(u) || !math.IsNaN(p) {
		t.Errorf("empty arm: got %v %v, want NaN NaN", u, p)
	}
	u, p = MannWhitney([]float64{2, 2}, []float64{2, 2, 2})
	near(t, "all equal U", u, 3, 0)
	near(t, "all equal p", p, 1, 0)
}

func TestFisher(t *testing.T) {
	// Reference value: [[5,1],[2,8]] one-sided greater p = 0.02448 (scipy, go-moremath).
	near(t, "FisherGreater", FisherGreater(5, 1, 2, 8), 0.024475524475524, 1e-12)
	// Margins rows 6/10, cols 7/9: the most extreme table is a=6:
	// C(7,6)C(9,0)/C(16,6) = 7/8008.
	near(t, "FisherMinP", FisherMinP(5, 1, 2, 8), 7.0/8008, 1e-15)
	near(t, "FisherGreater at minimum a", FisherGreater(0, 6, 7, 3), 1, 0)
	// 2×2 with one row: p of a=1 given margins 1 row of 1, 1 flagged of 2 = 1/2.
	near(t, "FisherGreater tiny", FisherGreater(1, 0, 0, 1), 0.5, 1e-15)
	near(t, "FisherGreater negative", FisherGreater(-1, 0, 0, 1), math.NaN(), 0)
}

func TestPhiAndLogOdds(t *testing.T) {
	// Reference value: phi 0.618 on the 16-row example, i.e. [[5,1],[2,8]].
	near(t, "Phi", Phi(5, 1, 2, 8), 0.6180700462, 1e-9)
	near(t, "Phi empty margin", Phi(0, 0, 3, 4), 0, 0)
	near(t, "Phi perfect", Phi(3, 0, 0, 4), 1, 1e-15)
	near(t, "Phi inverse", Phi(0, 3, 4, 0), -1, 1e-15)
	// statsmodels Table2x2([[5,1],[2,8]]): log OR = log(40/2) = log 20,
	// SE = sqrt(1/5+1+1/2+1/8).
	lor, se, z := LogOddsZ(5, 1, 2, 8)
	near(t, "logOR", lor, math.Log(20), 1e-12)
	near(t, "SE", se, math.Sqrt(0.2+1+0.5+0.125), 1e-12)
	near(t, "z", z, math.Log(20)/math.Sqrt(1.825), 1e-12)
	// Haldane–Anscombe: a zero cell adds 0.5 everywhere.
	lor, se, _ = LogOddsZ(5, 0, 2, 8)
	near(t, "logOR haldane", lor, math.Log(5.5*8.5/(0.5*2.5)), 1e-12)
	near(t, "SE haldane", se, math.Sqrt(1/5.5+1/0.5+1/2.5+1/8.5), 1e-12)
}

func TestJeffreys(t *testing.T) {
	// Reference value: Jeffreys 95% for 2/9 is [0.049, 0.544].
	lo, hi := JeffreysInterval(2, 9, 0.95)
	near(t, "lo", lo, 0.049, 0.0005)
	near(t, "hi", hi, 0.544, 0.0005)
	lo, hi = JeffreysInterval(0, 10, 0.95)
	near(t, "lo k=0", lo, 0, 0)
	if !(hi > 0 && hi < 0.3) {
		t.Errorf("hi for 0/10 = %v, want in (0, 0.3)", hi)
	}
	lo, hi = JeffreysInterval(10, 10, 0.95)
	near(t, "hi k=n", hi, 1, 0)
	if !(lo > 0.7 && lo < 1) {
		t.Errorf("lo for 10/10 = %v, want in (0.7, 1)", lo)
	}
}

func TestHolm(t *testing.T) {
	// statsmodels multipletests([0.01,0.04,0.03,0.005], method="holm").
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		near(t, "Holm", got[i], want[i], 1e-15)
	}
	got = Holm([]float64{0.5, math.NaN(), 0.01})
	near(t, "Holm NaN kept", got[1], math.NaN(), 0)
	near(t, "Holm m excludes NaN", got[2], 0.02, 1e-15)
	near(t, "Holm cap", got[0], 0.5, 1e-15)
	if len(Holm(nil)) != 0 {
		t.Error("Holm(nil) not empty")
	}
}

func TestSignTest(t *testing.T) {
	for k := 1; k <= 12; k++ {
		want := math.Min(1, 2*math.Pow(0.5, float64(k)))
		near(t, "SignTest all one way", SignTest(k, 0), want, 1e-15)
		near(t, "SignTest mirrored", SignTest(0, k), want, 1e-15)
		near(t, "SignTestMinP", SignTestMinP(k), want, 1e-15)
	}
	// statsmodels mcnemar([[0,5],[1,0]], exact=True): 2·(C(6,0)+C(6,1))/64 = 14/64.
	near(t, "SignTest 5/1", SignTest(5, 1), 14.0/64, 1e-12)
	near(t, "SignTest 3/3", SignTest(3, 3), 1, 0)
	near(t, "SignTest none", SignTest(0, 0), 1, 0)
	if got := MinSignTestPairs(0.05); got != 6 {
		t.Errorf("MinSignTestPairs(0.05) = %d, want 6", got)
	}
}

func TestSignedRank(t *testing.T) {
	// scipy.stats.wilcoxon([1,2,3,-4,5]): W-=4, P(W≤4) = 7/32, p = 14/32.
	r := SignedRankTest([]float64{1, 2, 3, -4, 5})
	near(t, "W+", r.WPlus, 11, 0)
	near(t, "p", r.P, 0.4375, 1e-15)
	if !r.Exact {
		t.Error("n=5 not exact")
	}
	// Six positive differences: 2/64 (same floor as the sign test).
	near(t, "all positive", SignedRank([]float64{1, 2, 3, 4, 5, 6}), 2.0/64, 1e-15)
	// Zeros are dropped.
	r = SignedRankTest([]float64{0, 0, 1, 2, 3, 4, 5, 6})
	if r.N != 6 || r.Zeros != 2 {
		t.Errorf("N=%d Zeros=%d, want 6 and 2", r.N, r.Zeros)
	}
	near(t, "no differences", SignedRank([]float64{0, 0}), 1, 0)
	// Ties: |d| = 1,1,2 → mid-ranks 1.5,1.5,3; signs +,-,+: W+=4.5 of 6.
	// The 8 sign patterns give W+ ∈ {0,1.5,1.5,3,3,4.5,4.5,6}; P(W+≥4.5)=3/8.
	r = SignedRankTest([]float64{1, -1, 2})
	near(t, "W+ ties", r.WPlus, 4.5, 0)
	near(t, "p ties", r.P, 0.75, 1e-15)
}

func TestBootstrapReproducible(t *testing.T) {
	x := []float64{100, 110, 95, 105, 102, 98, 120, 101}
	y := []float64{210, 190, 205, 220, 199, 230, 201, 215}
	seed := SeedFrom(x, y)
	r1, lo1, hi1 := BootstrapRatioCI(x, y, 0, seed, 0.95)
	r2, lo2, hi2 := BootstrapRatioCI(x, y, DefaultResamples, seed, 0.95)
	if r1 != r2 || lo1 != lo2 || hi1 != hi2 {
		t.Errorf("same seed, different result: %v %v %v vs %v %v %v", r1, lo1, hi1, r2, lo2, hi2)
	}
	near(t, "ratio", r1, Median(y)/Median(x), 0)
	if !(lo1 <= r1 && r1 <= hi1) || !(lo1 > 1.5 && hi1 < 2.5) {
		t.Errorf("CI [%v, %v] around %v not plausible for a 2x change", lo1, hi1, r1)
	}
	if SeedFrom(x, y) == SeedFrom(y, x) {
		t.Error("SeedFrom ignores the order of its arguments")
	}
	if SeedFrom([]float64{0}) != SeedFrom([]float64{math.Copysign(0, -1)}) {
		t.Error("SeedFrom distinguishes -0 from 0")
	}
}

// TestWilson checks the interval against the closed form evaluated independently (CPython 3.11,
// z = 1.959963984540054); 3/10 gives the textbook [0.108, 0.603].
func TestWilson(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 10, 0, 0.2775327998628892},
		{10, 10, 0.7224672001371107, 1},
		{3, 10, 0.10779126740630099, 0.6032218525388546},
		{1, 2, 0.09453120573423074, 0.9054687942657693},
	} {
		lo, hi := Wilson(c.k, c.n, 0.95)
		if math.Abs(lo-c.lo) > 1e-9 || math.Abs(hi-c.hi) > 1e-9 {
			t.Errorf("Wilson(%d, %d) = [%v, %v], want [%v, %v]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
	if lo, hi := Wilson(0, 0, 0.95); lo != 0 || hi != 1 {
		t.Errorf("Wilson(0, 0) = [%v, %v], want [0, 1]", lo, hi)
	}
}
