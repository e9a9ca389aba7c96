package evolve

import (
	"fmt"
	"os"
	"testing"

	"github.com/ldd-tools/tune/internal/tools/genhistory"
	"github.com/ldd-tools/tune/internal/weights"
)

// The decision harness (docs/decisions.md#harness): seeded noise and planted histories played through
// the evolve loop, and 30 consecutive nights on a growing log with the nightly loop and an apply each
// night (the apply makes the loop's final weights active and adds the supporting tasks to the evidence
// ledger, as `tune apply` does). The in-suite run is small; TUNE_HARNESS=full plays the sizes quoted in
// docs/decisions.md and prints the rates.
func harnessSizes() (histories, sequences int, full bool) {
	if os.Getenv("TUNE_HARNESS") == "full" {
		return 1000, 64, true
	}
	return 60, 4, false
}

type harness struct {
	t       *testing.T
	origin  weights.Weights
	suite   *Suite
	holdout *Suite
	parity  *Parity
}

func newHarness(t *testing.T) *harness {
	suite, holdout := repoSuite(t)
	return &harness{t: t, origin: refWeights(t), suite: suite, holdout: holdout, parity: loadParityT(t)}
}

// night runs the loop on a window of tasks under the active weights and the ledger.
func (h *harness) night(tasks []genhistory.Task, active weights.Weights, used map[string]string) *LoopResult {
	h.t.Helper()
	hist := genhistory.Window(&active, tasks)
	res, err := Loop(LoopInput{Tasks: parseLog(h.t, "night.log", hist.Render()).Tasks, Parent: active, Suite: h.suite,
		Holdout: h.holdout, Parity: h.parity, Origin: &h.origin, Used: used})
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

func changed(res *LoopResult) bool {
	d := res.Decision()
	return d == DecisionAccept || d == DecisionHalve
}

// changedKnobs lists the knobs whose value differs between two weights.
func changedKnobs(a, b *weights.Weights) (signals []weights.Signal, edges int) {
	for s := range a.Signals {
		if a.Signals[s] != b.Signals[s] {
			signals = append(signals, weights.Signal(s))
		}
	}
	for l := range a.Buckets.Edges {
		if a.Buckets.Edges[l] != b.Buckets.Edges[l] {
			edges++
		}
	}
	return signals, edges
}

func rate(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

func TestHarnessNoiseAndNoRegression(t *testing.T) {
	h := newHarness(t)
	n, _, full := harnessSizes()
	for _, regime := range genhistory.Regimes() {
		triggered, changes := 0, 0
		for seed := uint64(1); seed <= uint64(n); seed++ {
			s := genhistory.NewNoise(seed, &h.origin, regime)
			res := h.night(s.Next(20), h.origin, nil)
			if res.Detection.Triggered {
				triggered++
			}
			if changed(res) {
				changes++
			}
		}
		msg := fmt.Sprintf("noise %-14s %d histories: triggered %d (%.1f%%), weight change %d (%.2f%% of triggered)",
			regime, n, triggered, 100*rate(triggered, n), changes, 100*rate(changes, triggered))
		if full {
			t.Log(msg)
		}
		// Targets: on triggered noise windows at most 1 % of runs change a weight; without any
		// regression at most 5 % of histories trigger.
		if rate(changes, triggered) > 0.01 {
			t.Errorf("%s: above the 1 %% target", msg)
		}
		if regime == genhistory.RegimeSharedAreas && rate(triggered, n) > 0.05 {
			t.Errorf("%s: no-regression histories trigger above the 5 %% target", msg)
		}
	}
}

func TestHarnessPlanted(t *testing.T) {
	h := newHarness(t)
	n, _, full := harnessSizes()
	for _, want := range []int{4, 5, 8} {
		histories, planted, other := n, 0, 0
		for seed := uint64(1); seed <= uint64(n); seed++ {
			hist, knob := genhistory.Planted(seed, &h.origin, want)
			res := h.night(hist.Tasks, h.origin, nil)
			sigs, edges := changedKnobs(&h.origin, &res.Final)
			for _, x := range sigs {
				if x == knob {
					planted++
				} else {
					other++
				}
			}
			other += edges
		}
		msg := fmt.Sprintf("planted, %d flagged: %d histories, planted signal changed %d (%.1f%%), another knob %d (%.1f%%)",
			want, histories, planted, 100*rate(planted, histories), other, 100*rate(other, histories))
		if full {
			t.Log(msg)
		}
		if rate(other, histories) > 0.03 {
			t.Errorf("%s: another knob above the 3 %% target", msg)
		}
		// The 70 % target for the planted signal is not met (docs/decisions.md#harness): the rate is
		// reported, and the test holds the part that is (another knob at most 3 %).
		if !full {
			t.Log(msg)
		}
	}
}

// nights plays one sequence: each night adds 6 tasks to the log, the loop runs on the last 20, and an
// accepted run is applied (new active weights, its supporting tasks in the ledger). It returns the
// applied changes, the largest drift from the origin in points, and the escalations.
func (h *harness) nights(s *genhistory.Stream, count int) (applied int, drift weights.Half, escalations int) {
	active := h.origin
	used := map[string]string{}
	var log []genhistory.Task
	for night := 1; night <= count; night++ {
		s.SetWeights(&active)
		log = append(log, s.Next(6)...)
		// The whole log, rendered the same way every night (a task keeps its timestamp and so its ledger
		// key); the loop reads its last 20 labelled tasks.
		res := h.night(log, active, used)
		if res.Outcome == OutcomeEscalated {
			escalations++
		}
		if !changed(res) {
			continue
		}
		applied++
		next := res.Final
		next.Version = active.Version + 1
		for _, k := range res.SupportingKeys() {
			used[k] = weights.VersionName(next.Version)
		}
		active = next
		for i := range active.Signals {
			if d := active.Signals[i] - h.origin.Signals[i]; d > drift || -d > drift {
				drift = max(d, -d)
			}
		}
	}
	return applied, drift, escalations
}

func TestHarnessThirtyNights(t *testing.T) {
	h := newHarness(t)
	_, seqs, full := harnessSizes()
	applied, maxDrift := 0, weights.Half(0)
	for seq := uint64(1); seq <= uint64(seqs); seq++ {
		a, d, _ := h.nights(genhistory.NewNoise(1000+seq, &h.origin, genhistory.RegimeIndependent), 30)
		applied += a
		maxDrift = max(maxDrift, d)
	}
	msg := fmt.Sprintf("30 nights on noise: %d sequences, %d applied changes (%.3f per sequence), largest drift %s",
		seqs, applied, rate(applied, seqs), maxDrift)
	if full {
		t.Log(msg)
	}
	if rate(applied, seqs) > 1.0/16 {
		t.Errorf("%s: above the target of one applied change per 16 sequences", msg)
	}

	plantedApplied, plantedDrift, escalations := 0, weights.Half(0), 0
	for seq := uint64(1); seq <= uint64(seqs); seq++ {
		a, d, e := h.nights(genhistory.NewPlanted(2000+seq, &h.origin), 30)
		plantedApplied += a
		plantedDrift = max(plantedDrift, d)
		escalations += e
	}
	msg = fmt.Sprintf("30 nights planted: %d sequences, %d applied changes, largest drift %s points, %d escalations",
		seqs, plantedApplied, plantedDrift, escalations)
	if full {
		t.Log(msg)
	}
	if plantedDrift > weights.Whole(DriftBound) {
		t.Errorf("%s: a weight drifted beyond %d points without escalating", msg, DriftBound)
	}
}
