package app

// Converters from the evolution step and the weights store into the reports' inputs: every command
// that writes a report builds its input here, the same way. They live in app, not in report, so that
// report renders values and never reads the store (TestLayering).

import (
	"fmt"
	"math"
	"strings"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/weights"
)

// ProposalReportFromSteps converts evolution steps into the proposal report's input. steps holds one step
// for tune propose and the whole chain for tune evolve / nightly (window, flagged tasks and screen come
// from the first step; attempts from all; the replay compares the original parent with the final
// candidate). p is the proposal written for them (its id names the report).
func ProposalReportFromSteps(steps []*evolve.StepResult, parent weights.Weights, p *store.Proposal, warnings []evolve.Warning) report.ProposalReport {
	in := ProposalReportOf(p, parent)
	if len(steps) == 0 {
		return in
	}
	first, last := steps[0], steps[len(steps)-1]
	in.Window = fromDetection(first.Detection)
	in.Flagged = fromFlagged(first.Flagged)
	chosen := ""
	if first.Tried != nil && first.Tried.Kind == weights.ChangeSignal {
		chosen = first.Tried.Signal.String()
	}
	in.Screen = make([]report.ScreenRow, len(first.Screen))
	for i, r := range first.Screen {
		verdict := r.Verdict
		if r.Confidence != "" && r.Confidence != r.Verdict {
			verdict += " (" + r.Confidence + ")"
		}
		in.Screen[i] = report.ScreenRow{Signal: r.Signal, A: r.A, B: r.B, C: r.C, D: r.D, Phi: float64(r.Phi),
			LogOdds: float64(r.LogOR), Z: float64(r.Z), FisherP: float64(r.P), HolmP: float64(r.HolmP), MinP: float64(r.MinP),
			Consistent: r.Consistent, Verdict: verdict, Chosen: r.Signal == chosen, EValue: numPtr(&r.EValue), MoreNeeded: &r.MoreNeeded}
	}
	// NoPattern ("no consistent pattern": a detector gap) is not set since issue 28: without a proposal the
	// evidence may simply not have accumulated yet; the screen's "more" column says how far it is.
	acc := first.Accumulated
	in.Accumulated = fmt.Sprintf("Accumulated evidence: %d settled eligible task(s), %d flagged; %d not settled yet (%s)",
		acc.Eligible, acc.Flagged, acc.Pending, evolve.SettlingRule())
	if acc.Watermark != "" {
		in.Accumulated += fmt.Sprintf("; evidence up to %s was spent by an applied change (%d eligible task(s) left out)", acc.Watermark, acc.BeforeWatermark)
	}
	if acc.Through != "" {
		in.Accumulated += "; counted through " + acc.Through
	}
	in.Accumulated += "."
	for _, g := range append(append([]evolve.Gain(nil), first.Gains...), first.Beyond...) {
		in.LossRule = append(in.LossRule, g.String())
	}
	for _, g := range first.Unpaid {
		in.LossRuleUnpaid = append(in.LossRuleUnpaid, g.String())
	}
	in.Attempts = nil
	var decisive, firstAttempt *evolve.Attempt
	if len(first.Attempts) > 0 {
		firstAttempt = &first.Attempts[0]
	}
	for si, st := range steps {
		for ai := range st.Attempts {
			a := &st.Attempts[ai]
			in.Attempts = append(in.Attempts, fromAttempt(si+1, a))
			if decisive == nil || a.Accepted || !decisive.Accepted {
				decisive = a
			}
		}
	}
	in.Decisive = taskScores(firstAttempt, decisive)
	if decisive != nil {
		in.Discordant = &report.SignTest{Better: decisive.Discordant.Improved, Worse: decisive.Discordant.Worsened,
			P: float64(decisive.Discordant.P), MinP: float64(decisive.Discordant.MinP), Verdict: decisive.Discordant.Verdict}
		in.LeaveOneOut = &report.LeaveOneOut{Agree: decisive.LOO.Agree, Folds: decisive.LOO.Folds, Flips: decisive.LOO.Flips}
	}
	in.Replay = ReplayRows(first.Before, last.After)
	in.SuiteLossBefore, in.SuiteLossAfter = float64(first.SuiteLossBefore), float64(last.SuiteLossAfter)
	// The holdout of the last step that kept a change (the run's last read of it for a kept change),
	// else the last step's.
	h := last.Holdout
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].Change != nil {
			h = steps[i].Holdout
			break
		}
	}
	in.Holdout = &report.Holdout{Scenarios: h.Scenarios, Reads: h.Reads, Verdict: h.Verdict,
		LossBefore: numPtr(h.LossBefore), LossAfter: numPtr(h.LossAfter), Priced: first.HoldoutRule == evolve.HoldoutPriced}
	for _, c := range keptHoldoutPaid(steps, &parent, &p.Candidate) {
		in.Holdout.Paid = append(in.Holdout.Paid, c.String())
	}
	// The run's warnings, the list the command printed; every step re-detects the same window, so
	// collecting the steps' warnings listed each one once per step (docs/decisions.md#warnings-once).
	for _, w := range evolve.UniqueWarnings(warnings) {
		in.Warnings = append(in.Warnings, w.String())
	}
	return in
}

// ProposalReportOf is what a proposal file holds: decision, losses, flagged tasks (without their
// signals), every step with the screen numbers it stored, and the weight diff.
func ProposalReportOf(p *store.Proposal, parent weights.Weights) report.ProposalReport {
	in := report.ProposalReport{ID: p.ID, Created: p.Created, Parent: p.Parent, Decision: p.Decision, Reason: p.Reason,
		Confidence: p.Confidence, SuiteLossBefore: p.SuiteLossBefore, SuiteLossAfter: p.SuiteLossAfter,
		Before: parent, After: p.Candidate}
	for _, f := range p.Evidence {
		title, _ := report.TaskTitle(f.Title) // a proposal written before titles were cut carries them whole
		in.Flagged = append(in.Flagged, report.FlaggedTask{MetaTimestamp: f.MetaTimestamp, Title: title, Level: f.Level,
			Source: f.Source, Evidence: f.Evidence})
	}
	seen := map[string]bool{}
	for i, st := range p.Steps {
		in.Attempts = append(in.Attempts, attemptRow(&st))
		// The screen rows a proposal stores are those of the signals it changed; the rest are recomputed
		// from the counts (Holm needs all nine signals, so only the stored adjusted p is shown).
		if st.Counts == nil || seen[st.Signal] {
			continue
		}
		seen[st.Signal] = true
		c := st.Counts
		logOR, _, z := stats.LogOddsZ(c.A, c.B, c.C, c.D)
		row := report.ScreenRow{Signal: st.Signal, A: c.A, B: c.B, C: c.C, D: c.D, Phi: stats.Phi(c.A, c.B, c.C, c.D),
			LogOdds: logOR, Z: z, FisherP: deref(st.FisherP), HolmP: deref(st.HolmP), MinP: stats.FisherMinP(c.A, c.B, c.C, c.D),
			Verdict: strings.TrimSpace("candidate " + parenthesised(st.Confidence)), Chosen: i == 0, EValue: st.EValue}
		in.Screen = append(in.Screen, row)
	}
	return in
}

func fromDetection(det *evolve.Detection) *report.Window {
	win := &report.Window{Size: det.Window.Size, Triggered: det.Triggered, Trigger: evolve.TriggerThreshold}
	for _, l := range det.Window.Logs {
		win.Logs = append(win.Logs, report.WindowLog{Source: l.Source, Labelled: l.Labelled, Tasks: l.Tasks, Closed: l.Closed,
			Eligible: l.Eligible, ResolvedByActive: &l.ResolvedByActive, LedgerUsed: &l.Used, MedianLossFinal: numPtr(l.Median), First: l.First, Last: l.Last})
	}
	return win
}

func fromFlagged(flagged []evolve.Flagged) []report.FlaggedTask {
	out := make([]report.FlaggedTask, len(flagged))
	for i := range flagged {
		f := &flagged[i]
		signals := make([]string, len(f.Signals))
		for j, s := range f.Signals {
			signals[j] = s.Name
		}
		title, _ := report.TaskTitle(f.Title)
		out[i] = report.FlaggedTask{MetaTimestamp: f.MetaTimestamp, Title: title, Level: f.Level, Source: f.Source, Line: f.Line,
			Evidence: f.EvidenceStrings(), Signals: signals, Redetected: f.SignalsSource == evolve.SignalsReDetected}
	}
	return out
}

// attemptRow is the one mapping of an attempt to the report's row, from its persisted form: what a
// proposal file holds (change, decision, suite losses; Lifted -1, not recorded). fromAttempt adds what
// only the measured value carries.
func attemptRow(st *store.ProposalStep) report.Attempt {
	return report.Attempt{Change: st.Label(), Decision: st.Decision, Lifted: -1,
		SuiteLossBefore: st.SuiteLossBefore, SuiteLossAfter: st.SuiteLossAfter}
}

// fromAttempt is the report row of a measured attempt of step step: attemptRow of its persisted form,
// with the scenarios that got worse, the motivating tasks, the lift, the parity price and the note.
func fromAttempt(step int, a *evolve.Attempt) report.Attempt {
	worse := make([]string, len(a.Worse))
	for i, d := range a.Worse {
		worse[i] = fmt.Sprintf("%s %d→%d", d.Name, d.Before, d.After)
	}
	up := 0
	for _, m := range a.Motivating {
		if m.Moved == "up" {
			up++
		}
	}
	note := ""
	if !a.Accepted {
		note = a.Reason
	}
	parity := ""
	if a.Parity != nil {
		parity = a.Parity.String()
	}
	st := proposalStepOf(a, nil)
	row := attemptRow(&st)
	row.Step, row.ScenariosWorse, row.MotivatingUp, row.Motivating = step, worse, up, len(a.Motivating)
	row.Note, row.Lifted, row.Parity = note, a.Lifted, parity
	return row
}

// replayRows pairs the scenarios of two replays of the same suite by position.
func ReplayRows(before, after evolve.Replay) []report.ScenarioLoss {
	rows := make([]report.ScenarioLoss, 0, len(before.Rows))
	for i, b := range before.Rows {
		if i >= len(after.Rows) {
			break
		}
		a := after.Rows[i]
		rows = append(rows, report.ScenarioLoss{Scenario: b.Name, Expected: strings.Join(b.Accepted, "|"),
			LevelBefore: b.Got, LevelAfter: a.Got, LossBefore: float64(b.Loss), LossAfter: float64(a.Loss)})
	}
	return rows
}

func numPtr(n *evolve.Num) *float64 {
	if n == nil || math.IsNaN(float64(*n)) {
		return nil
	}
	v := float64(*n)
	return &v
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func parenthesised(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}

// HistoryReportOf reads every version and the evolution log of the weights store s into the
// history report's input. Evidence is carried as a count: the log's evidence lines quote task titles,
// which the report does not need to repeat.
func HistoryReportOf(s *store.Store) (report.HistoryReport, error) {
	var in report.HistoryReport
	var err error
	if in.Active, err = s.ActiveVersion(); err != nil {
		return in, err
	}
	nums, err := s.Versions()
	if err != nil {
		return in, err
	}
	for _, n := range nums {
		w, err := s.Version(n)
		if err != nil {
			return in, err
		}
		in.Versions = append(in.Versions, w)
	}
	entries, err := s.Entries()
	if err != nil {
		return in, err
	}
	for _, e := range entries {
		in.Entries = append(in.Entries, report.HistoryEntry{Serial: e.Serial, Time: e.Time, Action: e.Action, Parent: e.Parent,
			Result: e.Result, Restores: e.Restores, Proposal: e.Proposal, Change: e.Change, Decision: e.Decision,
			SuiteLossBefore: e.SuiteLossBefore, SuiteLossAfter: e.SuiteLossAfter, Evidence: len(e.Evidence), Reason: e.Reason})
	}
	return in, nil
}

// taskScores pairs the flagged tasks' scores under the first step's parent (its first attempt's
// rescores) with their scores under the deciding attempt's candidate, by task.
func taskScores(first, decisive *evolve.Attempt) []report.TaskScore {
	if first == nil || decisive == nil {
		return nil
	}
	type key struct{ at, title string }
	cand := map[key]float64{}
	for _, r := range decisive.Motivating {
		cand[key{r.MetaTimestamp, r.Title}] = r.CandidateSum.Float()
	}
	var out []report.TaskScore
	for _, r := range first.Motivating {
		c, ok := cand[key{r.MetaTimestamp, r.Title}]
		if !ok {
			continue
		}
		out = append(out, report.TaskScore{Title: r.Title, Parent: r.ParentSum.Float(), Candidate: c})
	}
	return out
}
