package evolve

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/tools/genhistory"
	"github.com/ldd-tools/tune/internal/weights"
)

// The decision harness (docs/decisions.md#harness): seeded noise and planted histories played through
// the evolve loop, and 30 consecutive nights on a growing log with the nightly loop and an apply each
// night (the apply makes the loop's final weights active and adds the supporting tasks to the evidence
// ledger, as `tune apply` does; internal/app/nights_test.go plays nights through the real file store). The
// in-suite run is small; TUNE_HARNESS=full plays the sizes quoted in docs/decisions.md and prints the
// rates; TUNE_HARNESS=heldout plays the same sizes on seeds no rule was ever looked at with (offset by
// heldoutSeeds), to confirm that the rates are not fitted to the seeds.
func harnessSizes() (histories, sequences int, full bool) {
	switch os.Getenv("TUNE_HARNESS") {
	case "full", "heldout":
		return 1000, 64, true
	}
	return 60, 4, false
}

// heldoutSeeds is added to every seed under TUNE_HARNESS=heldout.
const heldoutSeeds = 1 << 32

// seed is the i-th seed of a harness family (base separates the families).
func seed(base, i uint64) uint64 {
	if os.Getenv("TUNE_HARNESS") == "heldout" {
		return heldoutSeeds + base + i
	}
	return base + i
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

// night runs the loop on a window of tasks under the active weights and the ledger, read as a finished
// history (no clock: every task settled).
func (h *harness) night(tasks []genhistory.Task, active weights.Weights, used map[string]string) *LoopResult {
	return h.nightAt(tasks, active, used, time.Time{}, time.Time{})
}

// nightAt is night with a clock (the night runs an hour after the last task: only tasks Horizon
// labelled tasks old are settled) and an evidence watermark.
func (h *harness) nightAt(tasks []genhistory.Task, active weights.Weights, used map[string]string, now, after time.Time) *LoopResult {
	h.t.Helper()
	hist := genhistory.Window(&active, tasks)
	res, err := Loop(LoopInput{Tasks: parseLog(h.t, "night.log", hist.Render()).Tasks, Parent: active, Suite: h.suite,
		Holdout: h.holdout, Parity: h.parity, Origin: &h.origin, Used: used, Now: now, EvidenceAfter: after})
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

func changed(res *LoopResult) bool {
	d := res.Decision()
	return d == weights.DecisionAccept || d == weights.DecisionHalve
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
		for i := uint64(1); i <= uint64(n); i++ {
			s := genhistory.NewNoise(seed(0, i), &h.origin, regime)
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
		misses := map[string]int{}
		for i := uint64(1); i <= uint64(n); i++ {
			hist, knob := genhistory.Planted(seed(0, i), &h.origin, want)
			res := h.night(hist.Tasks, h.origin, nil)
			sigs, edges := changedKnobs(&h.origin, &res.Final)
			hit := false
			for _, x := range sigs {
				if x == knob {
					planted++
					hit = true
				} else {
					other++
				}
			}
			other += edges
			if !hit {
				misses[missReason(res, knob)]++
			}
		}
		msg := fmt.Sprintf("planted, %d flagged: %d histories, planted signal changed %d (%.1f%%), another knob %d (%.1f%%)",
			want, histories, planted, 100*rate(planted, histories), other, 100*rate(other, histories))
		t.Log(msg)
		if full {
			for _, k := range sortedKeys(misses) {
				t.Logf("    missed, %d flagged: %4d %s", want, misses[k], k)
			}
		}
		if rate(other, histories) > 0.03 {
			t.Errorf("%s: another knob above the 3 %% target", msg)
		}
		// A single window acts only on overwhelming evidence since issue 28 (the anytime-valid test at
		// 2 % over every night; docs/decisions.md#accumulated-evidence): with 4 or 5 flagged tasks beside
		// about 12 benign eligible ones the e-value sits near the threshold, and the evidence accumulates
		// over the next nights instead (TestHarnessThirtyNights). The floor holds for 8 flagged: 70 %, 60 %
		// in the small in-suite run (binomial standard error near 6 points).
		floor := 0.60
		if full {
			floor = 0.70
		}
		if want >= 8 && rate(planted, histories) < floor {
			t.Errorf("%s: below %.0f %%", msg, 100*floor)
		}
	}
}

// missReason names why a planted history did not change its planted signal: the window did not
// trigger, the screen did not back the knob (its verdict), the run was refused, or the first rule
// that rejected the knob's change.
func missReason(res *LoopResult, knob weights.Signal) string {
	switch {
	case !res.Detection.Triggered:
		return "no trigger"
	case res.Drift != nil:
		return "drift bound"
	case res.Refused != "":
		return "refused: the kept steps lift no flagged task out of L0/L1"
	}
	for _, st := range res.Steps {
		for _, a := range st.Attempts {
			if a.Change.Kind != weights.ChangeSignal || a.Change.Signal != knob || a.Accepted {
				continue
			}
			r := a.Reason
			if i := strings.IndexAny(r, ":("); i > 0 {
				r = strings.TrimSpace(r[:i])
			}
			return fmt.Sprintf("%s refused: %s", a.Change, r)
		}
	}
	row := res.Detection.Screen[knob]
	return "not proposed: the screen says " + row.Verdict
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

// sequence is what one played sequence of nights did.
type sequence struct {
	applied     int
	drift       weights.Half
	escalations int
	// knobNight is the night the planted knob was first applied (0: never); otherKnob counts applied
	// changes to any other knob.
	knobNight int
	otherKnob int
}

// nights plays one sequence: each night adds 6 tasks to the log, the loop runs on the whole log with
// the clock an hour after its last task (tasks settle after Horizon later tasks) and the evidence
// watermark of the last apply, and an accepted run is applied (new active weights, its supporting
// tasks in the ledger, the watermark moved to its evidence_through).
func (h *harness) nights(s *genhistory.Stream, count int) sequence {
	var out sequence
	active := h.origin
	used := map[string]string{}
	var log []genhistory.Task
	var after time.Time
	for night := 1; night <= count; night++ {
		s.SetWeights(&active)
		log = append(log, s.Next(6)...)
		// The whole log, rendered the same way every night (a task keeps its timestamp and so its ledger
		// key).
		now := genhistory.Window(&active, log).Start.Add(time.Duration(len(log)) * time.Hour)
		res := h.nightAt(log, active, used, now, after)
		if res.Outcome == OutcomeEscalated {
			out.escalations++
		}
		if !changed(res) {
			continue
		}
		out.applied++
		next := res.Final
		next.Version = active.Version + 1
		for _, k := range res.SupportingKeys() {
			used[k] = weights.VersionName(next.Version)
		}
		sigs, edges := changedKnobs(&active, &next)
		for _, x := range sigs {
			if x == s.Planted && out.knobNight == 0 {
				out.knobNight = night
			} else if x != s.Planted {
				out.otherKnob++
			}
		}
		out.otherKnob += edges
		if through, err := time.Parse(time.RFC3339Nano, res.Detection.Accumulated.Through); err == nil {
			after = through
		}
		active = next
		for i := range active.Signals {
			if d := active.Signals[i] - h.origin.Signals[i]; d > out.drift || -d > out.drift {
				out.drift = max(d, -d)
			}
		}
	}
	return out
}

func TestHarnessThirtyNights(t *testing.T) {
	h := newHarness(t)
	_, seqs, full := harnessSizes()
	// The in-suite run plays the independent regime; full mode plays every noise regime.
	regimes := []string{genhistory.RegimeIndependent}
	if full {
		regimes = genhistory.Regimes()
	}
	for _, regime := range regimes {
		applied, changedSeqs, maxDrift := 0, 0, weights.Half(0)
		for seq := uint64(1); seq <= uint64(seqs); seq++ {
			r := h.nights(genhistory.NewNoise(seed(1000, seq), &h.origin, regime), 30)
			applied += r.applied
			if r.applied > 0 {
				changedSeqs++
			}
			maxDrift = max(maxDrift, r.drift)
		}
		lo, hi := stats.Wilson(changedSeqs, seqs, 0.95)
		msg := fmt.Sprintf("30 nights on noise (%s): %d sequences, %d with an applied change (%.1f%%, 95%% CI %.1f–%.1f%%), %d applied changes, largest drift %s",
			regime, seqs, changedSeqs, 100*rate(changedSeqs, seqs), 100*lo, 100*hi, applied, maxDrift)
		t.Log(msg)
		// Target (issue 28): at most 2 % of 30-night noise sequences end with an applied change. The
		// in-suite run is small; it fails when the lower 95 % limit is above the target.
		if lo > 0.02 {
			t.Errorf("%s: above the 2 %% target", msg)
		}
	}

	var firstNights []int
	plantedSeqs, other, escalations, plantedDrift := 0, 0, 0, weights.Half(0)
	for seq := uint64(1); seq <= uint64(seqs); seq++ {
		r := h.nights(genhistory.NewPlanted(seed(2000, seq), &h.origin), 30)
		plantedDrift = max(plantedDrift, r.drift)
		escalations += r.escalations
		other += r.otherKnob
		if r.knobNight > 0 {
			plantedSeqs++
			firstNights = append(firstNights, r.knobNight)
		}
	}
	sort.Ints(firstNights)
	median := 0
	if len(firstNights) > 0 {
		median = firstNights[len(firstNights)/2]
	}
	lo, hi := stats.Wilson(plantedSeqs, seqs, 0.95)
	msg := fmt.Sprintf("30 nights planted (carriers regress 60 %%, others 4 %%): %d sequences, planted knob applied in %d (%.1f%%, 95%% CI %.1f–%.1f%%), median first night %d, other knobs changed %d times, largest drift %s points, %d escalations",
		seqs, plantedSeqs, 100*rate(plantedSeqs, seqs), 100*lo, 100*hi, median, other, plantedDrift, escalations)
	t.Log(msg)
	if plantedDrift > weights.Whole(DriftBound) {
		t.Errorf("%s: a weight drifted beyond %d points without escalating", msg, DriftBound)
	}
	// The target on its own population is 80 % (measured by the live harness, internal/app
	// live_test.go). This older population plants a knob in a quarter of the eligible tasks only, and
	// measured 37.5 % [26.7, 49.7] on 64 sequences at issue 28 (docs/decisions.md#accumulated-evidence):
	// the floor catches a rule change that makes the accumulation weaker than that.
	if hi < 0.3 {
		t.Errorf("%s: weaker than the accumulation measured at issue 28", msg)
	}
}
