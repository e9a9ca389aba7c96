package stats

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// fuzzSamples turns fuzz bytes into two samples. With mode odd the bytes are
// raw float64 bits (NaN, ±Inf, −0 reachable); otherwise each byte is a small
// value, so ties are frequent and sizes reach the normal approximation.
func fuzzSamples(data []byte, split uint8, mode uint8) (x, y []float64) {
	var vals []float64
	if mode%2 == 1 {
		for len(data) >= 8 {
			vals = append(vals, math.Float64frombits(binary.LittleEndian.Uint64(data)))
			data = data[8:]
		}
	} else {
		for _, c := range data {
			vals = append(vals, float64(int8(c))/4)
		}
	}
	k := min(int(split), len(vals))
	return vals[:k], vals[k:]
}

func FuzzMannWhitney(f *testing.F) {
	f.Add([]byte{1, 2, 3, 10, 11, 12}, uint8(3), uint8(0))
	f.Add([]byte{5, 5, 5, 5, 5}, uint8(2), uint8(0))
	f.Add(make([]byte, 120), uint8(60), uint8(0))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f, 0, 0, 0, 0, 0, 0, 0xf0, 0x7f}, uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, split uint8, mode uint8) {
		x, y := fuzzSamples(data, split, mode)
		u, p := MannWhitney(x, y)
		_, p2 := MannWhitney(y, x)
		nan := len(x) == 0 || len(y) == 0 || hasNaN(x) || hasNaN(y)
		if nan {
			if !math.IsNaN(p) {
				t.Fatalf("p=%v for empty or NaN input", p)
			}
			return
		}
		if !(p >= 0 && p <= 1) || !(u >= 0 && u <= float64(len(x)*len(y))) {
			t.Fatalf("U=%v p=%v for %v vs %v", u, p, x, y)
		}
		if math.Abs(p-p2) > 1e-12 {
			t.Fatalf("asymmetric p %v vs %v", p, p2)
		}
		diffs := slices.Concat(x, y)
		if sp := SignedRank(diffs); !hasNaN(diffs) && !(sp >= 0 && sp <= 1) {
			t.Fatalf("signed-rank p=%v", sp)
		}
	})
}
