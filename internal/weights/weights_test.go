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
