package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/traceparse"
)

type proposeOptions struct {
	IO   *IOStreams
	Env  app.Env
	Logs []string
	JSON bool
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
		Long: `Run one evolution step on the trace logs (default ` + traceparse.DefaultLog + `): tune detect's window,
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
			opts.Env, opts.Logs = f.Env(), args
			if runF != nil {
				return runF(opts)
			}
			var err error
			if opts.Logs, err = f.traceLogs(opts.Logs); err != nil {
				return err
			}
			return proposeRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the step as JSON")
	return cmd
}

func proposeRun(opts *proposeOptions) error {
	rep, err := app.Propose(opts.Env, opts.Logs)
	if err != nil {
		return err
	}
	printWarnings(opts.IO.ErrOut, rep.Warnings, newTailLines(rep.Tails))
	if opts.JSON {
		err = storeWriteJSON(opts.IO.Out, rep)
	} else {
		err = printPropose(opts.IO.Out, rep)
	}
	if err == nil && rep.Drift != nil {
		// The drift bound: a human decides (exit 3), as at the evolve loop's step cap.
		err = &EscalationError{Reason: rep.Drift.Reason + "; see " + app.EscalationDoc}
	}
	return err
}

func printPropose(w io.Writer, rep *app.ProposeResult) error {
	if err := printDetection(w, rep.Detection, rep.Logs, newTailLines(rep.Tails)); err != nil {
		return err
	}
	if len(rep.Attempts) > 0 {
		termtable.Fprintln(w, "attempts:")
		if err := attemptsTable(w, rep.Attempts, nil); err != nil {
			return err
		}
	}
	termtable.Fprintf(w, "decision: %s; suite loss %.3f → %.3f (parent %s)\n", rep.Decision, float64(rep.SuiteLossBefore), float64(rep.SuiteLossAfter), rep.Parent)
	if rep.Drift != nil {
		termtable.Fprintf(w, "escalated: %s; see %s\n", rep.Drift.Reason, app.EscalationDoc)
	}
	if len(rep.Lifted) > 0 {
		termtable.Fprintf(w, "lifted out of the low side: %s\n", strings.Join(rep.Lifted, ", "))
	}
	if rep.Holdout.Scenarios > 0 {
		if rep.Holdout.Reads > 0 {
			termtable.Fprintf(w, "holdout: %s (%.3f → %.3f over %d scenarios; %d reads)\n", rep.Holdout.Verdict,
				float64(*rep.Holdout.LossBefore), float64(*rep.Holdout.LossAfter), rep.Holdout.Scenarios, rep.Holdout.Reads)
		} else {
			termtable.Fprintf(w, "holdout: not read (nothing accepted; 0 reads)\n")
		}
	}
	if rep.ProposalFile != nil {
		state := "written"
		if !rep.Created {
			state = "unchanged (same proposal already pending)"
		}
		termtable.Fprintf(w, "proposal %s: %s %s\n", rep.ProposalID, displayPath(*rep.ProposalFile), state)
	}
	for _, r := range rep.Reports {
		termtable.Fprintf(w, "report: %s\n", displayPath(r))
	}
	return nil
}

// attemptsTable lists measured changes with their numbers; labels name the rows ("2.1": step 2, its
// first attempt), nil numbers them 1, 2, ….
func attemptsTable(w io.Writer, attempts []evolve.Attempt, labels []string) error {
	t := termtable.New(w, "#", "Change", "Suite loss", "Worse", "Flagged moved up", "Lifted", "Parity", "Sign test", "LOO", "Decision", "Reason").
		Shrink("Worse", "Sign test", "LOO", "Reason").Optional("LOO", "Sign test", "Worse", "Flagged moved up", "Parity")
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
		if err := t.Append(label, a.Change.String(),
			fmt.Sprintf("%.3f → %.3f", float64(a.SuiteLossBefore), float64(a.SuiteLossAfter)), dash(strings.Join(worse, ", ")),
			fmt.Sprintf("%d/%d", up, len(a.Motivating)), fmt.Sprint(a.Lifted), parityCell(a.Parity), sign, loo, a.Decision, a.Reason); err != nil {
			return err
		}
	}
	return t.Render()
}

// parityCell is an attempt's parity price: prompts moved up and down, and the too-high cost against the
// budget ("—" when the attempt was not priced).
func parityCell(p *evolve.ParityShift) string {
	if p == nil || p.Prompts == 0 {
		return "—"
	}
	up, down := 0, 0
	for l := range p.Up {
		up += p.Up[l]
		down += p.Down[l]
	}
	cmp := "≤"
	if p.OverBudget {
		cmp = ">"
	}
	return fmt.Sprintf("↑%d ↓%d, %.3f %s %.3f", up, down, float64(p.TooHighCost), cmp, float64(p.Budget))
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
