package cli

import (
	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/accuracy"
	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/view"
)

type accuracyOptions struct {
	IO         *IOStreams
	Factory    *Factory
	WeightsDir string
	Logs       []string
	Days       int
	JSON       bool
}

// NewCmdAccuracy builds `tune accuracy`.
func NewCmdAccuracy(f *Factory) *cobra.Command {
	return newCmdAccuracy(f, nil)
}

func newCmdAccuracy(f *Factory, runF func(*accuracyOptions) error) *cobra.Command {
	opts := &accuracyOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "accuracy [LOG...]",
		Short: "How well dispatch is doing: per level, tasks, iterations, final loss, overkill and underkill",
		Long: `Report dispatch accuracy over the closed tasks of the trace logs (default .ldd/trace.log) whose
meta line is at most --days old: per dispatched level L0…L4 the number of tasks, the median
iteration count and final loss, the complete rate, the overkill and underkill rates, the top
three signals and the terminals. It is the LDD reference's "ldd_trace telemetry dispatch" with
the same definitions and rounding:

  k           the non-baseline iterations of a task
  final loss  loss_final on the task's last close, else its last iteration's loss
  overkill    dispatched L3/L4, terminal complete, k ≤ 1, final loss ≤ 0.01 or unknown:
              the level was heavier than the task needed
  underkill   dispatched L0/L1 and ended failed or aborted, or needed k ≥ 5:
              the level was lighter than the task needed
  top signals the three signals= names on most of the level's tasks, ties by first appearance

Tasks without a level count in n_tasks_total only. Every rate comes with a 95% Wilson interval
(small samples are the norm: 1 of 3 is anywhere from 6% to 79%).

tune reads some logs further than the reference (a BOM, a v0.10.1 level_chosen= meta line, a
line with unbalanced quotes, a missing loss kept unknown instead of read as 0): each such task is
counted and listed with its reason under "read beyond the reference", never silently. The
summary is then split by weights version (weights= on the meta line, else the version the store
log says was active at the task's meta time), by dispatch source and by log.

--json prints the reference's fields exactly (window_days, n_tasks_total, n_tasks_with_level,
per_level {L0…L4: n, median_k, median_final_loss, complete_rate, overkill_rate, underkill_rate,
top_signals [{name, n}], terminals}, overall {overkill_rate, underkill_rate}), so scripts written
for the reference keep working, followed by tune's: read_beyond_reference {n_tasks, tasks [{log,
line, task, level, reasons}]}, intervals {confidence, method, per_level {L0…: {complete_rate,
overkill_rate, underkill_rate: {k, n, rate, lo, hi}}}, overall}, by_weights_version,
by_dispatch, by_log ([{key, summary, intervals}], by_weights_version with n_from_meta and
n_from_log), n_tasks_undated (closed tasks whose meta timestamp is not RFC 3339).`,
		Example: `  tune accuracy
  tune accuracy projects/*/.ldd/trace.log --days 90
  tune accuracy --json --days 36500 | jq '.per_level.L1.underkill_rate'`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Logs = args
			if opts.Days <= 0 {
				return FlagErrorf("--days %d: want a positive number of days", opts.Days)
			}
			opts.WeightsDir = f.WeightsDir
			return runOnLogs(f, opts, &opts.Logs, runF, accuracyRun)
		},
	}
	cmd.Flags().IntVar(&opts.Days, "days", accuracy.DefaultDays, "window: tasks whose meta line is at most `N` days old")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the report as JSON (the reference's fields, then tune's)")
	return cmd
}

func accuracyRun(opts *accuracyOptions) error {
	rep, err := app.Accuracy(opts.Factory.Env(), opts.Logs, opts.Days)
	if err != nil {
		return err
	}
	return view.Print(opts.IO.Out, opts.JSON, rep, view.Accuracy)
}
