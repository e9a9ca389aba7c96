package weights

import (
	"math"
	"strings"
	"testing"
)

// Plain is String without its forced '+', for every weight near zero and at the extremes.
func TestPlainIsStringUnsigned(t *testing.T) {
	for _, h := range append([]Half{math.MaxInt32, math.MinInt32 + 1, 1 << 40, -(1 << 40)}, halfRange(-1000, 1000)...) {
		if got, want := h.Plain(), strings.TrimPrefix(h.String(), "+"); got != want {
			t.Errorf("Half(%d).Plain() = %q, want %q", h, got, want)
		}
	}
}

func halfRange(from, to int) []Half {
	var hs []Half
	for v := from; v <= to; v++ {
		hs = append(hs, Half(v))
	}
	return hs
}

// TestBreakEven: the excess from which raising levels pays under too_low 2, too_high 1 — what the loss
// rule and the watch's not-helping null both read.
func TestBreakEven(t *testing.T) {
	c := Cost{TooLow: 2, TooHigh: 1}
	for _, tc := range []struct {
		lifted, liftedLevels, allLevels, want float64
	}{
		{20, 20, 20, 1.0 / 3}, // only the lifted tasks rise, one level each
		{20, 20, 40, 2.0 / 3}, // 20 more levels on tasks that did not need them
		{10, 20, 30, 0.75},    // lifted two levels each
		{10, 10, 30, 1},       // never pays: 30 levels against a slope of 30
		{0, 0, 5, 1},          // lifts nothing
	} {
		if got := c.BreakEven(tc.lifted, tc.liftedLevels, tc.allLevels); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("BreakEven(%g, %g, %g) = %g, want %g", tc.lifted, tc.liftedLevels, tc.allLevels, got, tc.want)
		}
	}
}
