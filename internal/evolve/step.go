package evolve

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// Detection is the result of the detect stages: window → flagged → trigger → screen → proposal.
type Detection struct {
	Window Window `json:"window"`
	// Median is the window median final loss when exactly one log was read (each log has its own, in
	// Window.Logs); nil otherwise or when no loss is known.
	Median    *Num        `json:"median_loss_final"`
	Flagged   []Flagged   `json:"flagged"`
	Triggered bool        `json:"triggered"`
	Screen    []ScreenRow `json:"screen"`
	// Proposal is the first change to try, nil when there is none.
	Proposal *Change `json:"proposal"`
	// Reason says why there is no proposal (or names the rule that produced it).
	Reason   string    `json:"reason"`
	Warnings []Warning `json:"warnings"`
	// EdgeTasks is how many flagged tasks sit exactly on the upper edge of their bucket (the edge the
	// bucket rule would move).
	EdgeTasks int `json:"edge_tasks"`
	// Population and Correction say what the screen compared and how it corrected for multiplicity;
	// MinEffect is the smallest prevalence difference a candidate needs.
	Population string  `json:"population"`
	Correction string  `json:"correction"`
	MinEffect  float64 `json:"min_effect"`
	// Used lists the window tasks the evidence ledger names: left out of flagging, trigger and screen.
	Used []UsedTask `json:"ledger_used"`

	// screenTasks are the closed window tasks the screen counted, kept so that a loop can screen again
	// once some flagged tasks are resolved.
	screenTasks []screenTask
}

// withResolved is the detection as a later loop step sees it: the resolved flagged tasks (by taskKey)
// are left out of the flagged list and the trigger, and consistency is judged on the tasks that are still
// on the low side. The screen's statistics are NOT recomputed: a run has one family of tests, the nine
// signals of its first screen, and every candidate any step tries is tested in it under Holm
// (docs/decisions.md#screen). The proposal is left for Step to derive.
func (d *Detection) withResolved(resolved map[string]bool) *Detection {
	out := *d
	out.Flagged = make([]Flagged, 0, len(d.Flagged))
	for _, f := range d.Flagged {
		if !resolved[f.key()] {
			out.Flagged = append(out.Flagged, f)
		}
	}
	out.Triggered = len(out.Flagged) >= TriggerThreshold
	out.Screen = make([]ScreenRow, len(d.Screen))
	for s, r := range d.Screen {
		a := 0
		for _, f := range out.Flagged {
			if slices.Contains(f.Fired, weights.Signal(s)) {
				a++
			}
		}
		r.Consistent = consistent(a, len(out.Flagged))
		out.Screen[s] = r
	}
	return &out
}

// DetectInput is what Detect needs.
type DetectInput struct {
	// Tasks are the tasks read from one or several logs, in file order per log (traceparse.ReadLast per log).
	Tasks    []traceparse.Task
	Resolver Resolver
	// Exclude lists changes not to propose (a loop passes the ones it already tried).
	Exclude []Change
}

// Detect runs the stages up to the proposal. It needs Resolver.Active.
func Detect(in DetectInput) *Detection {
	r := in.Resolver
	wins, warns := buildWindows(in.Tasks, &r)
	det := &Detection{Warnings: warns, Flagged: []Flagged{}, Used: []UsedTask{}, Population: ScreenPopulation,
		Correction: ScreenCorrection, MinEffect: MinEffect}
	var medians []*Num
	det.Window, medians = summarise(wins, labelledCount(in.Tasks))
	if len(wins) == 1 {
		det.Median = medians[0]
	}
	var screenTasks []screenTask
	for i, win := range wins {
		findEvidence(win, medians[i])
		for _, wt := range win {
			if len(wt.evidence) > 0 {
				det.Flagged = append(det.Flagged, wt.flagged())
			}
			if wt.usedBy != "" {
				det.Used = append(det.Used, UsedTask{Key: wt.key, MetaTimestamp: wt.t.MetaTimestamp, Title: wt.t.Title,
					Source: wt.t.Source, Line: wt.t.Line, By: wt.usedBy})
			}
			if wt.eligible {
				st := screenTask{flagged: len(wt.evidence) > 0, key: taskKey(wt.t.Source, wt.t.Line)}
				for _, s := range wt.fired {
					st.fired[s] = true
				}
				screenTasks = append(screenTasks, st)
			}
		}
	}
	det.Triggered = len(det.Flagged) >= TriggerThreshold
	det.screenTasks = screenTasks
	det.Screen = Screen(screenTasks, len(det.Flagged))
	det.Proposal, det.EdgeTasks, det.Reason = propose(det, r.Active, in.Exclude, false)
	return det
}

// propose applies rule 7 (docs/decisions.md#evolution-step). signalReverted is true when the signal change was measured and reverted,
// which opens the bucket rule even when a consistent signal exists.
func propose(det *Detection, parent *weights.Weights, exclude []Change, signalReverted bool) (*Change, int, string) {
	if !det.Triggered {
		return nil, 0, fmt.Sprintf("no trigger: %d low-side regression(s) in the window, %d needed", len(det.Flagged), TriggerThreshold)
	}
	if tied := Tied(det.Screen); len(tied) > 0 {
		return nil, 0, fmt.Sprintf("no proposal: indistinguishable %s — their 2×2 tables over the eligible tasks are identical, so the window cannot say which one is the signal",
			strings.Join(tied, ", "))
	}
	if !signalReverted {
		if s, ok := pickSignal(det.Screen, det.Flagged, parent, exclude); ok {
			c := Change{Kind: weights.ChangeSignal, Signal: s, Delta: weights.Whole(1)}
			return &c, 0, fmt.Sprintf("%s is the consistent candidate with the highest z", s)
		}
	}
	edge, onEdge, ok := pickEdge(det.Flagged, parent, exclude)
	if ok {
		why := "no consistent candidate signal"
		if signalReverted {
			why = "the signal change was reverted"
		}
		return &edge, onEdge, fmt.Sprintf("%s, and %d flagged tasks score exactly on the upper edge of %s", why, onEdge, edge.Edge)
	}
	return nil, onEdge, noProposalReason(det, exclude, onEdge)
}

// noProposalReason says precisely why neither rule produced a change: which signals fired consistently
// and why the screen does not back them (or that they were tried already), how many flagged tasks sit
// on a bucket edge, and the flagged tasks themselves.
func noProposalReason(det *Detection, exclude []Change, onEdge int) string {
	var tried, unbacked []string
	for s, r := range det.Screen {
		switch {
		case !r.Consistent:
		case r.Verdict == VerdictCandidate:
			// Consistent candidates only fail to be picked when the loop already tried them.
			tried = append(tried, r.Signal)
		case r.Verdict == VerdictUnderpowered:
			unbacked = append(unbacked, fmt.Sprintf("%s is underpowered (even the most extreme table gives p %.3g, above Holm's first threshold %.3g)",
				weights.Signal(s), float64(r.MinP), Alpha/float64(weights.NumSignals)))
		case r.Verdict == VerdictSmallEffect:
			unbacked = append(unbacked, fmt.Sprintf("%s passes Holm (p %.3g) but its effect %.2f is below %.2f", weights.Signal(s), float64(r.HolmP), float64(r.Effect), MinEffect))
		default:
			unbacked = append(unbacked, fmt.Sprintf("%s is no signal (Fisher p %.3g, Holm p %.3g, log-odds %.2f)", weights.Signal(s), float64(r.P), float64(r.HolmP), float64(r.LogOR)))
		}
	}
	var parts []string
	switch {
	case len(tried) > 0:
		parts = append(parts, "every consistent candidate was tried and reverted ("+strings.Join(tried, ", ")+")")
	case len(unbacked) > 0:
		parts = append(parts, "the signals that fired consistently in the flagged tasks are not backed by the screen: "+strings.Join(unbacked, "; "))
	default:
		parts = append(parts, "no signal fired consistently in the flagged tasks")
	}
	switch {
	case onEdge < TriggerThreshold:
		parts = append(parts, fmt.Sprintf("%d flagged task(s) score exactly on a bucket edge, %d needed to move it", onEdge, TriggerThreshold))
	default:
		parts = append(parts, fmt.Sprintf("%d flagged tasks score exactly on a bucket edge, but moving it was tried already or would break the bucket order", onEdge))
	}
	titles := make([]string, len(det.Flagged))
	for i, f := range det.Flagged {
		titles[i] = fmt.Sprintf("%s %q", f.MetaTimestamp, f.Title)
	}
	flagged := "; flagged: " + strings.Join(titles, "; ")
	if len(tried) > 0 || onEdge >= TriggerThreshold {
		return strings.Join(parts, "; ") + flagged
	}
	return "no consistent pattern: " + strings.Join(parts, "; ") + " (a detector gap weights cannot fix)" + flagged
}

// StepInput is one evolution step's input. A loop calls Step repeatedly: it passes the tasks once (or the
// Detection of the first call, which does not depend on the weights), the current parent, and the changes
// it already tried.
type StepInput struct {
	// Tasks are read by the caller (traceparse.ReadLast per log); ignored when Detected is set.
	Tasks []traceparse.Task
	// Detected reuses an earlier Detection (window, flagged tasks with their signals, screen) instead of
	// re-reading Tasks; the proposal is re-derived for Parent.
	Detected *Detection
	// Parent is the weights version the step measures against.
	Parent weights.Weights
	// WeightsFor resolves meta weights= for re-detected tasks (optional; Parent is the fallback).
	WeightsFor func(version string) (*weights.Weights, bool)
	// Detect overrides re-detection of task titles (optional, tests).
	Detect func(title string) []weights.Signal
	// Suite is the prepared fixture suite the decision is measured on; Holdout the frozen split, read
	// only after the decision.
	Suite   *Suite
	Holdout *Suite
	// Exclude lists changes not to propose again.
	Exclude []Change
	// Parity prices a candidate on real prompts (nil: not priced); ParityBudget is the most too-high cost
	// a change may add (0 takes DefaultParityBudget).
	Parity       *Parity
	ParityBudget float64
	// ParityBase is what the parity price compares with: the active version the run started from (nil:
	// Parent), so that a run's steps are priced together.
	ParityBase *weights.Weights
	// Origin is the first version (v0001): no weight may move more than DriftBound points away from it
	// without a human. Nil skips the bound.
	Origin *weights.Weights
	// InLoop marks a step of the evolve loop: its change is kept when the witness falls, and the loop
	// judges the whole run (a lift out of L0/L1). A single step (tune propose) must lift a flagged task
	// out of L0/L1 itself.
	InLoop bool
	// Used is the evidence ledger (see Resolver.Used); ignored when Detected is set.
	Used map[string]string
}

// StepResult is everything the step found, tried and decided.
type StepResult struct {
	*Detection
	// Attempts are every measured change in order (full step, half step, then the bucket rule).
	Attempts []Attempt `json:"attempts"`
	// Decision is accept, halve, revert or none (no trigger or no proposal).
	Decision weights.Decision `json:"decision"`
	// Change is the accepted change (nil unless Decision is accept or halve); Tried the first change
	// measured (nil when none was).
	Change *Change `json:"change"`
	Tried  *Change `json:"tried"`
	// Candidate is Parent with Change applied (Parent itself when nothing was accepted).
	Candidate       weights.Weights `json:"-"`
	SuiteLossBefore Num             `json:"suite_loss_before"`
	SuiteLossAfter  Num             `json:"suite_loss_after"`
	// Before and After are the suite replays under Parent and Candidate.
	Before Replay `json:"-"`
	After  Replay `json:"-"`
	// Lifted are the meta timestamps of the flagged tasks the candidate lifts out of the low side (the
	// parent scores them L0/L1 from their signals, the candidate L2 or higher).
	Lifted  []string `json:"lifted"`
	Holdout Holdout  `json:"holdout"`
	// Drift is set when the change would move a weight more than DriftBound points away from the first
	// version: the step measured nothing and the caller escalates (exit 3).
	Drift *Drift `json:"drift"`
}

// Drift is a change the drift bound stops (docs/decisions.md#drift-bound).
type Drift struct {
	Change Change       `json:"change"`
	Knob   string       `json:"knob"`
	Origin weights.Half `json:"origin"`
	Would  weights.Half `json:"would_be"`
	Bound  weights.Half `json:"bound"`
	Reason string       `json:"reason"`
}

// driftOf returns the drift of a candidate from origin when any signal weight or bucket edge lies more
// than DriftBound points away from it, nil otherwise.
func driftOf(c Change, cand, origin *weights.Weights) *Drift {
	if origin == nil {
		return nil
	}
	bound := weights.Whole(DriftBound)
	mk := func(knob string, o, w weights.Half) *Drift {
		return &Drift{Change: c, Knob: knob, Origin: o, Would: w, Bound: bound,
			Reason: fmt.Sprintf("%s would move %s from %s (v%04d) to %s, more than %d points: a human decides (drift bound)",
				c, knob, o, origin.Version, w, DriftBound)}
	}
	for s := range cand.Signals {
		if d := cand.Signals[s] - origin.Signals[s]; d > bound || d < -bound {
			return mk(weights.Signal(s).String(), origin.Signals[s], cand.Signals[s])
		}
	}
	for l := range cand.Buckets.Edges {
		if d := cand.Buckets.Edges[l] - origin.Buckets.Edges[l]; d > bound || d < -bound {
			return mk(weights.Level(l).String()+" edge", origin.Buckets.Edges[l], cand.Buckets.Edges[l])
		}
	}
	return nil
}

// Step runs one evolution step. The only error is a missing suite; everything else is data.
func Step(in StepInput) (*StepResult, error) {
	if in.Suite.Len() == 0 {
		return nil, fmt.Errorf("evolve: the fixture suite is empty; a step needs scenarios to measure on")
	}
	parent := in.Parent
	det := in.Detected
	if det == nil {
		det = Detect(DetectInput{Tasks: in.Tasks, Exclude: in.Exclude,
			Resolver: Resolver{Active: &parent, WeightsFor: in.WeightsFor, Detect: in.Detect, Used: in.Used}})
	} else {
		d := *det
		d.Proposal, d.EdgeTasks, d.Reason = propose(&d, &parent, in.Exclude, false)
		det = &d
	}
	res := &StepResult{Detection: det, Attempts: []Attempt{}, Decision: weights.DecisionNone, Candidate: parent, Lifted: []string{}}
	res.Before = in.Suite.Score(&parent)
	res.After = res.Before
	res.SuiteLossBefore, res.SuiteLossAfter = res.Before.Loss, res.Before.Loss
	res.Holdout = Holdout{Scenarios: in.Holdout.Len(), Verdict: "not read"}
	if det.Proposal == nil {
		return res, nil
	}
	budget := in.ParityBudget
	if budget <= 0 {
		budget = DefaultParityBudget
	}
	base := in.ParityBase
	if base == nil {
		base = &parent
	}
	j := &judge{parent: &parent, parityBase: base, suite: in.Suite, holdout: in.Holdout, parity: in.Parity, budget: budget,
		before: in.Suite.Losses(&parent), flagged: det.Flagged, requireLift: !in.InLoop}
	first := *det.Proposal
	res.Tried = &first
	// tryChange measures the full step and, when it is rejected, the half step. A change beyond the
	// drift bound is not measured: the step stops and the caller escalates.
	tryChange := func(c Change) bool {
		for _, half := range []bool{false, true} {
			cc := c
			if half {
				cc = c.Halved()
			}
			cw := cc.Apply(parent)
			if d := driftOf(cc, &cw, in.Origin); d != nil {
				res.Drift = d
				return false
			}
			a, cand := evaluate(cc, half, j)
			res.Attempts = append(res.Attempts, a)
			if a.Accepted {
				res.Decision, res.Change, res.Candidate = a.Decision, &cc, cand
				res.Holdout = a.Holdout
				return true
			}
		}
		return false
	}
	accepted := tryChange(first)
	if !accepted && res.Drift == nil && first.Kind == weights.ChangeSignal {
		// The signal change was reverted: the bucket rule may move an edge instead.
		if edge, n, _ := propose(det, &parent, in.Exclude, true); edge != nil {
			res.EdgeTasks = n
			accepted = tryChange(*edge)
		}
	}
	if !accepted {
		res.Decision = weights.DecisionRevert
		if len(res.Attempts) == 0 {
			res.Decision = weights.DecisionNone
		}
		return res, nil
	}
	res.After = in.Suite.Score(&res.Candidate)
	res.SuiteLossAfter = res.After.Loss
	for i := range det.Flagged {
		if r := rescore(&det.Flagged[i], &parent, &res.Candidate); r.OutOfLowSide {
			res.Lifted = append(res.Lifted, r.MetaTimestamp)
		}
	}
	return res, nil
}

// SupportingKeys are the evidence-ledger keys of the flagged tasks behind a kept change (nil when the
// step keeps none).
func (res *StepResult) SupportingKeys() []string {
	if res.Change == nil {
		return nil
	}
	keys := make([]string, 0, len(res.Flagged))
	for _, f := range res.Flagged {
		keys = append(keys, f.Key)
	}
	sort.Strings(keys)
	return slices.Compact(keys)
}
