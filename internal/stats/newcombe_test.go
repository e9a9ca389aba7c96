package stats

import (
	"math"
	"testing"
)

// TestNewcombeDiff checks the hybrid score interval against Newcombe (1998), "Interval estimation for
// the difference between independent proportions", Statistics in Medicine 17, table II, method 10
// (rounded to 4 places there).
func TestNewcombeDiff(t *testing.T) {
	for _, c := range []struct {
		k1, n1, k2, n2 int
		lo, hi         float64
	}{
		{56, 70, 48, 80, 0.0524, 0.3339},
		{9, 10, 3, 10, 0.1705, 0.8090},
		{5, 56, 0, 29, -0.0381, 0.1926},
		{0, 10, 0, 20, -0.1611, 0.2775},
		{10, 10, 0, 20, 0.6791, 1.0000},
	} {
		lo, hi := NewcombeDiff(c.k1, c.n1, c.k2, c.n2, 0.95)
		if math.Abs(lo-c.lo) > 6e-5 || math.Abs(hi-c.hi) > 6e-5 {
			t.Errorf("%d/%d − %d/%d: [%.4f, %.4f], want [%.4f, %.4f]", c.k1, c.n1, c.k2, c.n2, lo, hi, c.lo, c.hi)
		}
	}
	if lo, hi := NewcombeDiff(1, 0, 1, 2, 0.95); lo != -1 || hi != 1 {
		t.Errorf("empty sample: [%v, %v], want [-1, 1]", lo, hi)
	}
}
