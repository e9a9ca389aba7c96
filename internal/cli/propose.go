package cli

import (
	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/view"
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

Only evidence counts: auto-dispatched L0/L1 closed tasks whose signals (recorded, else re-detected
from the title) still score L0/L1 under the active weights, and that did not support an applied change (the evidence ledger in the
evolution log). The screen compares the flagged tasks with the other eligible tasks, with Holm over
the nine signals binding and a minimum effect (tune detect shows it).

The candidate is accepted only when it lifts at least one flagged task out of L0/L1 by level (a sum
closer to the next bucket is not enough), the suite loss does not rise, no scenario's loss rises, no
flagged task drops a level, the witness (suite loss plus the points the flagged tasks lack to leave
L1) falls, and its price on the 255 parity prompts the binary carries is within the parity budget
(tune.toml [evolve] parity_budget, default 0.03). The frozen holdout split is read last, only when
every other rule passed, as a veto: its loss must not rise (reads are counted); with tune.toml
[evolve] holdout = "priced" the loss it adds must instead be paid by the history's expected gain,
together with the suite's. Otherwise the half
step is tried when the loss rule expects it to gain too; otherwise the change is reverted — and when it
was a signal change, a bucket edge may move by one instead if 3 flagged tasks score exactly on it. The
parity price credits the regressions the change is expected to avoid on the prompts it lifts out of
L0/L1. Every attempt is shown with its
numbers, its discordant scenarios (exact sign test; "insufficient evidence" when even a unanimous
result could not be significant) and its leave-one-out support.

A change that would move a weight more than 2 points from v0001 (the drift bound) is not measured:
nothing is written and the exit code is 3 (` + app.EscalationDoc + `).

When a change was measured, the result is written as a pending proposal under
<weights-dir>/proposals/<id>.json (candidate weights, parent version, evidence, losses, decision) and
each attempt is appended to the evolution log. The id is a hash of the content: the same inputs give
the same proposal, which is never written twice. tune apply turns an accepted proposal into the next
weights version.

--json prints {"triggered", "proposal", "decision": "accept" | "halve" | "revert" | "none",
"suite_loss_before", "suite_loss_after", "proposal_file", ...} with the flagged tasks, attempts
(each with its lifted count, witness, parity price and holdout), lifted tasks, holdout verdict,
warnings, "explain" {population, correction, eligible, resolved_by_active, ledger_used,
accumulated, signals (each signal's table, e_value, threshold, more_needed, excess, verdict), loss_rule}
and, at the drift bound, "drift".`,
		Example: `  tune propose
  tune propose projects/*/.ldd/trace.log --json | jq '{decision, proposal_file}'`,
		RunE: logsRunE(f, opts, &opts.Env, &opts.Logs, runF, proposeRun),
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the step as JSON")
	return cmd
}

func proposeRun(opts *proposeOptions) error {
	rep, err := app.Propose(opts.Env, opts.Logs)
	if err != nil {
		return err
	}
	view.Warnings(opts.IO.ErrOut, rep.Warnings, view.NewTails(rep.Tails))
	if err := view.Print(opts.IO.Out, opts.JSON, rep, view.Propose); err != nil {
		return err
	}
	return rep.Escalation()
}
