package evolve

// The independent review of the carriers at L2+ (docs/decisions.md#the-carriers-at-l2), a helper session
// with a population generator of its own: signals drawn independently, a history of 60–400 tasks, 1,000
// histories per world; the decision is Screen → rankChanges on the history's cells, with and without
// the tasks marked as run at L2+; "truth pays" when +1 or +2 on the planted signal pays at the true
// excess of lifting (low carriers' rate − a lifted carrier's) on that history. Gated:
// TUNE_HARNESS=full go test ./internal/evolve -run TestReviewHighRule -v (TUNE_REVIEW_HIGH_SEEDS sets
// the histories per world, TUNE_REVIEW_HIGH_ONLY a world's name prefix).

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/weights"
)

// rvWorld is a population: regression rates by group and the truth of lifting.
type rvWorld struct {
	name string
	// lowCar: eligible (L0/L1) carriers of the planted signal; highCar: carriers dispatched at L2+;
	// lowOther/highOther: the non-carriers at L0/L1 and at L2+.
	lowCar, highCar, lowOther, highOther float64
	// lifted is the rate a low carrier would regress at once lifted to L2+ (the truth): the true
	// excess of lifting is lowCar − lifted.
	lifted float64
	// force, when set, fixes the number of carriers at L2+ with a negative cue to a value in [lo, hi].
	force *[2]int
	// probs overrides the signal probabilities.
	probs *[weights.NumSignals]float64
	// insensitive marks a world where no step can help and the carriers at L2+ are not few; alike one
	// where the carriers at L2+ regress like the other tasks there, so the rule must cost nothing.
	insensitive, alike bool
}

const rvSignal = weights.LayerCrossings

var rvProbs = [weights.NumSignals]float64{
	weights.Greenfield: 0.10, weights.Components: 0.10, weights.CrossLayer: 0.15, weights.Ambiguous: 0.15,
	weights.ExplicitBugfix: 0.40, weights.SingleFile: 0.35, weights.LayerCrossings: 0.25,
	weights.ContractRuleHit: 0.08, weights.UnknownFileTerritory: 0.20,
}

// rvTask draws one task's signals.
func rvTask(rng *rand.Rand, probs *[weights.NumSignals]float64) []weights.Signal {
	var sigs []weights.Signal
	for s := range weights.NumSignals {
		if rng.Float64() < probs[s] {
			sigs = append(sigs, weights.Signal(s))
		}
	}
	return sigs
}

// rvHistory draws one history of n tasks (all auto, closed, settled), three a day.
func rvHistory(rng *rand.Rand, w *weights.Weights, wd rvWorld, n int) []screenCell {
	probs := &rvProbs
	if wd.probs != nil {
		probs = wd.probs
	}
	mk := func(sigs []weights.Signal) (screenTask, bool) {
		t := newScreenTask(sigs, 0, false, false)
		low := t.level(w) <= weights.L1
		car := t.fired[rvSignal]
		var p float64
		switch {
		case low && car:
			p = wd.lowCar
		case low:
			p = wd.lowOther
		case car:
			p = wd.highCar
		default:
			p = wd.highOther
		}
		reg := rng.Float64() < p
		t.eligible, t.flagged = low, low && reg
		t.ranHigh, t.regressedHigh = !low, !low && reg
		return t, !low && car && t.canRunLow(w)
	}
	var tasks []screenTask
	var hc []int
	for range n {
		t, isHC := mk(rvTask(rng, probs))
		if isHC {
			hc = append(hc, len(tasks))
		}
		tasks = append(tasks, t)
	}
	if wd.force != nil {
		target := wd.force[0] + rng.IntN(wd.force[1]-wd.force[0]+1)
		drop := map[int]bool{}
		for len(hc) > target {
			i := rng.IntN(len(hc))
			drop[hc[i]] = true
			hc = append(hc[:i], hc[i+1:]...)
		}
		var kept []screenTask
		for i, t := range tasks {
			if !drop[i] {
				kept = append(kept, t)
			}
		}
		tasks = kept
		for have := len(hc); have < target; {
			sigs := rvTask(rng, probs)
			if !slices.Contains(sigs, rvSignal) {
				sigs = append(sigs, rvSignal)
			}
			t, isHC := mk(sigs)
			if isHC {
				// placed at a random position of the history
				at := rng.IntN(len(tasks) + 1)
				tasks = append(tasks[:at], append([]screenTask{t}, tasks[at:]...)...)
				have++
			}
		}
	}
	cells := make([]screenCell, len(tasks))
	span := max(1, len(tasks)/3)
	for i, t := range tasks {
		t.day = 20000 + int32(i*span/len(tasks))
		cells[i] = screenCell{t, 1}
	}
	return cells
}

// rvDecide is the proposal on the planted signal (ranked[0], as propose takes it) and the step.
func rvDecide(tasks []screenCell, w *weights.Weights) (passed, proposed bool, step weights.Half, g Gain) {
	nFlagged := 0
	for _, c := range tasks {
		if c.flagged {
			nFlagged += c.n
		}
	}
	rows := Screen(tasks, nFlagged, Strata{})
	passed = rows[rvSignal].Verdict == VerdictCandidate
	if len(Tied(rows)) > 0 {
		return passed, false, 0, g
	}
	ranked, _, _ := rankChanges(rows, tasks, w, w, nil, nil)
	if len(ranked) > 0 && ranked[0].Change.Signal == rvSignal && ranked[0].Change.Kind == weights.ChangeSignal {
		return passed, true, ranked[0].Change.Delta, ranked[0]
	}
	return passed, false, 0, g
}

// rvTruth says whether +1 or +2 on the planted signal pays at the true excess on this population.
func rvTruth(tasks []screenCell, w *weights.Weights, wd rvWorld) bool {
	e := wd.lowCar - wd.lifted
	if e <= 0 {
		return false
	}
	for _, d := range stepSizes {
		c := Change{Kind: weights.ChangeSignal, Signal: rvSignal, Delta: d}
		cand := c.Apply(*w)
		r := raiseOf(w, &cand, tasks)
		if r.lifted > 0 && e > w.Cost.BreakEven(r.lifted, r.liftedLevels, r.allLevels) {
			return true
		}
	}
	return false
}

type rvCount struct{ proposed, agree, passed, passedAgree, truth, n int }

func rvCI(k, n int) string {
	lo, hi := stats.Wilson(k, n, 0.95)
	return fmt.Sprintf("%5.1f%% [%4.1f,%4.1f]", 100*float64(k)/float64(max(n, 1)), 100*lo, 100*hi)
}

func TestReviewHighRule(t *testing.T) {
	if os.Getenv("TUNE_HARNESS") != "full" {
		t.Skip("TUNE_HARNESS=full runs the review's populations (a minute)")
	}
	seeds := 1000
	if s, err := strconv.Atoi(os.Getenv("TUNE_REVIEW_HIGH_SEEDS")); err == nil && s > 0 {
		seeds = s
	}
	w := refWeights(t)
	few, many := [2]int{0, 3}, [2]int{50, 80}
	worlds := []rvWorld{
		{name: "a1 level-insensitive p=.40", lowCar: .40, highCar: .40, lowOther: .05, highOther: .05, lifted: .40, insensitive: true},
		{name: "a2 level-insensitive p=.75", lowCar: .75, highCar: .75, lowOther: .05, highOther: .05, lifted: .75, insensitive: true},
		{name: "b  level-sensitive .75/.05", lowCar: .75, highCar: .05, lowOther: .05, highOther: .05, lifted: .05, alike: true},
		{name: "b2 level-sensitive .40/.05", lowCar: .40, highCar: .05, lowOther: .05, highOther: .05, lifted: .05, alike: true},
		{name: "c1 confounded hi .25, lifted .08", lowCar: .75, highCar: .25, lowOther: .05, highOther: .25, lifted: .08, alike: true},
		{name: "c2 confounded hi .30, lifted .05", lowCar: .75, highCar: .30, lowOther: .05, highOther: .30, lifted: .05, alike: true},
		{name: "c3 confounded .50/hi .25/lifted .08", lowCar: .50, highCar: .25, lowOther: .05, highOther: .25, lifted: .08, alike: true},
		{name: "c4 confounded .45/hi .30/lifted .05", lowCar: .45, highCar: .30, lowOther: .05, highOther: .30, lifted: .05, alike: true},
		{name: "d  partly cured .75/.40", lowCar: .75, highCar: .40, lowOther: .05, highOther: .05, lifted: .40},
		{name: "d2 partly cured .75/.25", lowCar: .75, highCar: .25, lowOther: .05, highOther: .05, lifted: .25},
		{name: "e  level-only noise .20/.05", lowCar: .20, highCar: .05, lowOther: .20, highOther: .05, lifted: .20, alike: true},
		{name: "e2 level-only noise .05/.25", lowCar: .05, highCar: .25, lowOther: .05, highOther: .25, lifted: .05, alike: true},
		{name: "f1 a2 few L2+ carriers (0-3)", lowCar: .75, highCar: .75, lowOther: .05, highOther: .05, lifted: .75, force: &few},
		{name: "f2 a2 many L2+ carriers (50-80)", lowCar: .75, highCar: .75, lowOther: .05, highOther: .05, lifted: .75, force: &many, insensitive: true},
		{name: "f3 b few L2+ carriers", lowCar: .75, highCar: .05, lowOther: .05, highOther: .05, lifted: .05, force: &few, alike: true},
		{name: "f4 b many L2+ carriers", lowCar: .75, highCar: .05, lowOther: .05, highOther: .05, lifted: .05, force: &many, alike: true},
		{name: "f5 c1 few L2+ carriers", lowCar: .75, highCar: .25, lowOther: .05, highOther: .25, lifted: .08, force: &few, alike: true},
		{name: "f6 c1 many L2+ carriers", lowCar: .75, highCar: .25, lowOther: .05, highOther: .25, lifted: .08, force: &many, alike: true},
		{name: "f7 d few L2+ carriers", lowCar: .75, highCar: .40, lowOther: .05, highOther: .05, lifted: .40, force: &few},
		{name: "f8 d many L2+ carriers", lowCar: .75, highCar: .40, lowOther: .05, highOther: .05, lifted: .40, force: &many},
	}
	// The rule off is the same history with no task marked as run at L2+: no carrier at L2+, no
	// subtraction, the loss rule of 9c97404.
	alphas := []struct{ name string }{{"no rule"}, {"the rule"}}
	for wi, wd := range worlds {
		if f := os.Getenv("TUNE_REVIEW_HIGH_ONLY"); f != "" && wd.name[:len(f)] != f {
			continue
		}
		counts := make([]rvCount, len(alphas))
		lost, saved := make([]int, len(alphas)), make([]int, len(alphas))
		var hcSum, liftSum, nSum, steps [3]int
		for seed := range seeds {
			rng := rand.New(rand.NewPCG(uint64(wi)+1, uint64(seed)))
			n := 60 + rng.IntN(341)
			tasks := rvHistory(rng, &w, wd, n)
			truth := rvTruth(tasks, &w, wd)
			for _, c := range tasks {
				if c.ranHigh && c.fired[rvSignal] && c.canRunLow(&w) {
					hcSum[0]++
				}
			}
			plus2 := Change{Kind: weights.ChangeSignal, Signal: rvSignal, Delta: weights.Whole(2)}
			cand := plus2.Apply(w)
			liftSum[0] += int(raiseOf(&w, &cand, tasks).lifted)
			nSum[0] += len(tasks)
			plain := slices.Clone(tasks)
			for i := range plain {
				plain[i].ranHigh, plain[i].regressedHigh = false, false
			}
			var off bool
			for ai := range alphas {
				passed, proposed, step, _ := rvDecide([][]screenCell{plain, tasks}[ai], &w)
				if ai == 0 {
					off = proposed
				}
				if off && !proposed {
					if truth {
						lost[ai]++
					} else {
						saved[ai]++
					}
				}
				if proposed && !off {
					if truth {
						saved[ai]--
					} else {
						lost[ai]--
					}
				}
				c := &counts[ai]
				c.n++
				if truth {
					c.truth++
				}
				if proposed {
					c.proposed++
					if ai == 1 {
						steps[int(step/weights.Whole(1))]++
					}
				}
				if proposed == truth {
					c.agree++
				}
				if passed {
					c.passed++
					if proposed == truth {
						c.passedAgree++
					}
				}
			}
		}
		t.Logf("%-38s mean N %.0f, L2+ carriers w/ cue %.1f, lifted by +2 %.1f; truth pays %s; steps with the rule: +1 %d, +2 %d",
			wd.name, float64(nSum[0])/float64(seeds), float64(hcSum[0])/float64(seeds), float64(liftSum[0])/float64(seeds),
			rvCI(counts[0].truth, counts[0].n), steps[1], steps[2])
		for ai, a := range alphas {
			c := counts[ai]
			t.Logf("    %-9s proposed %s  agrees %s | vs no rule: paying refused %3d, non-paying refused %3d | passed %3d, agrees there %s", a.name,
				rvCI(c.proposed, c.n), rvCI(c.agree, c.n), lost[ai], saved[ai], c.passed, rvCI(c.passedAgree, c.passed))
		}
		// What the rule is for, and what it must not cost: a change that cannot help is rarely
		// proposed where the carriers at L2+ are not few; a change that pays is rarely refused,
		// whatever the level's own base rate.
		rule := counts[1]
		if _, hi := stats.Wilson(rule.proposed, rule.n, 0.95); wd.insensitive && hi > 0.05 {
			t.Errorf("%s: a change that cannot help proposed in %s of histories", wd.name, rvCI(rule.proposed, rule.n))
		}
		if wd.alike && lost[1] > seeds/50 {
			t.Errorf("%s: %d of %d histories refused a change that pays, which the loss rule without the carriers at L2+ proposed", wd.name, lost[1], seeds)
		}
	}
}
