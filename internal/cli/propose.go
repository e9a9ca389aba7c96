package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/fixtures"
	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/weights"
)

type proposeOptions struct {
	IO          *IOStreams
	Now         func() time.Time
	WeightsDir  string
	FixturesDir string
	ReportsDir  string
	Logs        []string
	JSON        bool
}

// NewCmdPropose builds `tune propose`.
func NewCmdPropose(f *Factory) *cobra.Command {
	return newCmdPropose(f, nil)
}

func newCmdPropose(f *Factory, runF func(*proposeOptions) error) *cobra.Command {
	opts := &proposeOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "propose [LOG...]",
		Short: "Detect, propose one weight change, replay the fixtures under parent and candidate, and decide",
		Long: `Run one evolution step on the trace logs (default ` + DefaultTraceLog + `): tune detect's window,
flagged tasks, screen and proposal, then a replay of the fixture suite under the active weights
(the parent) and under the candidate.

The candidate is accepted when the suite loss does not rise, no scenario's loss rises, and the flagged
tasks, re-scored from their signals, move up (a higher level, or a weighted sum closer to the next
bucket). Otherwise the half step (+0.5) is tried; otherwise the change is reverted — and when it was
a signal change, a bucket edge may move by one instead if 3 flagged tasks score exactly on it.
Every attempt is shown with its numbers, its discordant scenarios (exact sign test; "insufficient
evidence" when even a unanimous result could not be significant) and its leave-one-out support.
The frozen holdout split is read only after the decision (reads are counted).

When a change was measured, the result is written as a pending proposal under
<weights-dir>/proposals/<id>.json (candidate weights, parent version, evidence, losses, decision) and
each attempt is appended to the evolution log. The id is a hash of the content: the same inputs give
the same proposal, which is never written twice. tune apply turns an accepted proposal into the next
weights version.

--json prints {"triggered", "proposal", "decision": "accept" | "halve" | "revert" | "none",
"suite_loss_before", "suite_loss_after", "proposal_file", ...} with the flagged tasks, attempts,
lifted tasks, holdout verdict and warnings.`,
		Example: `  tune propose
  tune propose projects/*/.ldd/trace.log --json | jq '{decision, proposal_file}'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Now, opts.WeightsDir, opts.FixturesDir, opts.ReportsDir, opts.Logs = f.Now, f.WeightsDir, f.FixturesDir, f.ReportsDir, args
			if runF != nil {
				return runF(opts)
			}
			return proposeRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the step as JSON")
	return cmd
}

type proposeReport struct {
	Triggered       bool              `json:"triggered"`
	Proposal        *evolve.Change    `json:"proposal"`
	Decision        string            `json:"decision"`
	SuiteLossBefore evolve.Num        `json:"suite_loss_before"`
	SuiteLossAfter  evolve.Num        `json:"suite_loss_after"`
	ProposalFile    *string           `json:"proposal_file"`
	ProposalID      string            `json:"proposal_id,omitempty"`
	Created         bool              `json:"created"`
	Reports         []string          `json:"reports"`
	Parent          string            `json:"parent"`
	Reason          string            `json:"reason"`
	Flagged         []evolve.Flagged  `json:"flagged"`
	Attempts        []evolve.Attempt  `json:"attempts"`
	Lifted          []string          `json:"lifted"`
	Holdout         evolve.Holdout    `json:"holdout"`
	Warnings        []evolve.Warning  `json:"warnings"`
	detection       *evolve.Detection // for the table
	logs            []string
	tails           tailLines
}

func proposeRun(opts *proposeOptions) error {
	parent, resolver, err := activeWeights(opts.WeightsDir)
	if err != nil {
		return err
	}
	fx, err := fixtures.LoadSuite(opts.FixturesDir)
	if err != nil {
		return err
	}
	logs, read, err := readTraceLogs(opts.Logs)
	if err != nil {
		return err
	}
	res, err := evolve.Step(evolve.StepInput{Tasks: read.Tasks, Parent: parent, WeightsFor: resolver,
		Suite: evolve.PrepareSuite(fx.Scenarios), Holdout: evolve.PrepareSuite(fx.Holdout)})
	if err != nil {
		return err
	}
	res.Warnings = append(parseWarnings(read), res.Warnings...)
	tails := newTailLines(read)
	printWarnings(opts.IO.ErrOut, res.Warnings, tails)

	rep := proposeReport{Triggered: res.Triggered, Decision: res.Decision, SuiteLossBefore: res.SuiteLossBefore,
		SuiteLossAfter: res.SuiteLossAfter, Parent: weights.VersionName(parent.Version), Reason: res.Reason,
		Flagged: res.Flagged, Attempts: res.Attempts, Lifted: res.Lifted, Holdout: res.Holdout, Warnings: res.Warnings,
		detection: res.Detection, logs: logs, tails: tails}
	switch {
	case res.Change != nil:
		rep.Proposal = res.Change
	case res.Tried != nil:
		rep.Proposal = res.Tried
	}
	if len(res.Attempts) > 0 {
		p, path, created, err := writeProposalOnce(opts.WeightsDir, buildProposal(res, &parent, opts.Now()))
		if err != nil {
			return err
		}
		rep.ProposalFile, rep.ProposalID, rep.Created = &path, p.ID, created
		if err := logAttempts(opts, p, res); err != nil {
			return err
		}
		// The EVAL report goes through the same code as tune report proposal and tune nightly.
		if rep.Reports, err = report.WriteProposal(opts.ReportsDir, ProposalReportFromSteps([]*evolve.StepResult{res}, parent, p)); err != nil {
			return err
		}
	}
	if opts.JSON {
		return storeWriteJSON(opts.IO.Out, rep)
	}
	return printPropose(opts.IO.Out, &rep)
}

// buildProposal turns a step into the store's proposal. One step is a loop of one, so it is built as
// tune evolve builds its proposal (proposalFromSteps, internal/cli/evolve.go): a reverted step keeps the
// parent weights as its candidate, and what was tried is in its steps.
func buildProposal(res *evolve.StepResult, parent *weights.Weights, now time.Time) *store.Proposal {
	return proposalFromSteps([]*evolve.StepResult{res}, parent, res.Candidate, now)
}

// logAttempts appends every attempt to the evolution log, once per proposal (see openUnlogged).
func logAttempts(opts *proposeOptions, p *store.Proposal, res *evolve.StepResult) error {
	s, err := openUnlogged(opts.WeightsDir, opts.Now, p.ID)
	if s == nil || err != nil {
		return err
	}
	return appendAttemptLog(s, p, res.Attempts, "")
}

// openUnlogged opens the store to log the attempts of proposal id, or returns nil when the log already
// holds them (a re-run on the same inputs adds nothing). It asks the log, not whether the proposal file
// was new: a run that wrote the file but could not log (a store that did not verify, a lock held too
// long) logs its attempts on the next run instead of never.
func openUnlogged(dir string, now func() time.Time, id string) (*store.Store, error) {
	s, err := store.Open(dir, now)
	if err != nil {
		return nil, err
	}
	entries, err := s.Entries()
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		switch e.Action {
		case store.ActionProposeAttempt, store.ActionAccept, store.ActionHalve, store.ActionRevert:
			if e.Proposal == id {
				return nil, nil
			}
		}
	}
	return s, nil
}

// appendAttemptLog writes one evolution-log entry per attempt of a step (action = its decision: accept,
// halve or revert), with the proposal's evidence and the attempt's losses. reasonPrefix labels the step
// (e.g. "evolve step 2: ") when several steps share a proposal.
func appendAttemptLog(s *store.Store, p *store.Proposal, attempts []evolve.Attempt, reasonPrefix string) error {
	var evidence []string
	for _, f := range p.Evidence {
		evidence = append(evidence, fmt.Sprintf("%s %s %q: %s", f.MetaTimestamp, f.Level, f.Title, strings.Join(f.Evidence, "; ")))
	}
	for _, a := range attempts {
		before, after := float64(a.SuiteLossBefore), float64(a.SuiteLossAfter)
		err := s.Log(store.LogEntry{Action: a.Decision, Parent: p.Parent, Proposal: p.ID, Change: a.Change.String(),
			Decision: a.Decision, Evidence: evidence, SuiteLossBefore: &before, SuiteLossAfter: &after, Reason: reasonPrefix + a.Reason})
		if err != nil {
			return err
		}
	}
	return nil
}

func printPropose(w io.Writer, rep *proposeReport) error {
	if err := printDetection(w, rep.detection, rep.logs, rep.tails); err != nil {
		return err
	}
	if len(rep.Attempts) > 0 {
		fmt.Fprintln(w, "attempts:")
		if err := attemptsTable(w, rep.Attempts, nil); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "decision: %s; suite loss %.3f → %.3f (parent %s)\n", rep.Decision, float64(rep.SuiteLossBefore), float64(rep.SuiteLossAfter), rep.Parent)
	if len(rep.Lifted) > 0 {
		fmt.Fprintf(w, "lifted out of the low side: %s\n", strings.Join(rep.Lifted, ", "))
	}
	if rep.Holdout.Scenarios > 0 {
		if rep.Holdout.Reads > 0 {
			fmt.Fprintf(w, "holdout: %s (%.3f → %.3f over %d scenarios; %d reads)\n", rep.Holdout.Verdict,
				float64(*rep.Holdout.LossBefore), float64(*rep.Holdout.LossAfter), rep.Holdout.Scenarios, rep.Holdout.Reads)
		} else {
			fmt.Fprintf(w, "holdout: not read (nothing accepted; 0 reads)\n")
		}
	}
	if rep.ProposalFile != nil {
		state := "written"
		if !rep.Created {
			state = "unchanged (same proposal already pending)"
		}
		fmt.Fprintf(w, "proposal %s: %s %s\n", rep.ProposalID, displayPath(*rep.ProposalFile), state)
	}
	for _, r := range rep.Reports {
		fmt.Fprintf(w, "report: %s\n", displayPath(r))
	}
	return nil
}

// attemptsTable lists measured changes with their numbers; labels name the rows ("2.1": step 2, its
// first attempt), nil numbers them 1, 2, ….
func attemptsTable(w io.Writer, attempts []evolve.Attempt, labels []string) error {
	t := storeTable(w, false)
	t.Header("#", "Change", "Suite loss", "Worse", "Flagged moved up", "Sign test", "LOO", "Decision", "Reason")
	for i, a := range attempts {
		up := 0
		for _, m := range a.Motivating {
			if m.Moved == "up" {
				up++
			}
		}
		worse := make([]string, len(a.Worse))
		for j, d := range a.Worse {
			worse[j] = fmt.Sprintf("%s %d→%d", d.Name, d.Before, d.After)
		}
		sign := fmt.Sprintf("+%d/-%d %s", a.Discordant.Improved, a.Discordant.Worsened, a.Discordant.Verdict)
		loo := fmt.Sprintf("%d/%d", a.LOO.Agree, a.LOO.Folds)
		if len(a.LOO.Flips) > 0 {
			loo += " flips: " + strings.Join(a.LOO.Flips, ",")
		}
		label := fmt.Sprint(i + 1)
		if labels != nil {
			label = labels[i]
		}
		if err := t.Append([]string{label, a.Change.String(),
			fmt.Sprintf("%.3f → %.3f", float64(a.SuiteLossBefore), float64(a.SuiteLossAfter)), dash(strings.Join(worse, ", ")),
			fmt.Sprintf("%d/%d", up, len(a.Motivating)), sign, loo, a.Decision, a.Reason}); err != nil {
			return err
		}
	}
	return t.Render()
}

// displayPath shortens a path under the working directory for the table output (JSON keeps it as is).
func displayPath(p string) string {
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
	}
	return p
}
