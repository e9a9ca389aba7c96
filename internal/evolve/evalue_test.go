package evolve

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/ldd-tools/tune/internal/stats"
)

// The kept case: one window, 4 flagged carriers beside 12 benign eligible tasks, must pass at
// once; the reproduced noise case (three chance regressions all carrying the signal among 57 eligible
// tasks) must not.
func TestEValueKeptCaseAndNoiseCase(t *testing.T) {
	if e := EValue(4, 0, 0, 12); !(e >= Threshold) {
		t.Errorf("kept case 4/0/0/12: e = %.1f, below the threshold %.0f", e, Threshold)
	}
	if e := EValue(3, 3, 0, 51); e >= Threshold {
		t.Errorf("noise case 3/3/0/51: e = %.1f passes the threshold %.0f", e, Threshold)
	}
	if Threshold != 450 {
		t.Errorf("threshold %v, want 9/0.02 = 450", Threshold)
	}
}

// With a comparison group (d > 0), more evidence for the alternative never lowers the e-value: one more
// flagged carrier raises it, one
// more flagged non-carrier lowers it while the carriers still regress more often. (Without unflagged
// non-carriers nothing separates the groups.)
func TestEValueMonotone(t *testing.T) {
	for a := 0; a <= 12; a++ {
		for b := 0; b <= 12; b += 3 {
			for c := 0; c <= 6; c += 2 {
				for d := 4; d <= 40; d += 4 {
					e := LogEValue(a, b, c, d)
					if math.IsNaN(e) {
						t.Fatalf("NaN at %d/%d/%d/%d", a, b, c, d)
					}
					if up := LogEValue(a+1, b, c, d); up < e-1e-9 {
						t.Errorf("a+1 lowers e at %d/%d/%d/%d: %v < %v", a, b, c, d, up, e)
					}
					if dn := LogEValue(a, b, c+1, d); a*(c+1+d) > (c+1)*(a+b) && dn > e+1e-9 {
						t.Errorf("c+1 raises e at %d/%d/%d/%d: %v > %v", a, b, c, d, dn, e)
					}
				}
			}
		}
	}
}

func TestMoreNeeded(t *testing.T) {
	if k := MoreNeeded(4, 0, 0, 12); k != 0 {
		t.Errorf("the kept case needs %d more, want 0", k)
	}
	k := MoreNeeded(2, 0, 0, 12)
	if k <= 0 || !Passes(2+k, 0, 0, 12) || Passes(2+k-1, 0, 0, 12) {
		t.Errorf("MoreNeeded(2,0,0,12) = %d is not the smallest passing count", k)
	}
}

// Validity: under the null (carriers regress at the same rate as the others) the e-process, looked at
// after every task, crosses 1/α' with probability at most α'. Monte Carlo over several null rates and
// unbalanced margins; the bound checked is the Wilson upper 95 % limit of the crossing rate against α'
// = 0.05 (threshold 20, a level the sample can resolve; the real threshold 450 is crossed less often).
// TUNE_HARNESS=full plays 20000 sequences of 600 tasks per case.
func TestEValueAnytimeValid(t *testing.T) {
	reps, tasks := 300, 200
	if os.Getenv("TUNE_HARNESS") == "full" {
		reps, tasks = 20000, 600
	}
	const level = 20.0
	for i, cfg := range []struct{ rate, share float64 }{{0.05, 0.3}, {0.15, 0.1}, {0.3, 0.5}, {0.15, 0.9}, {0.5, 0.2}, {0.8, 0.05}} {
		r := rand.New(rand.NewPCG(uint64(i+1), 28))
		hits, hitsReal := 0, 0
		for rep := 0; rep < reps; rep++ {
			var n [4]int
			crossed, crossedReal := false, false
			for k := 0; k < tasks; k++ {
				carrier, flagged := r.Float64() < cfg.share, r.Float64() < cfg.rate
				switch {
				case carrier && flagged:
					n[0]++
				case carrier:
					n[1]++
				case flagged:
					n[2]++
				default:
					n[3]++
				}
				e := LogEValue(n[0], n[1], n[2], n[3])
				crossed = crossed || e >= math.Log(level)
				crossedReal = crossedReal || e >= math.Log(Threshold/float64(EvidenceFamily))
			}
			if crossed {
				hits++
			}
			if crossedReal {
				hitsReal++
			}
		}
		lo, hi := stats.Wilson(hits, reps, 0.95)
		msg := fmt.Sprintf("null rate %.2f, carrier share %.2f: sup e ≥ %.0f in %d/%d sequences (95%% CI %.4f–%.4f); ≥ %.0f (one signal's share of α): %d",
			cfg.rate, cfg.share, level, hits, reps, lo, hi, Threshold/float64(EvidenceFamily), hitsReal)
		t.Log(msg)
		if lo > 1/level {
			t.Errorf("%s: above 1/%.0f", msg, level)
		}
	}
}
