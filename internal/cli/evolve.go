package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

type evolveOptions struct {
	app.EvolveOptions
	IO   *IOStreams
	Env  app.Env
	JSON bool
}

// NewCmdEvolve builds `tune evolve`.
func NewCmdEvolve(f *Factory) *cobra.Command { return newCmdEvolve(f, nil) }

func newCmdEvolve(f *Factory, runF func(*evolveOptions) error) *cobra.Command {
	opts := &evolveOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "evolve [LOG...]",
		Short: "Repeat detect → propose → replay → decide while low-side regressions remain",
		Long: `Run evolution steps (see tune propose) on the trace logs (default ` + traceparse.DefaultLog + `) until
the pattern is resolved. After an accepted step, the flagged tasks the candidate lifts out of the
low side (L0/L1) count as resolved and the candidate is the next step's parent; the loop goes on
while 3 or more unresolved flagged tasks remain. A reverted change is not proposed again until a
later step is accepted.

Each step's progress is measured, never claimed: the witness is the suite loss plus the points the
unresolved flagged tasks still lack to leave the low side. The loop stops as
  converged      fewer than 3 unresolved flagged tasks remain
  stalled        --stall-bound consecutive steps did not lower the witness (default 2) and no
                 kept step lifted a flagged task out of L0/L1: nothing is proposed
  partial        kept steps lifted flagged tasks out of L0/L1, then --stall-bound steps found no
                 further change the rules allow (suite, parity price, holdout veto) for the tasks
                 still low: the kept steps are proposed, the rest is named in the reason
  escalated      the step cap (--max-steps, default 8) was reached while progressing, or a change
                 would move a weight more than 2 points from v0001 (the drift bound): exit code 3,
                 a JSON state dump is written next to the reports and the output points to
                 ` + app.EscalationDoc + `
  nothing-to-do  the window never triggered

A run keeps its accepted steps only if they lift at least one flagged task out of L0/L1; otherwise
it keeps nothing ("refused: …", the proposal is a revert). Tasks that supported an applied change (the evidence ledger in the
log) never count again. Each attempt is priced on the 255 parity prompts the binary carries and
refused above the parity budget (docs/decisions.md, issue 11).

The accepted steps accumulate into one pending proposal under <weights-dir>/proposals/ (the chain
of steps is in it and in the evolution log). Nothing is applied unless --apply is given.
Defaults for --max-steps and --stall-bound, and the parity budget, can be set in a config file
(--config, default tune.toml when it exists):
  [evolve]
  max_steps = 8
  stall_bound = 2
  parity_budget = 0.03

--json prints {"outcome", "reason", "steps": [{"n", "decision", "signal" | "edge", "delta",
"suite_loss_before", "suite_loss_after", "witness_before", "witness_after", "progress", "lifted"}],
"proposal": null | {"id", "file", "decision", "weights": {"signals", "buckets"}}, "state_dump",
"applied"}.`,
		Example: `  tune evolve
  tune evolve projects/*/.ldd/trace.log --max-steps 4 --json | jq .outcome
  tune evolve --apply`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.bind(f, args); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			var err error
			if opts.Logs, err = f.traceLogs(opts.Logs); err != nil {
				return err
			}
			out, err := app.Evolve(opts.Env, opts.EvolveOptions)
			if err != nil {
				return err
			}
			return printEvolve(opts, out)
		},
	}
	addEvolveFlags(cmd, opts)
	return cmd
}

// bind takes the factory's clock, environment and directories and the LOG arguments, and checks the flags.
func (opts *evolveOptions) bind(f *Factory, logs []string) error {
	opts.Env, opts.Logs = f.Env(), logs
	if opts.MaxSteps < 0 || opts.StallBound < 0 {
		return FlagErrorf("--max-steps and --stall-bound must be positive")
	}
	return nil
}

func addEvolveFlags(cmd *cobra.Command, opts *evolveOptions) {
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the run as JSON")
	cmd.Flags().BoolVar(&opts.Apply, "apply", false, "apply the accumulated proposal to the weights store")
	cmd.Flags().IntVar(&opts.MaxSteps, "max-steps", 0, fmt.Sprintf("global cap on steps; reaching it escalates (default %d)", evolve.DefaultMaxSteps))
	cmd.Flags().IntVar(&opts.StallBound, "stall-bound", 0, fmt.Sprintf("consecutive steps without progress before the loop stalls (default %d)", evolve.DefaultStallBound))
	cmd.Flags().StringVar(&opts.ConfigPath, "config", "", "config `file` with an [evolve] table (default tune.toml when present; env TUNE_CONFIG)")
}

// printEvolve prints the outcome of tune evolve or tune nightly; an escalation then exits 3.
func printEvolve(opts *evolveOptions, out *app.EvolveResult) error {
	printWarnings(opts.IO.ErrOut, out.Warnings, newTailLines(out.Tails))
	var err error
	if opts.JSON {
		err = storeWriteJSON(opts.IO.Out, out)
	} else {
		err = printEvolveText(opts.IO.Out, out)
	}
	if err == nil && out.Escalated() {
		err = &EscalationError{Reason: out.Reason + "; see " + app.EscalationDoc}
	}
	return err
}

func printEvolveText(w io.Writer, out *app.EvolveResult) error {
	if r := out.Watch; r != nil {
		termtable.Fprintf(w, "watch: %s (parent %s, %s) is %s — %s\n", r.Version, r.Parent, strings.Join(r.Changes, ", "), strings.ToUpper(r.Verdict), r.Reason)
		switch {
		case r.Proposal != "":
			termtable.Fprintf(w, "watch: rollback proposal %s awaits review (tune apply %s)\n", r.Proposal, r.Proposal)
		case r.ProposalNote != "":
			termtable.Fprintf(w, "watch: %s\n", r.ProposalNote)
		}
	} else if out.WatchNote != "" {
		termtable.Fprintf(w, "watch: %s\n", out.WatchNote)
	}
	termtable.Fprintf(w, "outcome: %s — %s\n", out.Outcome, out.Reason)
	if len(out.Steps) > 0 {
		t := termtable.New(w, "Step", "Change", "Decision", "Suite loss", "Witness", "Progress", "Unresolved", "Lifted").
			Shrink("Change").Optional("Witness", "Lifted", "Progress")
		for _, s := range out.Steps {
			change := "—"
			if s.Delta != nil {
				knob := s.Signal
				if s.Kind == evolve.ChangeBucket {
					knob = "bucket " + s.Edge
				}
				change = knob + " " + weights.Half(*s.Delta).String()
			}
			progress := "no"
			if s.Progress {
				progress = "yes"
			}
			if err := t.Append(fmt.Sprint(s.N), change, s.Decision,
				fmt.Sprintf("%.3f → %.3f", float64(s.SuiteLossBefore), float64(s.SuiteLossAfter)),
				fmt.Sprintf("%.3f → %.3f", float64(s.WitnessBefore), float64(s.WitnessAfter)),
				progress, fmt.Sprint(s.Unresolved), fmt.Sprint(len(s.Lifted))); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
		// Every measured attempt with its numbers, also the reverted ones the step table sums up.
		var attempts []evolve.Attempt
		var labels []string
		for _, s := range out.Steps {
			for i, a := range s.Attempts {
				attempts = append(attempts, a)
				labels = append(labels, fmt.Sprintf("%d.%d", s.N, i+1))
			}
		}
		if len(attempts) > 0 {
			termtable.Fprintln(w, "attempts:")
			if err := attemptsTable(w, attempts, labels); err != nil {
				return err
			}
		}
	}
	if out.Refused != "" {
		termtable.Fprintf(w, "refused: %s\n", out.Refused)
	}
	if out.Drift != nil {
		termtable.Fprintf(w, "drift bound: %s\n", out.Drift.Reason)
	}
	if p := out.Proposal; p != nil {
		state := "written"
		if !p.Created {
			state = "unchanged (same proposal already pending)"
		}
		termtable.Fprintf(w, "proposal %s (%s, parent %s): %s %s\n", p.ID, p.Decision, out.Parent, displayPath(p.File), state)
	}
	if out.Applied != nil {
		termtable.Fprintf(w, "applied: weights %s is now active\n", *out.Applied)
	}
	for _, r := range out.Reports {
		termtable.Fprintf(w, "report: %s\n", displayPath(r))
	}
	if out.StateDump != nil {
		termtable.Fprintf(w, "state dump: %s\n", displayPath(*out.StateDump))
		termtable.Fprintf(w, "escalated: a human decides next — read the state dump, then follow %s\n", app.EscalationDoc)
	}
	return nil
}
