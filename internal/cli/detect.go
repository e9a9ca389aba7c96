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
		Long: `Read every task of each trace log (default ` + traceparse.DefaultLog + `) and look for low-side
regressions: tasks dispatched automatically at L0 or L1, closed with a known final loss, that later
regressed. The evidence comes from the task's horizon (the 20 labelled tasks after it):
  regression_followed=true   on the task's own close line
  regression_of=<timestamp>  a later task names the task's meta timestamp
  same-area                  the weak kind, needs corroboration: the first two later tasks in the same
                             code (files= overlap, else file paths named in task/action/layer text), each
                             at most 5 tasks later, both failed: terminal failed/aborted,
                             regression_followed=true, or a final loss at least the median + 0.5;
                             a single failing first one (a weak witness) flags nothing but counts,
                             net of its placebo (the nearest earlier task in the same files failed),
                             in the excess below
Tasks dispatched by a user bump or a user override-down never count. A task is evidence only while
its signals, re-scored under the active weights, still give L0/L1 ("lifted by the active weights"
otherwise), and only if it did not support an applied change ("already used": the evidence ledger
that tune apply writes into the evolution log; each such task is listed) and comes after the evidence
watermark of the last apply.

The evidence accumulates: a task counts once it is settled (20 labelled tasks of its log follow it, or
the log has been quiet for 7 days; a quiet week before a task also ends the evidence of the tasks
before it, so what a night counted stays counted). Three or more flagged tasks in the last 20 of a log, or a signal whose
accumulated evidence passes with three regressions still low, are the reason to look. Per signal the
2x2 table over the settled eligible tasks of every log (present/absent x flagged/not) gives an
anytime-valid e-value, mixed over an onset at any of the last twelve 30-day blocks that hold tasks
(an effect that starts after quiet months is judged on the months since; the reason then says "mostly
on the tasks since" that day); a candidate needs e ≥ 450 (9 signals at 2 %, however many nights look), and the
screen says how many more regressions carrying the signal it needs ("more"). The loss rule weighs +1
and +2 on every candidate: the regressions the change is expected to avoid (tasks lifted out of L0/L1
times the excess regression rate of the carriers it lifts — since the rate's change point when one is
supported, "excess since"; net of the carriers' own excess at L2+ when the carriers that already ran
at L2+ regress more than the other tasks there, since a level does not cure that part, "net of …
among the carriers that ran at L2+") count twice, the levels it raises on tasks that did not need them (L2+
tasks included) once, on the history's tasks (the parity prompts' side is bounded by the parity
budget); the proposal is the change with the largest expected gain within the drift bound. Each
change weighed shows the excess it was credited with and the excess it pays from; a candidate whose
changes do not pay is listed under "no change pays" with its step nearest to paying and how many more
regressions among the tasks it lifts would make it pay on tonight's tasks, and how many more tasks it
would lift are not settled yet (--json "loss_rule_unpaid", "pays_from_excess", "more_needed",
"pending_lifted"). Candidates with identical tables are
"indistinguishable" and nothing is proposed. The rules and their reasons: docs/decisions.md (issues 11
and 28).

A task's signals are its meta signals= field; without it they are re-detected from the task title
(marked "re-detected"). A recorded level that disagrees with its recorded signals is a warning.
detect changes nothing; tune propose measures the proposal on the fixture suite.

Several logs are read as several windows (one per log, each with its own median); their flagged
tasks and closed tasks are pooled for the trigger and the screen.

--json prints {"window", "median_loss_final", "flagged": [{"meta_timestamp", "task", "level",
"evidence", "signals", "signals_source", "source", "line", ...}], "triggered", "screen", "proposal":
null | {"kind", "signal" | "edge", "delta"}, "reason", "edge_tasks", "warnings", "population",
"correction", "accumulated", "loss_rule", "ledger_used", "logs", "lines"}; window carries
"eligible", "resolved_by_active" and "ledger_used"; each flagged task "in_window" and "counted"; each
screen row its "e_value", "threshold", "more_needed", "excess", "effect", "tied_with" and, for a
candidate whose evidence is mostly from a later month, "evidence_since".
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
