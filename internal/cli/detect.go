package cli

import (
	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/view"
)

type detectOptions struct {
	IO   *IOStreams
	Env  app.Env
	Logs []string
	JSON bool
}

// NewCmdDetect builds `tune detect`.
func NewCmdDetect(f *Factory) *cobra.Command {
	return newCmdDetect(f, nil)
}

func newCmdDetect(f *Factory, runF func(*detectOptions) error) *cobra.Command {
	opts := &detectOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "detect [LOG...]",
		Short: "Find low-side regressions in the last 20 tasks and screen the signals behind them",
		Long: `Read the last 20 tasks with a level label of each trace log (default ` + traceparse.DefaultLog + `) and
look for low-side regressions: tasks dispatched automatically at L0 or L1, closed with a known final
loss, that later regressed. The evidence is any of
  regression_followed=true   on the task's own close line
  regression_of=<timestamp>  a later task in the window names the task's meta timestamp
  same-area                  the first later task in the same code (files= overlap, else file paths
                             named in task/action/layer text), at most 5 tasks later, itself failed:
                             terminal failed/aborted, regression_followed=true, or a final loss at
                             least the window's median + 0.5
Tasks dispatched by a user bump or a user override-down never count. A task is evidence only while
its signals, re-scored under the active weights, still give L0/L1 ("lifted by the active weights"
otherwise), and only if it did not support an applied change ("already used": the evidence ledger
that tune apply writes into the evolution log; each such task is listed).

Three or more flagged tasks trigger a proposal. The screen compares the flagged tasks with the other
eligible tasks (auto, L0/L1 under the active weights, closed, not in the ledger): per signal the 2x2
table present/absent x flagged/not, with the effect (prevalence difference), phi, smoothed log-odds
and z, one-sided Fisher p, Holm-adjusted p over the nine signals, the smallest p those margins allow,
and a verdict. A candidate needs Holm p ≤ 0.05 (the correction binds) and an effect of at least 0.50
("small-effect" otherwise; "underpowered" when no table with these margins could pass). The proposal
is +1 on the consistent candidate (fired in every flagged task) with the highest z; candidates with
identical tables are "indistinguishable" and nothing is proposed; without a candidate, a bucket edge
moves by one when 3 flagged tasks sit exactly on it; otherwise there is no consistent pattern, and
the flagged tasks are listed. The rules and their reasons: docs/decisions.md (issue 11).

A task's signals are its meta signals= field; without it they are re-detected from the task title
(marked "re-detected"). A recorded level that disagrees with its recorded signals is a warning.
detect changes nothing; tune propose measures the proposal on the fixture suite.

Several logs are read as several windows (one per log, each with its own median); their flagged
tasks and closed tasks are pooled for the trigger and the screen.

--json prints {"window", "median_loss_final", "flagged": [{"meta_timestamp", "task", "level",
"evidence", "signals", "signals_source", "source", "line", ...}], "triggered", "screen", "proposal":
null | {"kind", "signal" | "edge", "delta"}, "reason", "edge_tasks", "warnings", "population",
"correction", "min_effect", "ledger_used", "logs", "lines"}; window carries "eligible",
"resolved_by_active" and "ledger_used", and each screen row its "effect" and "tied_with".
"median_loss_final" is the window median when one log is read (null with several: see
window.logs[].median_loss_final); "source" and "line" locate the task's meta line.`,
		Example: `  tune detect
  tune detect projects/*/.ldd/trace.log --json | jq '.flagged[].evidence'`,
		RunE: logsRunE(f, opts, &opts.Env, &opts.Logs, runF, detectRun),
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the detection as JSON")
	return cmd
}

func detectRun(opts *detectOptions) error {
	rep, err := app.Detect(opts.Env, opts.Logs)
	if err != nil {
		return err
	}
	view.Warnings(opts.IO.ErrOut, rep.Warnings, view.NewTails(rep.Tails))
	return view.Print(opts.IO.Out, opts.JSON, rep, view.Detect)
}
