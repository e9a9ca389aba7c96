package audit

import (
	"testing"
)

// BenchmarkCompareArms is the A/B statistics of the effort testdata (12 runs, 5 metrics, 1,000
// bootstrap resamples each).
func BenchmarkCompareArms(b *testing.B) {
	arms := effortArms(b)
	for b.Loop() {
		if _, err := CompareArms(arms, ABOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
