package stats

import (
	"testing"

	moremath "github.com/aclements/go-moremath/stats"
)

func BenchmarkBootstrap(b *testing.B) {
	r := testRand(b)
	x, y := distinctSample(r, 20, 10), distinctSample(r, 20, 12)
	seed := SeedFrom(x, y)
	for b.Loop() {
		BootstrapRatioCI(x, y, DefaultResamples, seed, 0.95)
	}
}

// The two MWU benchmarks compare our exact 50v50 (the costliest exact case)
// with go-moremath's on the same data; the ratio goes in the report.
func BenchmarkMannWhitneyExact50(b *testing.B) {
	r := testRand(b)
	x, y := distinctSample(r, 50, 0), distinctSample(r, 50, 0.3)
	for b.Loop() {
		MannWhitney(x, y)
	}
}

func BenchmarkMoremathMannWhitneyExact50(b *testing.B) {
	r := testRand(b)
	x, y := distinctSample(r, 50, 0), distinctSample(r, 50, 0.3)
	for b.Loop() {
		moremath.MannWhitneyUTest(x, y, moremath.LocationDiffers)
	}
}
