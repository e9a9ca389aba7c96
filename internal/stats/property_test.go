package stats

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/testutil"
)

func inUnit(p float64) bool { return p >= 0 && p <= 1 }

func TestMannWhitneyProperties(t *testing.T) {
	r := testRand(t)
	for i := range 400 {
		n1, n2 := 1+r.IntN(30), 1+r.IntN(30)
		var x, y []float64
		if i%2 == 0 {
			x, y = tiedSample(r, n1, 5, 0), tiedSample(r, n2, 5, r.IntN(3))
		} else {
			x, y = distinctSample(r, n1, 0), distinctSample(r, n2, r.Float64())
		}
		u, p := MannWhitney(x, y)
		u2, p2 := MannWhitney(y, x)
		if !inUnit(p) {
			t.Fatalf("p=%v outside [0,1] for %v %v", p, x, y)
		}
		if p < MannWhitneyMinP(n1, n2)*(1-1e-12) {
			t.Fatalf("p=%v below the attainable minimum %v", p, MannWhitneyMinP(n1, n2))
		}
		near(t, "symmetric p", p2, p, 1e-12)
		near(t, "U + U' = n1·n2", u+u2, float64(n1*n2), 0)
		// Ranks only: a monotone transform changes nothing.
		tx, ty := make([]float64, n1), make([]float64, n2)
		for i, v := range x {
			tx[i] = math.Exp(v/4) + 100
		}
		for i, v := range y {
			ty[i] = math.Exp(v/4) + 100
		}
		ut, pt := MannWhitney(tx, ty)
		near(t, "monotone U", ut, u, 0)
		near(t, "monotone p", pt, p, 1e-12)
	}
}

func TestSignedRankProperties(t *testing.T) {
	r := testRand(t)
	for range 300 {
		n := 1 + r.IntN(70)
		d := make([]float64, n)
		neg := make([]float64, n)
		for i := range d {
			d[i] = float64(r.IntN(9) - 3)
			neg[i] = -d[i]
		}
		p := SignedRank(d)
		if !inUnit(p) {
			t.Fatalf("p=%v outside [0,1]", p)
		}
		near(t, "sign flip symmetric", SignedRank(neg), p, 1e-12)
	}
}

func TestHolmProperties(t *testing.T) {
	r := testRand(t)
	for range 300 {
		m := 1 + r.IntN(12)
		ps := make([]float64, m)
		for i := range ps {
			ps[i] = r.Float64() * r.Float64() // skewed towards small p
			if r.IntN(5) == 0 && i > 0 {
				ps[i] = ps[i-1] // exact ties
			}
		}
		adj := Holm(ps)
		for i := range ps {
			if adj[i] < ps[i] || adj[i] > 1 {
				t.Fatalf("adj %v not in [raw %v, 1]", adj[i], ps[i])
			}
			if adj[i] > math.Min(1, float64(m)*ps[i])+1e-15 {
				t.Fatalf("Holm %v above Bonferroni %v", adj[i], float64(m)*ps[i])
			}
			for j := range ps {
				if ps[i] <= ps[j] && adj[i] > adj[j] {
					t.Fatalf("not monotone: p %v→%v but p %v→%v", ps[i], adj[i], ps[j], adj[j])
				}
			}
		}
	}
}

func TestFisherProperties(t *testing.T) {
	for a := 0; a <= 6; a++ {
		for b := 0; b <= 6; b++ {
			for c := 0; c <= 6; c++ {
				for d := 0; d <= 6; d++ {
					p, minP := FisherGreater(a, b, c, d), FisherMinP(a, b, c, d)
					if !inUnit(p) || !inUnit(minP) || minP > p*(1+1e-12) {
						t.Fatalf("[[%d,%d],[%d,%d]]: p=%v minP=%v", a, b, c, d, p, minP)
					}
					// Moving a case from "absent & flagged" to "present &
					// flagged" (and back in the other column) can only make
					// the signal look stronger.
					if c > 0 && b > 0 {
						if q := FisherGreater(a+1, b-1, c-1, d+1); q > p*(1+1e-12) {
							t.Fatalf("[[%d,%d],[%d,%d]]: stronger table has larger p %v > %v", a, b, c, d, q, p)
						}
					}
					if ph := Phi(a, b, c, d); !(ph >= -1-1e-12 && ph <= 1+1e-12) {
						t.Fatalf("phi %v", ph)
					}
					_, se, z := LogOddsZ(a, b, c, d)
					if math.IsNaN(z) || math.IsInf(se, 0) {
						t.Fatalf("[[%d,%d],[%d,%d]]: z=%v se=%v", a, b, c, d, z, se)
					}
				}
			}
		}
	}
}

func TestBootstrapSeeds(t *testing.T) {
	x := []float64{10, 12, 9, 11, 10, 13}
	y := []float64{15, 14, 18, 16, 15, 17}
	_, lo1, hi1 := BootstrapRatioCI(x, y, 500, 1, 0.95)
	_, lo2, hi2 := BootstrapRatioCI(x, y, 500, 2, 0.95)
	if lo1 == lo2 && hi1 == hi2 {
		t.Error("different seeds gave identical intervals; is the seed used?")
	}
	_, plo, phi := BootstrapPairedRatioCI(x, y, 500, 1, 0.95)
	if !(plo <= phi) || math.IsNaN(plo) {
		t.Errorf("paired interval [%v, %v]", plo, phi)
	}
	r, lo, hi := BootstrapPairedRatioCI(x, y[:3], 500, 1, 0.95)
	if !math.IsNaN(r) || !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Error("paired bootstrap accepted arms of different length")
	}
	// A zero baseline gives sortable ratios, never NaN.
	r, lo, hi = BootstrapRatioCI([]float64{0, 0, 0, 1}, []float64{1, 2, 3}, 500, 3, 0.95)
	if math.IsNaN(r) || math.IsNaN(lo) || math.IsNaN(hi) {
		t.Errorf("zero baseline: %v [%v, %v]", r, lo, hi)
	}
}

func TestPercentileSorted(t *testing.T) {
	a := []float64{1, 2, 3, 4, 5}
	near(t, "p0", percentileSorted(a, 0), 1, 0)
	near(t, "p1", percentileSorted(a, 1), 5, 0)
	near(t, "p.5", percentileSorted(a, 0.5), 3, 0)
	near(t, "p.1", percentileSorted(a, 0.1), 1.4, 1e-15) // numpy.percentile default
	near(t, "inf", percentileSorted([]float64{math.Inf(-1), math.Inf(1)}, 0.3), math.Inf(-1), 0)
}

// TestComparisonGolden pins whole comparisons, bootstrap included: the same
// data must give the same bytes on every run and architecture.
func TestComparisonGolden(t *testing.T) {
	base := []float64{1210, 1180, 1302, 1250, 1199, 1275, 1220, 1240, 1190, 1265}
	more := []float64{2410, 2200, 2650, 2390, 2505, 2480, 2300, 2710, 2440, 2395}
	same := []float64{1205, 1260, 1195, 1230, 1285, 1215, 1245, 1200, 1270, 1225}
	var b strings.Builder
	show := func(name string, v any) { fmt.Fprintf(&b, "%s: %+v\n", name, v) }
	show("summary base", Summarize(base, 0.95))
	show("summary n=3", Summarize(base[:3], 0.95))
	show("unpaired more", CompareUnpaired(base, more, 0.05, 0.95))
	show("unpaired same", CompareUnpaired(base, same, 0.05, 0.95))
	show("unpaired n=3", CompareUnpaired(base[:3], more[:3], 0.05, 0.95))
	show("unpaired zero baseline", CompareUnpaired([]float64{0, 0, 0, 1}, []float64{0, 1, 2, 3}, 0.05, 0.95))
	for _, m := range []PairedMethod{PairedSignedRank, PairedSign} {
		c, err := ComparePaired(base, more, 0.05, 0.95, m)
		if err != nil {
			t.Fatal(err)
		}
		show("paired more", c)
		c, _ = ComparePaired(base[:5], more[:5], 0.05, 0.95, m)
		show("paired n=5", c)
	}
	show("screen [[5,1],[2,8]]", Screen(5, 1, 2, 8, 0.05, 0.95))
	show("screen [[1,0],[1,3]]", Screen(1, 0, 1, 3, 0.05, 0.95))
	testutil.Golden(t, "comparisons.golden", []byte(b.String()))

	if _, err := ComparePaired(base, more[:3], 0.05, 0.95, PairedSign); err == nil {
		t.Error("ComparePaired accepted arms of different length")
	}
}
