package genhistory

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ldd-tools/tune/internal/weights"
)

// Expect is what the evolution rules must find in a generated history (indices are task positions in
// History.Tasks).
type Expect struct {
	Flagged   []int
	Triggered bool
	// Signal is the signal a proposal must pick, or -1 when no signal proposal is expected.
	Signal weights.Signal
	// EdgeTasks > 0 when the flagged tasks sit on the upper edge of their bucket (a bucket proposal).
	EdgeTasks int
	// ReDetected is true when signals must come from re-detection (no signals= recorded).
	ReDetected bool
	// Warnings is true when reading the history must report warnings (damaged lines, inconsistent levels).
	Warnings bool
}

// Case is a named history builder.
type Case struct {
	Name  string
	Doc   string
	Build func(seed uint64, w *weights.Weights) (*History, Expect)
}

// Cases lists the acceptance histories of the evolution step (issue 4).
func Cases() []Case {
	return []Case{
		{"phase3-gate", "3 under-scored auto L1 tasks with a shared signal, each followed by a regression (evidence kinds mixed): exactly one proposal", Phase3Gate},
		{"two-regressions", "only 2 low-side regressions: no trigger", TwoRegressions},
		{"bump-override", "regressions after user-bump and user-override-down tasks do not count; 2 auto ones remain: no trigger", BumpOverride},
		{"no-consistent-signal", "3 flagged tasks with no signal common to all, off the bucket edge: triggered, no proposal", NoConsistentSignal},
		{"bucket-edge", "3 flagged tasks without a common signal, all exactly on the L1 upper edge: triggered, no proposal (no signal passes, so no edge moves)", BucketEdge},
		{"same-area", "evidence only from later same-area tasks (files= overlap, or paths named in the text) above the median; a same-area task at or below the median does not count", SameArea},
		{"regression-of", "evidence only from later tasks naming the original with regression_of=", RegressionOf},
		{"outside-window", "one regression sits before the last 20 labelled tasks: only 2 count, no trigger", OutsideWindow},
		{"legacy-v0101", "v0.10.1 meta lines (level_chosen=, dispatch_source=, no signals=): signals re-detected from the titles", LegacyV0101},
		{"damaged", "the phase-3 history with damaged lines: same result, with warnings", Damaged},
		{"two-step", "3 flagged tasks at -3 sharing layer-crossings: one +1 reaches only L1's edge, the loop needs two", TwoStep},
	}
}

// CaseByName finds a case.
func CaseByName(name string) (Case, bool) {
	for _, c := range Cases() {
		if c.Name == name {
			return c, true
		}
	}
	return Case{}, false
}

// knobs are the signals the preference order names; the consistent signal of a case is drawn from them.
var knobs = []weights.Signal{weights.Ambiguous, weights.ContractRuleHit, weights.LayerCrossings}

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

var start = time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)

// slot is a task before the final order is known; ref names another slot for regression_of.
type slot struct {
	task Task
	id   string
	ref  string
}

// assemble places extra slots into the filler sequence: each extra slot goes to a random position after
// the slot it must follow (after), so that evidence always comes later than its original.
type placement struct {
	s     slot
	after string // id of the slot this one must follow ("" = anywhere)
	first bool   // keep in the first half (originals need room for later evidence)
	// near places the slot right after the one it follows; near slots are placed last, so a chain of
	// them (a same-area failure and its corroboration) stays contiguous after its original: same-area
	// evidence lies 1 and 2 tasks later, within the bounded distance of 5.
	near bool
}

func assemble(rng *rand.Rand, w *weights.Weights, fillers []Task, places []placement) (*History, map[string]int) {
	seq := make([]slot, len(fillers))
	for i, f := range fillers {
		seq[i] = slot{task: f, id: fmt.Sprintf("filler-%d", i)}
	}
	ordered := make([]placement, 0, len(places))
	for _, p := range places {
		if !p.near {
			ordered = append(ordered, p)
		}
	}
	for _, p := range places {
		if p.near {
			ordered = append(ordered, p)
		}
	}
	for _, p := range ordered {
		lo := 0
		if p.after != "" {
			for i, s := range seq {
				if s.id == p.after {
					lo = i + 1
				}
			}
		}
		hi := len(seq)
		if p.first {
			hi = max(lo, len(seq)/2)
		}
		if p.near {
			hi = lo
		}
		pos := lo + rng.IntN(hi-lo+1)
		seq = append(seq[:pos], append([]slot{p.s}, seq[pos:]...)...)
	}
	index := map[string]int{}
	for i, s := range seq {
		index[s.id] = i
	}
	h := &History{Start: start, Step: time.Hour, Weights: w}
	for _, s := range seq {
		t := s.task
		t.RegressionOf = -1
		if s.ref != "" {
			t.RegressionOf = index[s.ref]
		}
		h.Tasks = append(h.Tasks, t)
	}
	return h, index
}

// regression builds an original low-side task (auto, L0/L1 by its signals) in area a and the evidence that
// follows it, of the given kind: "same-area" (a later task touching the same files with a high loss),
// "followed" (regression_followed=true on its close) or "regression-of" (a later task naming it).
func regression(rng *rand.Rand, w *weights.Weights, id string, area int, kind string, sigs []weights.Signal) []placement {
	a := areas[area%len(areas)]
	orig := NewTask(w, fmt.Sprintf("%s: quick patch (%s)", a.stem, id), float64(rng.IntN(80))/1000, sigs...)
	orig.Files = []string{a.files[0]}
	places := []placement{{s: slot{task: orig, id: id}, first: true}}
	switch kind {
	case "followed":
		places[0].s.task.RegressionFollowed = true
	case "same-area":
		// Two later same-area failures: same-area evidence needs corroboration
		// (docs/decisions.md#same-area-evidence).
		later := NewTask(w, fmt.Sprintf("%s: regression after the quick patch (%s)", a.stem, id), 0.6+float64(rng.IntN(300))/1000)
		later.Files = append([]string(nil), a.files...)
		again := NewTask(w, fmt.Sprintf("%s: still failing after the quick patch (%s)", a.stem, id), 0.6+float64(rng.IntN(300))/1000)
		again.Files = append([]string(nil), a.files...)
		again.Terminal = "failed"
		places = append(places, placement{s: slot{task: later, id: id + "-later"}, after: id, near: true},
			placement{s: slot{task: again, id: id + "-again"}, after: id + "-later", near: true})
	case "regression-of":
		later := NewTask(w, fmt.Sprintf("%s: follow-up (%s)", a.stem, id), float64(rng.IntN(300))/1000)
		later.Files = []string{fmt.Sprintf("elsewhere/%s.go", id)}
		places = append(places, placement{s: slot{task: later, id: id + "-later", ref: id}, after: id})
	default:
		panic("unknown evidence kind " + kind)
	}
	return places
}

var evidenceKinds = []string{"same-area", "followed", "regression-of"}

// lowSide returns signals that put a task at L0/L1 under w: explicit-bugfix and common, sometimes (when
// extra allows it) with unknown-file-territory. Callers never allow the extra on their first task, so it
// cannot become a second signal shared by every flagged task.
func lowSide(rng *rand.Rand, w *weights.Weights, common weights.Signal, extra bool) []weights.Signal {
	sigs := []weights.Signal{weights.ExplicitBugfix, common}
	if extra && rng.IntN(2) == 0 {
		sigs = append(sigs, weights.UnknownFileTerritory)
	}
	if w.Level(w.Score(sigs)) > weights.L1 {
		sigs = []weights.Signal{weights.ExplicitBugfix, weights.SingleFile, common}
	}
	return sigs
}

func build(seed uint64, w *weights.Weights, n int, origs int, damaged bool) (*History, Expect) {
	return buildWith(seed, w, n, origs, damaged, -1)
}

// TwoStep is Phase3Gate with layer-crossings as the shared signal and no extra signal on any flagged
// task: every flagged task scores -3, so a single +1 lifts none of them out of L1 and the evolve loop
// needs two accepted steps.
func TwoStep(seed uint64, w *weights.Weights) (*History, Expect) {
	return buildWith(seed, w, 20, 3, false, weights.LayerCrossings)
}

// DeepStep is TwoStep with single-file on every flagged task (-6: no step within the drift bound lifts
// them) and every title prefixed "deep ", so that it can be read beside a TwoStep history of the same
// seed without sharing a task key: after the +2 that lifts TwoStep's tasks, these still trigger (the
// step-cap escalation of the nightly tests).
func DeepStep(seed uint64, w *weights.Weights) *History {
	h, exp := TwoStep(seed, w)
	for _, i := range exp.Flagged {
		t := &h.Tasks[i]
		t.Signals = append(t.Signals, weights.SingleFile)
		slices.Sort(t.Signals)
		t.Level = w.Level(w.Score(t.Signals))
	}
	for i := range h.Tasks {
		h.Tasks[i].Title = "deep " + h.Tasks[i].Title
	}
	return h
}

// HoldoutConflict is 20 tasks from 1 July 2026 whose evidence wants a change only the frozen holdout
// refuses: six regressing ambiguous bug fixes, three of them also in unknown files (ambiguous +1 lifts
// those), the other three needing ambiguous at +4, which makes holdout-L2-ambiguous worse; the rest
// routine bug fixes and feature work that do not regress (the partial run, and the night that says
// what the holdout holds).
func HoldoutConflict(w *weights.Weights) *History {
	h := &History{Weights: w, Start: time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)}
	for i := 0; i < 20; i++ {
		var task Task
		switch {
		case i < 6 && i%2 == 0:
			task = NewTask(w, fmt.Sprintf("quick patch %d", i), 0.05, weights.ExplicitBugfix, weights.Ambiguous, weights.UnknownFileTerritory)
			task.RegressionFollowed = true
		case i < 6:
			task = NewTask(w, fmt.Sprintf("quick patch %d", i), 0.05, weights.ExplicitBugfix, weights.Ambiguous)
			task.RegressionFollowed = true
		case i%2 == 0:
			task = NewTask(w, fmt.Sprintf("routine bug fix %d", i), 0.05, weights.ExplicitBugfix)
		default:
			task = NewTask(w, fmt.Sprintf("feature work %d", i), 0.05, weights.CrossLayer)
		}
		h.Tasks = append(h.Tasks, task)
	}
	return h
}

// buildWith builds origs regressions among background tasks; common < 0 draws the shared signal from
// the knobs (and allows an extra signal on later flagged tasks), else it is fixed and no extra is added.
func buildWith(seed uint64, w *weights.Weights, n int, origs int, damaged bool, fixed weights.Signal) (*History, Expect) {
	rng := newRNG(seed)
	common := knobs[rng.IntN(len(knobs))]
	if fixed >= 0 {
		common = fixed
	}
	var places []placement
	kinds := rng.Perm(len(evidenceKinds))
	areaPerm := rng.Perm(len(areas))
	for k := 0; k < origs; k++ {
		kind := evidenceKinds[kinds[k%len(kinds)]]
		places = append(places, regression(rng, w, fmt.Sprintf("orig-%d", k), areaPerm[k], kind, lowSide(rng, w, common, k > 0 && fixed < 0))...)
	}
	fillers := Background(rng, w, n-len(places), common, weights.ExplicitBugfix)
	h, idx := assemble(rng, w, fillers, places)
	h.Damage = damaged
	exp := Expect{Triggered: origs >= 3, Signal: -1, Warnings: damaged}
	for k := 0; k < origs; k++ {
		exp.Flagged = append(exp.Flagged, idx[fmt.Sprintf("orig-%d", k)])
	}
	sortInts(exp.Flagged)
	if exp.Triggered {
		exp.Signal = common
		h, exp = withHistory(rng, w, h, exp, SettledHistory, common)
	}
	return h, exp
}

// Phase3Gate is the Phase-3 gate of the evolution step (docs/decisions.md#evolution-step): 20 tasks, 3 under-scored auto L1 regressions sharing one signal.
func Phase3Gate(seed uint64, w *weights.Weights) (*History, Expect) {
	return build(seed, w, 20, 3, false)
}

// TwoRegressions has 2 low-side regressions only.
func TwoRegressions(seed uint64, w *weights.Weights) (*History, Expect) {
	return build(seed, w, 20, 2, false)
}

// Damaged is Phase3Gate with damaged lines.
func Damaged(seed uint64, w *weights.Weights) (*History, Expect) { return build(seed, w, 20, 3, true) }

// BumpOverride has 2 auto regressions and 2 regressions of tasks the user bumped or forced down to L0/L1.
func BumpOverride(seed uint64, w *weights.Weights) (*History, Expect) {
	rng := newRNG(seed)
	common := knobs[rng.IntN(len(knobs))]
	areaPerm := rng.Perm(len(areas))
	var places []placement
	for k := 0; k < 4; k++ {
		kind := evidenceKinds[rng.IntN(len(evidenceKinds))]
		ps := regression(rng, w, fmt.Sprintf("orig-%d", k), areaPerm[k], kind, lowSide(rng, w, common, k > 0))
		switch k {
		case 2: // the user bumped an L0 task to L1
			ps[0].s.task.Dispatch = "bump"
			ps[0].s.task.Level = weights.L1
		case 3: // the user forced an L3 task down to L0
			ps[0].s.task.Dispatch = "override-down"
			ps[0].s.task.Level = weights.L0
		}
		places = append(places, ps...)
	}
	fillers := Background(rng, w, 20-len(places), common, weights.ExplicitBugfix)
	h, idx := assemble(rng, w, fillers, places)
	exp := Expect{Flagged: []int{idx["orig-0"], idx["orig-1"]}, Signal: -1}
	sortInts(exp.Flagged)
	return h, exp
}

// NoConsistentSignal has 3 flagged L1 tasks whose signals share nothing that fired in all three, and
// none on a bucket edge.
func NoConsistentSignal(seed uint64, w *weights.Weights) (*History, Expect) {
	rng := newRNG(seed)
	sets := [][]weights.Signal{
		{weights.ExplicitBugfix, weights.Ambiguous},       // -3
		{weights.ExplicitBugfix, weights.ContractRuleHit}, // -3
		{weights.SingleFile},                              // -3
	}
	return distinctSets(rng, w, sets, Expect{Triggered: true, Signal: -1})
}

// BucketEdge has 3 flagged L1 tasks without a common signal, each scoring exactly the L1 upper edge. Since
// issue 28 it is triggered without a proposal: an edge moves only after a change to a signal that
// passes the accumulated test was refused (docs/decisions.md#loss-rule).
func BucketEdge(seed uint64, w *weights.Weights) (*History, Expect) {
	rng := newRNG(seed)
	sets := [][]weights.Signal{
		{weights.ExplicitBugfix, weights.Greenfield},                                    // -2
		{weights.SingleFile, weights.UnknownFileTerritory},                              // -2
		{weights.ExplicitBugfix, weights.ContractRuleHit, weights.UnknownFileTerritory}, // -2
	}
	return distinctSets(rng, w, sets, Expect{Triggered: true, Signal: -1})
}

func distinctSets(rng *rand.Rand, w *weights.Weights, sets [][]weights.Signal, exp Expect) (*History, Expect) {
	areaPerm := rng.Perm(len(areas))
	var places []placement
	for k, sigs := range sets {
		kind := evidenceKinds[rng.IntN(len(evidenceKinds))]
		places = append(places, regression(rng, w, fmt.Sprintf("orig-%d", k), areaPerm[k], kind, sigs)...)
	}
	var avoid []weights.Signal
	for _, s := range sets {
		avoid = append(avoid, s...)
	}
	fillers := Background(rng, w, 20-len(places), avoid...)
	h, idx := assemble(rng, w, fillers, places)
	for k := range sets {
		exp.Flagged = append(exp.Flagged, idx[fmt.Sprintf("orig-%d", k)])
	}
	sortInts(exp.Flagged)
	return h, exp
}

// SameArea has 3 flagged tasks whose only evidence is a later same-area task above the median: two by
// files= overlap and one by a path named in the titles (no files= on either side). A fourth eligible task
// has a later same-area task whose loss is not above the median, and is not flagged.
func SameArea(seed uint64, w *weights.Weights) (*History, Expect) {
	rng := newRNG(seed)
	common := knobs[rng.IntN(len(knobs))]
	areaPerm := rng.Perm(len(areas))
	var places []placement
	for k := 0; k < 2; k++ {
		places = append(places, regression(rng, w, fmt.Sprintf("orig-%d", k), areaPerm[k], "same-area", lowSide(rng, w, common, k > 0))...)
	}
	// By path in the text: neither task has files=.
	path := fmt.Sprintf("src/legacy/handler_%d.py", rng.IntN(90)+10)
	orig := NewTask(w, "patch the retry in "+path, 0.02, lowSide(rng, w, common, true)...)
	later := NewTask(w, "the retry in "+path+" regressed under load", 0.75)
	again := NewTask(w, "the retry in "+path+" still times out", 0.8)
	again.Terminal = "failed"
	places = append(places, placement{s: slot{task: orig, id: "orig-2"}, first: true},
		placement{s: slot{task: later, id: "orig-2-later"}, after: "orig-2", near: true},
		placement{s: slot{task: again, id: "orig-2-again"}, after: "orig-2-later", near: true})
	// The decoy: same area, but the later loss is 0 (never above the median). It carries another knob
	// than the flagged tasks: it is one of the eligible tasks the screen compares them with.
	other := knobs[(slices.Index(knobs, common)+1)%len(knobs)]
	decoy := regression(rng, w, "decoy", areaPerm[3], "same-area", lowSide(rng, w, other, true))
	decoy[1].s.task.LossFinal = 0
	places = append(places, decoy...)
	fillers := Background(rng, w, 20-len(places), common, weights.ExplicitBugfix)
	h, idx := assemble(rng, w, fillers, places)
	exp := Expect{Flagged: []int{idx["orig-0"], idx["orig-1"], idx["orig-2"]}, Triggered: true, Signal: common}
	sortInts(exp.Flagged)
	return withHistory(rng, w, h, exp, SettledHistory, common)
}

// RegressionOf has 3 flagged tasks named by later tasks with regression_of=, and one later task naming a
// bump task (not eligible, so not flagged).
func RegressionOf(seed uint64, w *weights.Weights) (*History, Expect) {
	rng := newRNG(seed)
	common := knobs[rng.IntN(len(knobs))]
	areaPerm := rng.Perm(len(areas))
	var places []placement
	for k := 0; k < 4; k++ {
		ps := regression(rng, w, fmt.Sprintf("orig-%d", k), areaPerm[k], "regression-of", lowSide(rng, w, common, k > 0))
		if k == 3 {
			ps[0].s.task.Dispatch = "bump"
		}
		places = append(places, ps...)
	}
	fillers := Background(rng, w, 20-len(places), common, weights.ExplicitBugfix)
	h, idx := assemble(rng, w, fillers, places)
	exp := Expect{Flagged: []int{idx["orig-0"], idx["orig-1"], idx["orig-2"]}, Triggered: true, Signal: common}
	sortInts(exp.Flagged)
	return withHistory(rng, w, h, exp, SettledHistory, common)
}

// OutsideWindow has 25 labelled tasks. The first regression starts before the last 20; its evidence (a
// later task naming it with regression_of=) is the first task of the window. Only 2 regressions count.
func OutsideWindow(seed uint64, w *weights.Weights) (*History, Expect) {
	rng := newRNG(seed)
	common := knobs[rng.IntN(len(knobs))]
	areaPerm := rng.Perm(len(areas))
	early := regression(rng, w, "early", areaPerm[0], "regression-of", lowSide(rng, w, common, true))
	var places []placement
	for k := 0; k < 2; k++ {
		places = append(places, regression(rng, w, fmt.Sprintf("orig-%d", k), areaPerm[k+1], evidenceKinds[rng.IntN(3)], lowSide(rng, w, common, k > 0))...)
	}
	inWindow, idx := assemble(rng, w, Background(rng, w, 19-len(places), common, weights.ExplicitBugfix), places)
	h := &History{Start: start, Step: time.Hour, Weights: w}
	h.Tasks = append(h.Tasks, early[0].s.task)
	h.Tasks = append(h.Tasks, Filler(rng, w, 4, common, weights.ExplicitBugfix)...)
	h.Tasks[0].RegressionOf = -1
	evidence := early[1].s.task
	evidence.RegressionOf = 0
	h.Tasks = append(h.Tasks, evidence)
	shift := len(h.Tasks)
	for _, t := range inWindow.Tasks {
		if t.RegressionOf >= 0 {
			t.RegressionOf += shift
		}
		h.Tasks = append(h.Tasks, t)
	}
	exp := Expect{Signal: -1}
	for k := 0; k < 2; k++ {
		exp.Flagged = append(exp.Flagged, idx[fmt.Sprintf("orig-%d", k)]+shift)
	}
	sortInts(exp.Flagged)
	return h, exp
}

// legacyTitles are prompts the scorer reads as auto L1 with ambiguous among their signals, so that
// re-detection finds a consistent signal.
var legacyTitles = []string{
	"the checkout test is failing and I'm not sure why",
	"login is broken somehow after the session refactor",
	"the export job is failing after my last change",
	"maybe fix the crash in the digest mailer",
}

// legacyFixes are small fixes whose titles ("fix the typo in a/b.go") re-detect as explicit-bugfix +
// single-file: L0.
var legacyFixes = []string{"typo", "off-by-one", "nil pointer", "broken link", "failing lint"}

// LegacyV0101 writes every task in the v0.10.1 format (no signals=): three flagged L1 tasks whose titles
// re-detect to a shared ambiguous signal.
func LegacyV0101(seed uint64, w *weights.Weights) (*History, Expect) {
	rng := newRNG(seed)
	areaPerm := rng.Perm(len(areas))
	titles := rng.Perm(len(legacyTitles))
	var places []placement
	for k := 0; k < 3; k++ {
		ps := regression(rng, w, fmt.Sprintf("orig-%d", k), areaPerm[k], evidenceKinds[k], []weights.Signal{weights.ExplicitBugfix, weights.Ambiguous})
		ps[0].s.task.Title = legacyTitles[titles[k]]
		places = append(places, ps...)
	}
	fillers := Background(rng, w, 20-len(places), weights.Ambiguous, weights.ExplicitBugfix)
	for i := range fillers {
		// Legacy lines carry no signals=: the benign low-side tasks need titles that re-detect low.
		if fillers[i].Level <= weights.L1 {
			fillers[i].Title = fmt.Sprintf("fix the %s in %s", legacyFixes[rng.IntN(len(legacyFixes))], fillers[i].Files[0])
			fillers[i].Signals = []weights.Signal{weights.ExplicitBugfix, weights.SingleFile}
			fillers[i].Level = w.Level(w.Score(fillers[i].Signals))
		}
	}
	h, idx := assemble(rng, w, fillers, places)
	exp := Expect{Triggered: true, Signal: weights.Ambiguous, ReDetected: true}
	for k := 0; k < 3; k++ {
		exp.Flagged = append(exp.Flagged, idx[fmt.Sprintf("orig-%d", k)])
	}
	sortInts(exp.Flagged)
	h, exp = withHistory(rng, w, h, exp, SettledHistory, weights.Ambiguous)
	for i := range h.Tasks {
		h.Tasks[i].Legacy = true
		if i < SettledHistory {
			// The earlier benign tasks, too, need titles that re-detect low.
			t := &h.Tasks[i]
			t.Title = fmt.Sprintf("fix the %s in %s", legacyFixes[rng.IntN(len(legacyFixes))], t.Files[0])
			t.Signals = []weights.Signal{weights.ExplicitBugfix, weights.SingleFile}
			t.Level = w.Level(w.Score(t.Signals))
		}
	}
	return h, exp
}

// SettledHistory is how many benign eligible tasks the cases that expect a proposal hold before their
// window: the accumulated evidence (docs/decisions.md#accumulated-evidence) needs a comparison group, and
// 3 regressions carrying a signal beside the ~10 benign eligible tasks of one window cannot pass the
// anytime-valid test (e ≈ 90 < 450), while beside 30 they do (e ≈ 700).
const SettledHistory = 20

// withHistory puts n benign eligible tasks (avoiding the given signals) before h's tasks, shifting the
// expected indices and the regression_of references.
func withHistory(rng *rand.Rand, w *weights.Weights, h *History, exp Expect, n int, avoid ...weights.Signal) (*History, Expect) {
	pre := Eligible(rng, w, n, avoid...)
	for i := range pre {
		pre[i].RegressionOf = -1
		pre[i].Title = "earlier " + pre[i].Title
	}
	for i := range h.Tasks {
		if h.Tasks[i].RegressionOf >= 0 {
			h.Tasks[i].RegressionOf += n
		}
	}
	h.Tasks = append(pre, h.Tasks...)
	h.Start = h.Start.Add(-time.Duration(n) * h.Step)
	flagged := make([]int, len(exp.Flagged))
	for i, f := range exp.Flagged {
		flagged[i] = f + n
	}
	exp.Flagged = flagged
	return h, exp
}

func sortInts(xs []int) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}
