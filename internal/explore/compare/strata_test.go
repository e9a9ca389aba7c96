package compare

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// compareLogs compares the arms over several logs read one after the other, each under its own name.
func compareLogs(t testing.TB, texts []string, w *weights.Weights) *Result {
	var all []*traceparse.Task
	for i, text := range texts {
		res, err := traceparse.Parse(strings.NewReader(text), string(rune('a'+i))+".log")
		if err != nil {
			t.Fatal(err)
		}
		for j := range res.Tasks {
			all = append(all, &res.Tasks[j])
		}
	}
	return Compare(Input{Active: w, Stream: func(yield func(*traceparse.Task) bool) {
		for _, task := range all {
			if !yield(task) {
				return
			}
		}
	}})
}

// Two projects, each with its own tune.toml: one explores a fifth of its near-edge tasks and regresses
// rarely, the other explores 2 % and regresses half the time; within each the level makes no
// difference. Pooled, the raised arm is mostly the first project's and the control arm mostly the
// second's, so the control arm "regresses more" (Simpson): the e-value must compare the arms within
// each log, as the detection does (docs/decisions.md#evidence-per-log,
// docs/decisions.md#fourth-review-the-watch-state-and-explore). The same worlds with a planted level
// effect in both projects must still be reported.
func TestCompareLogsWithOtherShares(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	w := testutil.ReferenceWeights()
	const runs = 100
	for _, c := range []struct {
		name             string
		a, b             world
		minRate, maxRate float64
	}{
		{"no effect in either log", world{share: 0.2, pControl: 0.05, pRaised: 0.05, near: 600, routine: 100},
			world{share: 0.02, pControl: 0.5, pRaised: 0.5, near: 600, routine: 100}, 0, 0.05},
		{"an effect in both logs", world{share: 0.2, pControl: 0.4, pRaised: 0.1, near: 600, routine: 100},
			world{share: 0.1, pControl: 0.4, pRaised: 0.1, near: 600, routine: 100}, 0.8, 1},
	} {
		hits := 0
		for seed := range uint64(runs) {
			r := rand.New(rand.NewPCG(seed, 29))
			got := compareLogs(t, []string{c.a.log(r, &w), c.b.log(r, &w)}, &w)
			if got.Edges[weights.L1].Verdict == RaisedRegressesLess {
				hits++
			}
		}
		lo, hi := stats.Wilson(hits, runs, 0.95)
		rate := float64(hits) / runs
		t.Logf("%s: %q in %d/%d runs = %.3f [%.3f, %.3f]", c.name, RaisedRegressesLess, hits, runs, rate, lo, hi)
		if rate < c.minRate || rate > c.maxRate {
			t.Errorf("%s: %q in %.3f of runs, want %.2f–%.2f", c.name, RaisedRegressesLess, rate, c.minRate, c.maxRate)
		}
	}
}

// The e-value stays valid when the arms are unbalanced (share 0.05: one raised task for nineteen
// control ones) and the analysis is looked at again and again: with no level effect, the share of
// histories that ever reach one edge's threshold at a look every 25 near-edge tasks stays within
// 1/Threshold (Ville's inequality for an e-process).
func TestEValueUnbalancedArmsAnytime(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	const runs, tasks, every = 2000, 1000, 25
	for _, c := range []struct{ share, p float64 }{{0.05, 0.25}, {0.05, 0.05}, {0.2, 0.25}, {0.05, 0.6}} {
		r := rand.New(rand.NewPCG(uint64(c.share*1000), uint64(c.p*1000)))
		hits := 0
		for range runs {
			var tab evolve.Table // control regressed, not, raised regressed, not
			for i := 1; i <= tasks; i++ {
				a := 0
				if r.Float64() < c.share {
					a = 2
				}
				if r.Float64() < c.p {
					tab[a]++
				} else {
					tab[a+1]++
				}
				if i%every == 0 && evolve.LogEValueStrata([]evolve.Table{tab}) >= math.Log(Threshold) {
					hits++
					break
				}
			}
		}
		lo, hi := stats.Wilson(hits, runs, 0.95)
		t.Logf("share %.2f, both arms %.2f: ever ≥ %v in %d/%d histories = %.4f [%.4f, %.4f] (bound %.4f)", c.share, c.p, Threshold, hits, runs,
			float64(hits)/runs, lo, hi, 1/Threshold)
		if lo > 1/Threshold {
			t.Errorf("share %.2f, both arms %.2f: the e-value passed %d/%d times, beyond 1/%v", c.share, c.p, hits, runs, Threshold)
		}
	}
}

// One project that changes its share while its rates drift, with no level effect: the first half
// explores a fifth of its near-edge tasks and regresses 5 %, the second a fiftieth and regresses 50 %.
// Pooled within the log, the control arm (mostly of the second half) regresses far more than the raised
// arm (mostly of the first) and the higher level seems to help; compared within each recorded share
// (explore_share=), it does not.
func TestCompareAShareChangedWithinALog(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	w := testutil.ReferenceWeights()
	const runs = 100
	first := world{share: 0.2, pControl: 0.05, pRaised: 0.05, near: 600, routine: 100}
	second := world{share: 0.02, pControl: 0.5, pRaised: 0.5, near: 600, routine: 100}
	hits := 0
	for seed := range uint64(runs) {
		r := rand.New(rand.NewPCG(seed, 31))
		var all []*traceparse.Task
		for _, text := range []string{first.log(r, &w), second.log(r, &w)} {
			res, err := traceparse.Parse(strings.NewReader(text), "a.log")
			if err != nil {
				t.Fatal(err)
			}
			for j := range res.Tasks {
				all = append(all, &res.Tasks[j])
			}
		}
		got := Compare(Input{Active: &w, Stream: func(yield func(*traceparse.Task) bool) {
			for _, task := range all {
				if !yield(task) {
					return
				}
			}
		}})
		if got.Edges[weights.L1].Verdict == RaisedRegressesLess {
			hits++
		}
	}
	lo, hi := stats.Wilson(hits, runs, 0.95)
	t.Logf("a share changed within a log, no level effect: %q in %d/%d runs [%.3f, %.3f]", RaisedRegressesLess, hits, runs, lo, hi)
	if hits > 5 {
		t.Errorf("%q in %d of %d runs with no level effect: the shares of one log are pooled", RaisedRegressesLess, hits, runs)
	}
}
