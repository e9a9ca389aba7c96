package app

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// ProposeResult is one evolution step as tune propose reports it (and its --json shape).
type ProposeResult struct {
	Triggered       bool             `json:"triggered"`
	Proposal        *evolve.Change   `json:"proposal"`
	Decision        weights.Decision `json:"decision"`
	SuiteLossBefore evolve.Num       `json:"suite_loss_before"`
	SuiteLossAfter  evolve.Num       `json:"suite_loss_after"`
	ProposalFile    *string          `json:"proposal_file"`
	ProposalID      string           `json:"proposal_id,omitempty"`
	Created         bool             `json:"created"`
	Reports         []string         `json:"reports"`
	Parent          string           `json:"parent"`
	Reason          string           `json:"reason"`
	Flagged         []evolve.Flagged `json:"flagged"`
	Attempts        []evolve.Attempt `json:"attempts"`
	Lifted          []string         `json:"lifted"`
	Holdout         evolve.Holdout   `json:"holdout"`
	// HoldoutPaid is the kept change when a priced holdout was paid for it (evolve.HoldoutPaidBy).
	HoldoutPaid []evolve.HoldoutChange `json:"holdout_paid,omitempty"`
	Warnings    []evolve.Warning       `json:"warnings"`
	// Drift is set when the change would cross the drift bound: nothing was measured and the command
	// escalates (exit 3). Explain is the screen's population, correction and ledger exclusions.
	Drift *evolve.Drift `json:"drift,omitempty"`
	// DriftHeld are the stops at the drift bound on knobs tune.toml acknowledges at their value: the
	// step goes on without them, and pages only for another knob's stop.
	DriftHeld []evolve.HeldDrift `json:"drift_held,omitempty"`
	Explain   Explain            `json:"explain"`

	// For the text output: the detection behind the step, the logs read and those read from a tail.
	Detection *evolve.Detection `json:"-"`
	Logs      []string          `json:"-"`
	Tails     []traceparse.Tail `json:"-"`
}

// Escalation is the error of a step the drift bound stopped: a human decides (exit code 3), as at
// the evolve loop's step cap. nil otherwise.
func (r *ProposeResult) Escalation() error {
	if r.Drift == nil {
		return nil
	}
	return escalation(r.Drift.Reason)
}

// Propose runs one evolution step on the logs against the active weights. When a change was measured
// it writes the pending proposal (once: the id is a hash of the content), logs its attempts (once per
// proposal) and writes its EVAL report.
func Propose(env Env, logs []string) (*ProposeResult, error) {
	inputs, err := readStepInputs(env, logs, true)
	if err != nil {
		return nil, err
	}
	parent, resolver, fx, read, dec := inputs.active, inputs.resolver, inputs.suite, inputs.read, inputs.dec
	cfg, err := LoopConfig(env, EvolveOptions{})
	if err != nil {
		return nil, err
	}
	step := evolve.StepInput{Stream: read.stream, Parent: parent, WeightsFor: resolver,
		Suite: evolve.PrepareSuite(fx.Scenarios), Holdout: evolve.PrepareSuite(fx.Holdout), HoldoutRule: cfg.HoldoutRule,
		Used: dec.Used, Origin: dec.Origin, Parity: dec.Parity, ParityBudget: cfg.ParityBudget,
		Now: env.Now(), EvidenceAfter: dec.EvidenceAfter}
	res, err := evolve.Step(step)
	if err == nil {
		err = read.err
	}
	// A stop at the drift bound on a knob tune.toml acknowledges at its value is held: the step is
	// taken again on the same detection without that knob and without what it measured, as the loop
	// does, and what each held step measured is recorded with the rest
	// (docs/decisions.md#a-drift-bound-a-human-has-read).
	var held []evolve.HeldDrift
	var steps []*evolve.StepResult
	for err == nil {
		h := cfg.DriftAcknowledged.Held(res.Drift, &parent, &parent)
		if h == nil {
			break
		}
		held, steps = append(held, *h), append(steps, res)
		step.Detected, step.Exclude = res.Detection, slices.Concat(step.Exclude, []evolve.Change{res.Drift.Change}, res.Excluded())
		res, err = evolve.Step(step)
	}
	if err != nil {
		return nil, err
	}
	steps = append(steps, res)
	attempts := []evolve.Attempt{}
	for _, st := range steps {
		attempts = append(attempts, st.Attempts...)
	}
	cfg.DriftAcknowledged.Page(res.Drift, &parent)
	res.Warnings = evolve.UniqueWarnings(append(parseWarnings(read), res.Warnings...))

	out := &ProposeResult{Triggered: res.Triggered, Decision: res.Decision, SuiteLossBefore: res.SuiteLossBefore,
		SuiteLossAfter: res.SuiteLossAfter, Parent: weights.VersionName(parent.Version), Reason: res.Reason,
		Flagged: res.Flagged, Attempts: attempts, Lifted: res.Lifted, Holdout: res.Holdout, Warnings: res.Warnings,
		Detection: res.Detection, Logs: read.names, Drift: res.Drift, Explain: explain(res.Detection),
		HoldoutPaid: evolve.HoldoutPaidBy(parent, steps)}
	out.DriftHeld = held
	switch {
	case res.Change != nil:
		out.Proposal = res.Change
	case res.Tried != nil:
		out.Proposal = res.Tried
	}
	if len(attempts) == 0 {
		return out, nil
	}
	// The EVAL report goes through the same code as tune report proposal and tune nightly, from the
	// input saved with the proposal.
	var in report.ProposalReport
	prop := ProposalFromSteps(steps, &parent, res.Candidate, env.Now())
	if len(held) > 0 {
		prop.Reason += "; held: " + evolve.HeldLine(held)
	}
	p, path, created, err := recordProposal(env, prop, steps, false, reportInput(steps, parent, out.Warnings, &in))
	if err != nil {
		return nil, err
	}
	out.ProposalFile, out.ProposalID, out.Created = &path, p.ID, created
	if out.Reports, err = report.WriteProposal(env.ReportsDir, in); err != nil {
		return nil, err
	}
	return out, nil
}

// ProposalFromSteps turns one or more evolution steps into the store's proposal: every attempt of every
// step in order, the candidate with every accepted change (final), and the flagged tasks of the first
// step. A run without an accepted change keeps the parent weights as its candidate (nothing to apply).
// One step (tune propose) is a loop of one.
func ProposalFromSteps(steps []*evolve.StepResult, parent *weights.Weights, final weights.Weights, now time.Time) *store.Proposal {
	first, last := steps[0], steps[len(steps)-1]
	p := &store.Proposal{Created: now.UTC(), Parent: parent.Version, Candidate: final,
		SuiteLossBefore: float64(first.SuiteLossBefore), SuiteLossAfter: float64(last.SuiteLossAfter),
		Decision: evolve.RunDecision(steps), EvidenceThrough: first.Accumulated.Through}
	var parts []string
	for _, res := range steps {
		for ai := range res.Attempts {
			a := &res.Attempts[ai]
			p.Steps = append(p.Steps, proposalStepOf(a, res.Screen))
			parts = append(parts, fmt.Sprintf("%s: %s", a.Change, a.Decision))
		}
		if res.Change != nil && res.Change.Kind == weights.ChangeSignal && p.Confidence == "" {
			p.Confidence = res.Screen[res.Change.Signal].Confidence
		}
	}
	for _, f := range first.Flagged {
		// Proposal files travel into pull requests: a secret-looking string in a title never goes with
		// them, nor a title of megabytes.
		title, cut := report.TaskTitle(f.Title)
		ft := store.FlaggedTask{MetaTimestamp: f.MetaTimestamp, Title: title, Level: f.Level, Source: f.Source,
			Evidence: f.EvidenceStrings(), Key: f.Key}
		// The trace keeps a title, not the prompt. Only when the signals were re-detected from the title
		// is the title what the scorer judged, and so a prompt worth harvesting as a fixture; a cut one
		// is not what it judged.
		if f.SignalsSource == evolve.SignalsReDetected && !cut {
			ft.Prompt = title
		}
		p.Evidence = append(p.Evidence, ft)
	}
	p.Reason = proposalReason(steps, parts, len(store.Changes(parent, &final)) > 0)
	if paid := keptHoldoutPaid(steps, parent, &final); len(paid) > 0 {
		p.Reason += "; holdout paid: " + HoldoutPaidLine(paid)
	}
	return p
}

// keptHoldoutPaid is what the steps' paid holdout changes leave in final: all of them when final keeps a
// change, none when the run kept nothing (a refused run overrules nothing).
func keptHoldoutPaid(steps []*evolve.StepResult, parent, final *weights.Weights) []evolve.HoldoutChange {
	if len(store.Changes(parent, final)) == 0 {
		return nil
	}
	return evolve.HoldoutPaidBy(*parent, steps)
}

// proposalStepOf is the one mapping of a measured attempt to its persisted form (a step of the
// proposal file), with the screen row of a changed signal (screen nil: none).
func proposalStepOf(a *evolve.Attempt, screen []evolve.ScreenRow) store.ProposalStep {
	st := store.ProposalStep{Kind: a.Change.Kind, Delta: a.Change.Delta, Decision: a.Decision,
		SuiteLossBefore: float64(a.SuiteLossBefore), SuiteLossAfter: float64(a.SuiteLossAfter)}
	if a.Change.Kind == weights.ChangeBucket {
		st.Edge = a.Change.Edge.String()
		return st
	}
	st.Signal = a.Change.Signal.String()
	if int(a.Change.Signal) < len(screen) {
		row := screen[a.Change.Signal]
		fisher, holm, e := float64(row.P), float64(row.HolmP), float64(row.EValue)
		st.Counts = &store.TwoByTwo{A: row.A, B: row.B, C: row.C, D: row.D}
		st.FisherP, st.HolmP, st.Confidence, st.EValue = &fisher, &holm, row.Confidence, &e
	}
	return st
}

// proposalReason is a proposal's stored reason (docs/decisions.md#proposal-reason). It leads with the
// changes the run keeps, because the first step's rule names the change it picked first, which may have
// been reverted for another (a signal tried, then a bucket edge kept); then the flagged tasks, every
// attempt with its decision, and the rule behind the first pick. changes says whether the candidate
// differs from the parent: a run that was refused keeps no change even though steps were accepted.
func proposalReason(steps []*evolve.StepResult, attempts []string, changes bool) string {
	var kept []string
	for _, s := range steps {
		if s.Change != nil && changes {
			kept = append(kept, s.Change.String())
		}
	}
	lead := "keeps no change"
	if len(kept) > 0 {
		lead = "keeps " + strings.Join(kept, ", ")
	}
	first := steps[0]
	parts := []string{lead, fmt.Sprintf("%d flagged task(s)", len(first.Flagged))}
	if len(attempts) > 0 {
		parts = append(parts, "tried "+strings.Join(attempts, ", "))
	}
	if first.Reason != "" {
		parts = append(parts, "first pick: "+first.Reason)
	}
	return strings.Join(parts, "; ")
}

// recordProposal writes the proposal and its attempts to the store (store.Store.Propose): the attempt
// entries first, all in one append (action = the attempt's decision: accept, halve or revert, with the
// proposal's evidence and the attempt's losses), then the proposal file — once per proposal: a re-run on
// the same inputs adds nothing and returns the stored proposal. numbered prefixes each reason with
// "evolve step N: " (the loop's steps share one proposal). saveInput saves the proposal's report input
// under the store lock (store.Store.Propose).
func recordProposal(env Env, p *store.Proposal, steps []*evolve.StepResult, numbered bool, input func(*store.Proposal) ([]byte, error)) (*store.Proposal, string, bool, error) {
	s, err := env.OpenStore()
	if err != nil {
		return nil, "", false, err
	}
	var evidence []string
	for _, f := range p.Evidence {
		evidence = append(evidence, fmt.Sprintf("%s %s %q: %s", f.MetaTimestamp, f.Level, f.Title, strings.Join(f.Evidence, "; ")))
	}
	var attempts []store.LogEntry
	for i, st := range steps {
		prefix := ""
		if numbered {
			prefix = fmt.Sprintf("evolve step %d: ", i+1)
		}
		for _, a := range st.Attempts {
			before, after := float64(a.SuiteLossBefore), float64(a.SuiteLossAfter)
			attempts = append(attempts, store.LogEntry{Action: string(a.Decision), Parent: p.Parent, Change: a.Change.String(),
				Decision: a.Decision, Evidence: evidence, SuiteLossBefore: &before, SuiteLossAfter: &after, Reason: prefix + a.Reason})
		}
	}
	return s.Propose(p, attempts, input)
}
