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
  same-area                  a later task in the window touches the same code (files= overlap, else file
                             paths named in task/action/layer text) and its final loss is above the
                             window's median final loss (strict; unknown losses excluded)
Tasks dispatched by a user bump or a user override-down never count.

Three or more flagged tasks trigger a proposal. The screen builds, per signal, the 2x2 table
present/absent x flagged/not over the closed tasks of the window, with phi, smoothed log-odds and z,
one-sided Fisher p, Holm-adjusted p, the smallest p those margins allow, and a verdict (candidate,
underpowered, no-signal). The proposal is +1 on the consistent candidate (fired in every flagged task)
with the highest z; without one, a bucket edge moves by one when 3 flagged tasks sit exactly on it;
otherwise there is no consistent pattern, and the flagged tasks are listed.

A task's signals are its meta signals= field; without it they are re-detected from the task title
(marked "re-detected"). A recorded level that disagrees with its recorded signals is a warning.
detect changes nothing; tune propose measures the proposal on the fixture suite.

Several logs are read as several windows (one per log, each with its own median); their flagged
tasks and closed tasks are pooled for the trigger and the screen.

--json prints {"window", "median_loss_final", "flagged": [{"meta_timestamp", "task", "level",
"evidence", "signals", "signals_source", "source", "line", ...}], "triggered", "screen", "proposal":
null | {"kind", "signal" | "edge", "delta"}, "reason", "edge_tasks", "warnings", "logs", "lines"}.
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
