package watch

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// regime is a live project night after night around one applied change (contract-rule-hit +1, which
// lifts its carriers from L1 to L2): each night adds 5–20 closed tasks, dispatched auto under the
// active version, for BeforeNights under the parent and then under the version.
type regime struct {
	name string
	// CarrierShare of the tasks carry the lifted pattern; OtherLowShare are other L1 tasks;
	// RaisedShare carry the changed signal at L2, where the change raises them to L3 without need (what
	// makes the change cost, and its break-even excess rise); the rest run at L2 on other signals.
	CarrierShare, OtherLowShare, RaisedShare float64
	// EffectFrom is the night (counted from the first) the carriers start regressing at LowRate while
	// low; before it, and for every other task, they regress at BaseRate.
	EffectFrom       int
	LowRate          float64
	BaseRate         float64
	LiftedRate       float64 // the carriers' regression rate once lifted (BaseRate: the change is right)
	DriftRate        float64 // the other low-side tasks' rate after the apply (drift: not the change)
	BeforeNights     int
	AfterNights      int
	OverrideDownRate float64 // share of the carriers the user forces down after the apply (regressing at LowRate)
	// RaisedOverkill is the share of the raised tasks that end trivially at L3 (complete, k=1, loss 0):
	// overkill, the levels the loss rule priced as too high when it accepted the change.
	RaisedOverkill float64
}

// play runs one sequence and returns the first night after the apply (1-based) on which the watch
// proposes the rollback, 0 when it never does.
func (r regime) play(seed uint64) int {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	p := weightsV1()
	v := p
	v.Version, v.Parent = 2, 1
	v.Signals[weights.ContractRuleHit] += weights.Whole(1)
	b := NewBuilder(Input{Version: Version{&v, applied}, Parent: Version{&p, parentFrom}, Config: Config{Alpha: monteCarloAlpha}})
	carrier := []weights.SignalWeight{{Name: "contract-rule-hit"}, {Name: "explicit-bugfix"}, {Name: "unknown-file-territory"}}
	other := []weights.SignalWeight{{Name: "explicit-bugfix"}}
	high := []weights.SignalWeight{{Name: "greenfield"}}
	raised := []weights.SignalWeight{{Name: "contract-rule-hit"}, {Name: "unknown-file-territory"}} // 3 (L2) under v0001, 4 (L3) under v0002
	busy := []traceparse.Entry{{Kind: traceparse.KindIter}, {Kind: traceparse.KindIter}, {Kind: traceparse.KindIter}}
	n := 0
	for night := range r.BeforeNights + r.AfterNights {
		start := parentFrom.Add(time.Duration(night) * 24 * time.Hour)
		afterApply := night >= r.BeforeNights
		if afterApply {
			start = applied.Add(time.Duration(night-r.BeforeNights) * 24 * time.Hour)
		}
		for i := range 5 + rng.IntN(16) {
			at := start.Add(time.Duration(i) * time.Minute)
			t := traceparse.Task{Source: "trace.log", Line: n + 1, MetaTimestamp: at.Format(time.RFC3339), MetaTime: at, Closed: true,
				HasSignals: true, Dispatch: "auto", Terminal: "complete", Title: fmt.Sprintf("task %d", n)}
			n++
			rate := r.BaseRate
			switch u := rng.Float64(); {
			case u < r.CarrierShare:
				t.Signals, t.Level = carrier, "L1"
				if afterApply {
					t.Level = "L2"
				}
				switch {
				case afterApply && rng.Float64() < r.OverrideDownRate:
					t.Level, t.Dispatch, rate = "L1", "override-down", r.LowRate
				case afterApply:
					rate = r.LiftedRate
				case night >= r.EffectFrom:
					rate = r.LowRate
				}
			case u < r.CarrierShare+r.OtherLowShare:
				t.Signals, t.Level = other, "L1"
				if afterApply {
					rate = r.DriftRate
				}
			case u < r.CarrierShare+r.OtherLowShare+r.RaisedShare:
				t.Signals, t.Level = raised, "L2"
				t.Entries = busy // k = 3 at L3 too: not overkill
				if afterApply {
					t.Level = "L3"
					if r.RaisedOverkill > 0 && rng.Float64() < r.RaisedOverkill { // no draw without: the other regimes keep their streams
						t.Entries, t.LossFinal = busy[:1], &zeroLoss
					}
				}
			default:
				t.Signals, t.Level = high, "L2"
			}
			t.RegressionFollowed = rng.Float64() < rate
			b.Add(&t)
		}
		if afterApply && b.Result().Proposes() {
			return night - r.BeforeNights + 1
		}
	}
	return 0
}

var zeroLoss = 0.0

// monteCarloAlpha: TUNE_MC_ALPHA=0.1 plays the regimes with watch.alpha at that level, a what-if of the
// watch's error rate against its power (docs/decisions.md, "The conditional row with more sequences, and
// the watch's α"); the rates' checks then say which targets that level breaks. Unset, the default.
var monteCarloAlpha, _ = strconv.ParseFloat(os.Getenv("TUNE_MC_ALPHA"), 64)

func weightsV1() weights.Weights {
	data, err := os.ReadFile("../../weights/v0001.toml")
	if err != nil {
		panic(err)
	}
	w, err := weights.Parse("v0001.toml", data)
	if err != nil {
		panic(err)
	}
	return w
}

// TestMonteCarloWatch plays the two regimes issue 28's targets name and a few harder ones, and
// checks the watch's rollback rates (docs/decisions.md#watch quotes the full run's numbers):
//
//   - a correct change (the carriers regress at 75% while low, at the base 5% once lifted), with the
//     other low-side tasks drifting up to 30% after the apply and a user forcing some carriers back
//     down where they regress, or with most of the tasks it raised without a lift overkill at L3 (the
//     price it was accepted at; the overkill test before i28-watch3 rolled back 19 of 200 there):
//     the watch proposes the rollback in ≤ 2% of sequences;
//   - level-insensitive carriers (75% whatever their level): the watch proposes it within 10 nights
//     of the apply in ≥ 70%, also on the live-like population (about one lifted task a night, a
//     change that raises other tasks too, so that it pays only from an excess of ~0.5: the midpoint
//     null reached 32% there, the break-even null 76%; docs/decisions.md#not-helping-break-even).
//
// The in-suite run plays 200 sequences of each; TUNE_HARNESS=full plays 2000 and prints the rates
// with their 95% Wilson intervals.
func TestMonteCarloWatch(t *testing.T) {
	seqs := 200
	if os.Getenv("TUNE_HARNESS") == "full" {
		seqs = 2000
	}
	base := regime{CarrierShare: 0.2, OtherLowShare: 0.35, EffectFrom: 0, LowRate: 0.75, BaseRate: 0.05, BeforeNights: 15, AfterNights: 30}
	correct := base
	correct.name, correct.LiftedRate, correct.DriftRate = "correct change", 0.05, 0.05
	drift := correct
	drift.name, drift.DriftRate, drift.OverrideDownRate = "correct change, drift 30% and override-down", 0.30, 0.2
	midway := correct
	midway.name, midway.EffectFrom = "correct change, effect from night 10 of 15", 10
	insensitive := base
	insensitive.name, insensitive.LiftedRate, insensitive.DriftRate = "level-insensitive", 0.75, 0.05
	sparse := insensitive
	sparse.name, sparse.CarrierShare = "level-insensitive, carriers 10%", 0.1
	// The live harness's population (docs/live-harness.md): about one lifted task a night, and a change
	// that raises other tasks too, so that it pays only from an excess of about 0.5.
	liveCorrect := correct
	liveCorrect.name, liveCorrect.CarrierShare, liveCorrect.RaisedShare = "correct change, live-like (carriers 8%, raised 4%)", 0.08, 0.04
	overkill := liveCorrect
	overkill.name, overkill.RaisedOverkill = "correct change, live-like, raised tasks 80% overkill", 0.8
	liveInsensitive := insensitive
	liveInsensitive.name, liveInsensitive.CarrierShare, liveInsensitive.RaisedShare = "level-insensitive, live-like", 0.08, 0.04
	for _, c := range []struct {
		r       regime
		within  int     // nights after the apply that count (0: all)
		atMost  float64 // the share of sequences that propose must be ≤ atMost …
		atLeast float64 // … and ≥ atLeast
	}{
		{correct, 0, 0.02, 0}, {drift, 0, 0.02, 0}, {midway, 0, 0.02, 0},
		{insensitive, 10, 1, 0.70}, {sparse, 10, 1, 0}, {liveCorrect, 0, 0.02, 0}, {overkill, 0, 0.02, 0}, {liveInsensitive, 10, 1, 0.70},
	} {
		k := 0
		var nights []float64
		for s := range seqs {
			night := c.r.play(uint64(s))
			if night > 0 && (c.within == 0 || night <= c.within) {
				k++
			}
			if night > 0 {
				nights = append(nights, float64(night))
			}
		}
		lo, hi := stats.Wilson(k, seqs, 0.95)
		rate := float64(k) / float64(seqs)
		median := 0.0
		if len(nights) > 0 {
			median = stats.Median(nights)
		}
		t.Logf("%-45s proposes the rollback%s: %d/%d = %.1f%% [%.1f–%.1f%%]; by night 30: %d, median night %.0f", c.r.name,
			map[bool]string{true: fmt.Sprintf(" within %d nights", c.within), false: ""}[c.within > 0], k, seqs, 100*rate, 100*lo, 100*hi, len(nights), median)
		if rate > c.atMost || rate < c.atLeast {
			t.Errorf("%s: %.1f%% of %d sequences, want within [%.0f%%, %.0f%%]", c.r.name, 100*rate, seqs, 100*c.atLeast, 100*c.atMost)
		}
	}
}
