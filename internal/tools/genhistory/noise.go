package genhistory

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/ldd-tools/tune/internal/weights"
)

// Noise regimes: histories in which no signal causes the regressions (docs/decisions.md#harness).
const (
	// RegimeIndependent: every eligible task regresses with the same probability, whatever its signals.
	RegimeIndependent = "independent"
	// RegimeCorrelated: signals come in pairs that always co-occur; regressions are independent of them.
	RegimeCorrelated = "correlated"
	// RegimeLevelOnly: L1 tasks regress more often than L0 tasks; no signal matters beyond the level.
	RegimeLevelOnly = "level-only"
	// RegimeCommonSignal: one signal fires in almost every task; regressions are independent of it.
	RegimeCommonSignal = "common-signal"
	// RegimeSharedAreas: no regression at all, but tasks share a few code areas and losses vary, so
	// same-area evidence is the only way to flag anything.
	RegimeSharedAreas = "shared-areas"
)

// Regimes lists the noise regimes.
func Regimes() []string {
	return []string{RegimeIndependent, RegimeCorrelated, RegimeLevelOnly, RegimeCommonSignal, RegimeSharedAreas}
}

// Stream generates tasks night after night for one history: the same rng, so a sequence of nights is
// one seeded history that grows.
type Stream struct {
	rng    *rand.Rand
	w      *weights.Weights
	regime string
	// Planted is the signal that causes regressions (-1 in a noise regime); PlantRate is how often a
	// new task carries it.
	Planted weights.Signal
	n       int
}

// NewNoise starts a noise stream of the regime.
func NewNoise(seed uint64, w *weights.Weights, regime string) *Stream {
	return &Stream{rng: newRNG(seed), w: w, regime: regime, Planted: -1}
}

// NewPlanted starts a stream in which one signal (a knob drawn by the seed) makes an eligible task
// regress: a task with it regresses with probability 0.6, a task without it with probability 0.04.
func NewPlanted(seed uint64, w *weights.Weights) *Stream {
	rng := newRNG(seed)
	return &Stream{rng: rng, w: w, regime: "planted", Planted: knobs[rng.IntN(len(knobs))]}
}

// SetWeights makes w the weights later tasks are dispatched under (after an apply).
func (s *Stream) SetWeights(w *weights.Weights) { s.w = w }

// Next returns n more tasks of the stream (auto-dispatched at the level of their signals under the
// stream's weights, closed, with their evidence as the regime decides).
func (s *Stream) Next(n int) []Task {
	out := make([]Task, 0, n)
	for len(out) < n {
		s.n++
		out = append(out, s.task())
	}
	return out
}

func (s *Stream) task() Task {
	rng, w := s.rng, s.w
	eligible := rng.IntN(10) < 7
	var sigs []weights.Signal
	if eligible {
		bases := [][]weights.Signal{{weights.ExplicitBugfix}, {weights.SingleFile}, {weights.ExplicitBugfix, weights.SingleFile}}
		sigs = append(sigs, bases[rng.IntN(len(bases))]...)
	}
	// zero to two more signals from the positive ones
	pos := []weights.Signal{weights.Greenfield, weights.Components, weights.CrossLayer, weights.Ambiguous,
		weights.LayerCrossings, weights.ContractRuleHit, weights.UnknownFileTerritory}
	for k := rng.IntN(3); k > 0; k-- {
		sigs = appendOnce(sigs, pos[rng.IntN(len(pos))])
	}
	switch s.regime {
	case RegimeCorrelated:
		// ambiguous ⇔ contract-rule-hit, layer-crossings ⇔ cross-layer
		if containsSignal(sigs, weights.Ambiguous) || containsSignal(sigs, weights.ContractRuleHit) {
			sigs = appendOnce(appendOnce(sigs, weights.Ambiguous), weights.ContractRuleHit)
		}
		if containsSignal(sigs, weights.LayerCrossings) || containsSignal(sigs, weights.CrossLayer) {
			sigs = appendOnce(appendOnce(sigs, weights.LayerCrossings), weights.CrossLayer)
		}
	case RegimeCommonSignal:
		if rng.IntN(20) > 0 {
			sigs = appendOnce(sigs, weights.UnknownFileTerritory)
		}
	}
	if s.Planted >= 0 && eligible && rng.IntN(4) == 0 {
		sigs = appendOnce(sigs, s.Planted)
	}
	sort.Slice(sigs, func(a, b int) bool { return sigs[a] < sigs[b] })
	area := areas[rng.IntN(len(areas))]
	t := NewTask(w, fmt.Sprintf("%s change (%d)", area.stem, s.n), float64(rng.IntN(150))/1000, sigs...)
	t.Files = []string{fmt.Sprintf("task/%04d/%s", s.n, lastPart(area.files[0]))}
	low := t.Level <= weights.L1
	p := 0.0
	switch s.regime {
	case RegimeIndependent, RegimeCorrelated, RegimeCommonSignal:
		p = 0.2
	case RegimeLevelOnly:
		p = 0.05
		if t.Level == weights.L1 {
			p = 0.35
		}
	case RegimeSharedAreas:
		// No regression: tasks share three areas' files, and a loss is sometimes high (a hard task, not a
		// regression of an earlier one).
		t.Files = append([]string(nil), areas[rng.IntN(3)].files...)
		if rng.IntN(5) == 0 {
			t.LossFinal = 0.2 + float64(rng.IntN(500))/1000
		}
	case "planted":
		p = 0.04
		if containsSignal(sigs, s.Planted) {
			p = 0.6
		}
	}
	if low && rng.Float64() < p {
		t.RegressionFollowed = true
	}
	return t
}

func appendOnce(sigs []weights.Signal, s weights.Signal) []weights.Signal {
	if containsSignal(sigs, s) {
		return sigs
	}
	return append(sigs, s)
}

// Window renders tasks as one history (hourly timestamps from a fixed start) for the evolve tests.
func Window(w *weights.Weights, tasks []Task) *History {
	return &History{Start: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), Step: time.Hour, Weights: w, Tasks: tasks}
}

// Planted is a 20-task history in which one signal (a knob drawn by the seed) caused the regressions:
// flagged tasks carry it (explicit-bugfix + the knob, half of them with unknown-file-territory, so
// some need +1 and some +2 to leave L1) and end with regression_followed=true; the background is
// Background's, with the knob added to one in ten of its tasks.
func Planted(seed uint64, w *weights.Weights, flagged int) (*History, weights.Signal) {
	rng := newRNG(seed)
	knob := knobs[rng.IntN(len(knobs))]
	bg := Background(rng, w, 20-flagged, knob, weights.ExplicitBugfix)
	for i := range bg {
		if rng.IntN(10) == 0 {
			sigs := appendOnce(append([]weights.Signal(nil), bg[i].Signals...), knob)
			sort.Slice(sigs, func(a, b int) bool { return sigs[a] < sigs[b] })
			bg[i].Signals, bg[i].Level = sigs, w.Level(w.Score(sigs))
		}
	}
	var tasks []Task
	for k := 0; k < flagged; k++ {
		sigs := []weights.Signal{weights.ExplicitBugfix, knob}
		if rng.IntN(2) == 0 {
			sigs = append(sigs, weights.UnknownFileTerritory)
		}
		sort.Slice(sigs, func(a, b int) bool { return sigs[a] < sigs[b] })
		t := NewTask(w, fmt.Sprintf("planted quick patch (%d)", k), float64(rng.IntN(80))/1000, sigs...)
		t.Files = []string{fmt.Sprintf("planted/%02d.go", k)}
		t.RegressionFollowed = true
		tasks = append(tasks, t)
	}
	tasks = append(tasks, bg...)
	rng.Shuffle(len(tasks), func(i, j int) { tasks[i], tasks[j] = tasks[j], tasks[i] })
	return Window(w, tasks), knob
}
