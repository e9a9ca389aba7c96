package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/view"
)

type evolveOptions struct {
	app.EvolveOptions
	IO   *IOStreams
	Env  app.Env
	JSON bool
	// set reports whether a flag was given (0 means "the default" only when it was not).
	set func(name string) bool
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
A change that passed every rule but the frozen holdout's veto is named on a "held:" line (--json
"held", with the holdout scenarios it makes worse): no rule settles that, a human does
(` + app.EscalationDoc + `, "A change the holdout holds"). With holdout = "priced" in the config
the history's expected gain may pay for the holdout's added loss as for the suite's; a change kept
that way is named on a "holdout paid:" line (--json "holdout_paid").

A run keeps its accepted steps only if they lift at least one flagged task out of L0/L1; otherwise
it keeps nothing ("refused: …", the proposal is a revert). Tasks that supported an applied change (the evidence ledger in the
log) never count again. Each attempt is priced on the 255 parity prompts the binary carries and
refused above the parity budget (docs/decisions.md, issue 11).

The accepted steps accumulate into one pending proposal under <weights-dir>/proposals/ (the chain
of steps is in it and in the evolution log). Nothing is applied unless --apply is given.
Defaults for --max-steps and --stall-bound, the parity budget and the holdout rule can be set in a
config file (--config, default tune.toml when it exists):
  [evolve]
  max_steps = 8
  stall_bound = 2
  parity_budget = 0.03
  holdout = "veto"     # or "priced"

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
			return runOnLogs(f, opts, &opts.Logs, runF, evolveRun)
		},
	}
	addEvolveFlags(cmd, opts)
	return cmd
}

// bind takes the factory's clock, environment and directories and the LOG arguments, and checks the flags.
func (opts *evolveOptions) bind(f *Factory, logs []string) error {
	opts.Env, opts.Logs = f.Env(), logs
	for _, c := range []struct {
		name string
		n    int
	}{{"max-steps", opts.MaxSteps}, {"stall-bound", opts.StallBound}} {
		if c.n < 0 || c.n == 0 && opts.set != nil && opts.set(c.name) {
			return FlagErrorf("--%s %d: want a positive number of steps", c.name, c.n)
		}
	}
	return nil
}

func addEvolveFlags(cmd *cobra.Command, opts *evolveOptions) {
	opts.set = func(name string) bool { return cmd.Flags().Changed(name) }
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the run as JSON")
	cmd.Flags().BoolVar(&opts.Apply, "apply", false, "apply the accumulated proposal to the weights store")
	cmd.Flags().IntVar(&opts.MaxSteps, "max-steps", 0, fmt.Sprintf("global cap on steps; reaching it escalates (default %d)", evolve.DefaultMaxSteps))
	cmd.Flags().IntVar(&opts.StallBound, "stall-bound", 0, fmt.Sprintf("consecutive steps without progress before the loop stalls (default %d)", evolve.DefaultStallBound))
	cmd.Flags().StringVar(&opts.ConfigPath, "config", "", "config `file` with an [evolve] table (default tune.toml when present; env TUNE_CONFIG)")
}

func evolveRun(opts *evolveOptions) error {
	out, err := app.Evolve(opts.Env, opts.EvolveOptions)
	if err != nil {
		return err
	}
	return printEvolve(opts, out)
}

// printEvolve prints the outcome of tune evolve or tune nightly; an escalation then exits 3.
func printEvolve(opts *evolveOptions, out *app.EvolveResult) error {
	view.Warnings(opts.IO.ErrOut, out.Warnings, view.NewTails(out.Tails))
	if err := view.Print(opts.IO.Out, opts.JSON, out, view.Evolve); err != nil {
		return err
	}
	return out.Escalation()
}
