package evolve

import (
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// Loop outcomes.
const (
	OutcomeConverged = "converged" // fewer than 3 unresolved flagged tasks remain in the windows after accepted steps
	OutcomeStalled   = "stalled"   // StallBound consecutive steps made no progress and nothing kept lifts a flagged task
	// OutcomePartial: kept steps lifted flagged tasks out of L0/L1, then StallBound consecutive steps found
	// no further change the rules allow (suite, parity price, holdout veto) for the tasks still low.
	OutcomePartial     = "partial"
	OutcomeEscalated   = "escalated"     // the step cap was reached while triggers remain: a human decides
	OutcomeNothingToDo = "nothing-to-do" // the window never triggered
)

// Loop defaults. The cap is generous on purpose: the method expects one accepted change in three to five
// attempts, and a healthy loop that needs more than this is doing something the rules were not made for.
const (
	DefaultMaxSteps   = 8
	DefaultStallBound = 2
)

// LoopConfig bounds the loop. Zero values take the defaults.
type LoopConfig struct {
	// MaxSteps is the global cap on steps; reaching it while triggers remain escalates.
	MaxSteps int `json:"max_steps"`
	// StallBound is the number of consecutive steps without progress that stops the loop as stalled.
	StallBound int `json:"stall_bound"`
	// ParityBudget is the most too-high cost a run may add on the parity prompts (DefaultParityBudget).
	ParityBudget float64 `json:"parity_budget"`
	// HoldoutRule is how a change that raises the frozen holdout's loss is decided ("": HoldoutVeto).
	HoldoutRule HoldoutRule `json:"holdout,omitempty"`
	// DriftAcknowledged are the knobs a human left at the drift bound: a stop on one of them, while the
	// active version holds it at that value, takes the knob out of the run instead of escalating
	// (DriftAcks.Held).
	DriftAcknowledged DriftAcks `json:"drift_acknowledged,omitempty"`
}

func (c LoopConfig) withDefaults() LoopConfig {
	if c.ParityBudget <= 0 {
		c.ParityBudget = DefaultParityBudget
	}
	if c.MaxSteps <= 0 {
		c.MaxSteps = DefaultMaxSteps
	}
	if c.StallBound <= 0 {
		c.StallBound = DefaultStallBound
	}
	return c
}

// LoopInput is what the loop needs; the fields mean what they mean in StepInput.
type LoopInput struct {
	Tasks      []traceparse.Task
	Stream     iter.Seq[*traceparse.Task]
	Resume     map[string]*LogState
	Parent     weights.Weights
	WeightsFor func(version string) (*weights.Weights, bool)
	Detect     func(title string) []weights.Signal
	Suite      *Suite
	Holdout    *Suite
	Config     LoopConfig
	// Parity, Origin and Used mean what they mean in StepInput (the budget is Config.ParityBudget).
	Parity *Parity
	Origin *weights.Weights
	Used   map[string]string
	// Refuted are changes never to propose on this parent: the raises the watch found not helping and
	// rolled back, while that rollback is the active version (docs/decisions.md#a-refuted-raise-waits-for-the-watch),
	// and what the changes a reviewer declined moved (docs/decisions.md#a-declined-change-is-refused-on-its-version).
	Refuted []Change
	// Now and EvidenceAfter mean what they mean in DetectInput.
	Now           time.Time
	EvidenceAfter time.Time
}

// LoopStep is one step of the loop with its progress witness.
type LoopStep struct {
	N int `json:"n"`
	*StepResult
	// Unresolved is how many flagged tasks were still on the low side when the step started.
	Unresolved int `json:"unresolved"`
	// WitnessBefore/After are the suite loss plus the motivating loss (the points the unresolved flagged
	// tasks still need to leave the low side) under the step's parent and its candidate. The step made
	// progress exactly when the witness fell: a deterministic measurement, never a self-report.
	WitnessBefore Num  `json:"witness_before"`
	WitnessAfter  Num  `json:"witness_after"`
	Progress      bool `json:"progress"`
}

// LoopResult is the whole run.
type LoopResult struct {
	Outcome string     `json:"outcome"`
	Reason  string     `json:"reason"`
	Config  LoopConfig `json:"config"`
	// Detection is the first detection (window, flagged tasks, screen) the loop worked from.
	Detection *Detection `json:"detection"`
	Steps     []LoopStep `json:"steps"`
	// Accepted are the steps whose change was kept (accept or halve), in order.
	Accepted []int `json:"accepted_steps"`
	// Resolved are the meta timestamps of flagged tasks lifted out of the low side by accepted steps (with
	// several logs, the same timestamp may appear once per log).
	Resolved []string `json:"resolved"`
	// Refused says why kept steps were dropped (a stalled run, or one that lifted no flagged task out of
	// L0/L1): then Final is Parent and the run's Decision is revert.
	Refused string `json:"refused,omitempty"`
	// Drift is the change the drift bound stopped (the outcome is escalated); DriftHeld the stops on knobs
	// tune.toml acknowledges at their value, which the run stepped past without a page.
	Drift     *Drift      `json:"drift"`
	DriftHeld []HeldDrift `json:"drift_held,omitempty"`
	// Partial says, for a partial run, how many flagged tasks are still low and the first refusal of
	// the change that would have gone further (the proposal's reason carries it).
	Partial string `json:"partial,omitempty"`
	// Held are the changes issue 11's frozen holdout vetoed after every other rule (the test, the loss
	// rule, the suite, the parity price) had let them through; a smaller step of the same knob the run
	// kept leaves the rest of the way held (docs/decisions.md#held-by-the-holdout).
	Held []HoldoutChange `json:"held,omitempty"`
	// HoldoutPaid are the kept changes that raised the holdout's loss and were accepted because the
	// history's expected gain paid for it (tune.toml [evolve] holdout = "priced",
	// docs/decisions.md#the-holdout-priced-on-request): what the project chose to overrule, for its reviewer.
	HoldoutPaid []HoldoutChange `json:"holdout_paid,omitempty"`
	// Parent is the weights the loop started from; Final is Parent with every kept change.
	Parent weights.Weights `json:"-"`
	Final  weights.Weights `json:"-"`

	stallReason string
	stillLow    int
}

// Loop repeats detect → propose → replay → decide while at least TriggerThreshold flagged tasks are
// unresolved. After an accepted step, the flagged tasks the candidate lifts out of the low side count as
// resolved and the candidate becomes the next step's parent. A reverted change is not proposed again
// until a later step is accepted.
//
// The bound counts consecutive steps without progress (docs/decisions.md#evolution-step, rule 12, after the progress-based
// loop bound of seed 003): a loop that keeps lowering its witness is healthy however long it runs; a loop
// that stops lowering it stalls. The global cap ends a loop that is still progressing as an escalation,
// keeping every accepted step.
func Loop(in LoopInput) (*LoopResult, error) {
	res, err := loop(in)
	if err != nil {
		return nil, err
	}
	res.judgeRun()
	res.Held = HeldBy(res.Parent, res.StepResults())
	if res.Refused == "" {
		res.HoldoutPaid = HoldoutPaidBy(res.Parent, res.StepResults())
	}
	return res, nil
}

// HoldoutChange is a change that raised the frozen holdout's loss after every other rule let it through
// (the holdout is read last, docs/decisions.md#acceptance). Under the veto it is held: the project's
// accumulated evidence and the stated losses wanted it and only the holdout said no, a conflict no rule
// of tune settles (docs/escalation.md, "A change the holdout holds"). Under a priced holdout it is one
// the history's gain paid for.
type HoldoutChange struct {
	Change Change `json:"change"`
	// From and To are the knob's value (the signal's weight, or the edge) before and after the change:
	// a change is relative to its step's parent, and a loop's steps have different parents.
	From       weights.Half `json:"from"`
	To         weights.Half `json:"to"`
	LossBefore Num          `json:"holdout_loss_before"`
	LossAfter  Num          `json:"holdout_loss_after"`
	// Worse are the holdout scenarios it makes worse (Holdout.Worse).
	Worse []string `json:"worse"`
}

// String is "ambiguous +2 (+1 → +3; holdout loss 0.000 → 0.250: holdout-L2-ambiguous L2 → L3)".
func (h HoldoutChange) String() string {
	s := fmt.Sprintf("%s (%s → %s; holdout loss %.3f → %.3f", h.Change, h.From, h.To, float64(h.LossBefore), float64(h.LossAfter))
	if len(h.Worse) > 0 {
		s += ": " + strings.Join(h.Worse, ", ")
	}
	return s + ")"
}

// HeldBy lists the changes the holdout vetoed in steps (run from parent), one per knob (a signal or an
// edge): the first the run tried, which is the step the loss rule preferred (its halves and the later
// steps' retries meet the same scenarios). A priced holdout's refusal is an ordinary one that more
// evidence can lift, never held.
func HeldBy(parent weights.Weights, steps []*StepResult) []HoldoutChange {
	return holdoutChanges(parent, steps, func(a *Attempt) bool { return a.Holdout.Verdict == "worse" && !a.Holdout.Priced }, true)
}

// HoldoutPaidBy lists every kept change of steps (run from parent) whose loss on the holdout the
// history's expected gain paid for (HoldoutPriced): what the project overrules, for its reviewer.
func HoldoutPaidBy(parent weights.Weights, steps []*StepResult) []HoldoutChange {
	return holdoutChanges(parent, steps, func(a *Attempt) bool { return a.Accepted && a.Holdout.Paid }, false)
}

// holdoutChanges lists the attempts pick selects among those that read the holdout, each from the
// parent of the step that tried it; onePerKnob keeps only the first of each knob.
func holdoutChanges(parent weights.Weights, steps []*StepResult, pick func(*Attempt) bool, onePerKnob bool) []HoldoutChange {
	var out []HoldoutChange
	for _, s := range steps {
		if s == nil {
			continue
		}
		for i := range s.Attempts {
			a := &s.Attempts[i]
			h, c := a.Holdout, a.Change
			if !pick(a) || h.LossBefore == nil || h.LossAfter == nil ||
				onePerKnob && slices.ContainsFunc(out, func(x HoldoutChange) bool { return x.Change.SameKnob(c) }) {
				continue
			}
			cand := c.Apply(parent)
			out = append(out, HoldoutChange{Change: c, From: c.knob(&parent), To: c.knob(&cand), LossBefore: *h.LossBefore, LossAfter: *h.LossAfter, Worse: h.Worse})
		}
		if s.Change != nil {
			parent = s.Change.Apply(parent)
		}
	}
	return out
}

// judgeRun applies the run rules (docs/decisions.md#acceptance): a run whose kept steps lift no flagged
// task out of L0/L1 keeps nothing (at a stall and at the step cap too). A loop that stops without
// progress after kept steps that did lift flagged tasks is not a stall of those steps: each of them
// passed every rule on its own and lowered the witness; what found no allowed change is the next step,
// for the tasks still low. Such a run keeps its steps and ends "partial", naming the rest
// (docs/decisions.md#partial-runs).
func (res *LoopResult) judgeRun() {
	switch {
	case len(res.Accepted) > 0 && len(res.Resolved) == 0:
		res.Refused = fmt.Sprintf("the %d kept step(s) lift no flagged task out of L0/L1: nothing is proposed", len(res.Accepted))
		if res.Outcome == OutcomeStalled {
			res.Refused = "the run stalled and " + res.Refused
		}
	case len(res.Accepted) > 0 && res.Outcome == OutcomeStalled:
		res.Outcome = OutcomePartial
		res.Reason = fmt.Sprintf("%d kept step(s) lifted %d flagged task(s) out of L0/L1 and are proposed; then %s",
			len(res.Accepted), len(res.Resolved), res.stallReason)
		res.Partial = fmt.Sprintf("%d flagged task(s) still on the low side", res.stillLow)
		if a := res.lastRefusal(); a != nil {
			res.Partial += fmt.Sprintf("; going further was refused (%s: %s)", a.Change, a.Reason)
		}
	}
	if res.Refused != "" {
		res.Final = res.Parent
	}
}

func loop(in LoopInput) (*LoopResult, error) {
	cfg := in.Config.withDefaults()
	if in.Suite.Len() == 0 {
		return nil, fmt.Errorf("evolve: the fixture suite is empty; a step needs scenarios to measure on")
	}
	parent := in.Parent
	first := Detect(DetectInput{Tasks: in.Tasks, Stream: in.Stream, Resume: in.Resume, Now: in.Now, EvidenceAfter: in.EvidenceAfter, Origin: in.Origin, Parity: in.Parity, Exclude: in.Refuted,
		Resolver: Resolver{Active: &parent, WeightsFor: in.WeightsFor, Detect: in.Detect, Used: in.Used}})
	res := &LoopResult{Config: cfg, Detection: first, Steps: []LoopStep{}, Accepted: []int{}, Resolved: []string{},
		Parent: parent, Final: parent}
	if !first.Triggered {
		res.Outcome, res.Reason = OutcomeNothingToDo, first.Reason
		return res, nil
	}
	resolved := map[string]bool{}
	// exclude is what the next step leaves out (cleared by a kept step); heldOut the changes of held
	// drift-bound stops, out for the rest of the run: the active value that holds them does not move.
	var exclude, heldOut []Change
	noProgress := 0
	for n := 1; ; n++ {
		det := first.withResolved(resolved)
		unresolved := det.Flagged
		if !det.Triggered {
			res.Outcome = OutcomeConverged
			res.Reason = fmt.Sprintf("%d accepted step(s) lifted %d flagged task(s) out of the low side; %d remain in the windows, fewer than %d, and no passing signal has %d still low",
				len(res.Accepted), len(res.Resolved), windowFlagged(unresolved), TriggerThreshold, TriggerThreshold)
			return res, nil
		}
		// A held stop is not a step the cap counts: it measures nothing, and each takes a knob out.
		if n-len(res.DriftHeld) > cfg.MaxSteps {
			res.Outcome = OutcomeEscalated
			res.Reason = fmt.Sprintf("step cap %d reached with %d flagged task(s) still on the low side; %d step(s) accepted and kept",
				cfg.MaxSteps, len(unresolved), len(res.Accepted))
			return res, nil
		}
		step, err := Step(StepInput{Detected: det, Parent: res.Final, WeightsFor: in.WeightsFor, Detect: in.Detect,
			Suite: in.Suite, Holdout: in.Holdout, HoldoutRule: cfg.HoldoutRule, Exclude: slices.Concat(in.Refuted, exclude, heldOut), Parity: in.Parity, ParityBudget: cfg.ParityBudget,
			Origin: in.Origin, InLoop: true, ParityBase: &res.Parent})
		if err != nil {
			return nil, err
		}
		ls := LoopStep{N: n, StepResult: step, Unresolved: len(unresolved)}
		ls.WitnessBefore = witness(step.SuiteLossBefore, unresolved, &res.Final)
		ls.WitnessAfter = witness(step.SuiteLossAfter, unresolved, &step.Candidate)
		ls.Progress = ls.WitnessAfter < ls.WitnessBefore
		res.Steps = append(res.Steps, ls)
		if held := cfg.DriftAcknowledged.Held(step.Drift, &res.Final, &res.Parent); held != nil {
			// A human read this page before and left the knob here: the knob is out of this run, which
			// goes on as if its change had been refused — another knob's stop still pages, and a run
			// with nothing else to do stalls (docs/decisions.md#a-drift-bound-a-human-has-read). Not a
			// step without progress: each held stop takes a knob out, so they are bounded.
			res.DriftHeld = append(res.DriftHeld, *held)
			heldOut = append(heldOut, step.Drift.Change)
			exclude = append(exclude, step.Excluded()...)
			continue
		}
		cfg.DriftAcknowledged.Page(step.Drift, &res.Parent)
		if step.Drift != nil {
			res.Outcome, res.Drift = OutcomeEscalated, step.Drift
			res.Reason = fmt.Sprintf("%s; %d step(s) accepted and kept", step.Drift.Reason, len(res.Accepted))
			return res, nil
		}

		if step.Change != nil {
			res.Accepted = append(res.Accepted, n)
			// The tasks the candidate lifts out of the low side (step.Lifted) are resolved. They are keyed
			// by log and meta line, not by meta timestamp: two projects' logs may share a timestamp.
			for i := range unresolved {
				if f := &unresolved[i]; rescore(f, &res.Final, &step.Candidate).OutOfLowSide {
					resolved[f.key()] = true
					res.Resolved = append(res.Resolved, f.MetaTimestamp)
				}
			}
			res.Final = step.Candidate
			exclude = nil
		} else {
			exclude = append(exclude, step.Excluded()...)
		}
		if ls.Progress {
			noProgress = 0
			continue
		}
		noProgress++
		if noProgress >= cfg.StallBound {
			res.Outcome = OutcomeStalled
			res.stillLow = len(unresolved)
			res.stallReason = fmt.Sprintf("%d consecutive step(s) found no change the rules allow for the %d flagged task(s) still low (last: %s)",
				noProgress, len(unresolved), stepSummary(step))
			res.Reason = fmt.Sprintf("%d consecutive step(s) without progress (last: %s); %d step(s) accepted and kept",
				noProgress, stepSummary(step), len(res.Accepted))
			return res, nil
		}
	}
}

// lastRefusal is the first attempt of the last step after the last kept step that measured anything.
func (res *LoopResult) lastRefusal() *Attempt {
	last := 0
	if n := len(res.Accepted); n > 0 {
		last = res.Accepted[n-1]
	}
	for i := len(res.Steps) - 1; i >= 0; i-- {
		if s := res.Steps[i]; s.N > last && len(s.Attempts) > 0 {
			return &s.Attempts[0]
		}
	}
	return nil
}

// SupportingKeys are the evidence-ledger keys of the tasks that supported the run's change: every
// flagged task of the run's detection (docs/decisions.md#evidence-ledger). Nil when the run keeps no
// change.
func (res *LoopResult) SupportingKeys() []string {
	if !res.Decision().Applicable() {
		return nil
	}
	keys := make([]string, 0, len(res.Detection.Flagged))
	for _, f := range res.Detection.Flagged {
		keys = append(keys, f.Key)
	}
	sort.Strings(keys)
	return slices.Compact(keys)
}

// witness is the loop's progress measure: the suite loss plus, for every unresolved flagged task, the
// points its weighted sum still lacks to leave the low side (reach the bucket above L1's upper edge).
func witness(suiteLoss Num, flagged []Flagged, w *weights.Weights) Num {
	var need weights.Half
	for i := range flagged {
		sum := w.Score(flagged[i].Fired)
		if lack := w.Buckets.Edges[weights.L1] + 1 - sum; lack > 0 {
			need += lack
		}
	}
	return suiteLoss + Num(need.Float())
}

func stepSummary(s *StepResult) string {
	if s.Tried == nil {
		return "no change left to try: " + s.Reason
	}
	return fmt.Sprintf("%s %s", s.Tried, s.Decision)
}
