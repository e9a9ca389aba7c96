package cli

import (
	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/view"
	"github.com/ldd-tools/tune/internal/weights"
)

type watchOptions struct {
	IO         *IOStreams
	Factory    *Factory
	Logs       []string
	Version    string
	ConfigPath string
	JSON       bool
}

// NewCmdWatch builds `tune watch`.
func NewCmdWatch(f *Factory) *cobra.Command {
	return newCmdWatch(f, nil)
}

func newCmdWatch(f *Factory, runF func(*watchOptions) error) *cobra.Command {
	opts := &watchOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "watch [LOG...]",
		Short: "Judge the applied weights version on the tasks it moved; propose its rollback when it fails",
		Long: `A weight change is a bet made on a handful of tasks; the tasks that come after it are the honest
test. tune watch judges the active version (or --version, an earlier applied one) only on what
the change did: the closed tasks dispatched under it (weights= on the meta line, else the version
the evolution log says was active at the meta time) whose level differs between the parent and
the version, each task's signals scored under both. Only tasks dispatched auto count: an
override-down, a bump or an explicit level is the user's choice, not the weights'.

A regression is what the trace records: regression_followed=true on the task's close, a later
task of the same log naming it with regression_of=<its meta timestamp> (tune score --log
--regression-of writes one; a log rotated away takes its namings with it), or its first later task in the same files (within 5 tasks of its log) failing — the weak
kind, read for every rate alike, before and after the version, so that ordinary failures cancel
in the differences the tests measure. Each test is an e-process: its e-value may be looked at every night, over every log, and
reaches its threshold with probability at most alpha while the version does what it should.
  not helping  the tasks the change lifted off the low side (L0/L1 under the parent, L2+ under
               the version) still regress at the rate such tasks had while low, against "at
               most the rate from which the change stops paying": that rate less the excess
               from which the levels it raised on the tasks before the version pay under the
               stated costs (too_low per regression avoided, too_high per level), and never
               below the other low-side tasks' rate; at least watch.min_recurrences regressed.
  harmful      an upward change: its cost beyond the price it was accepted at. The loss rule
               prices every level raised on a task it does not lift off the low side as too
               high, and 1 - excess of a lifted task's (excess: the lifted kind's regressions
               while low less the other low-side tasks'); so only the lifted tasks that land
               at L3/L4 can cost more than priced: they were overkill more often than 1 -
               excess (never less than L3/L4 tasks before), plus watch.overkill_bound. A
               downward change: the tasks it moved down to L0/L1 regressed more often than
               they did at their level before, plus the same margin. Low-side regressions
               after an upward change are never evidence of harm: it took tasks off the low
               side, it put none there.
  too early    no test reached its threshold and fewer than watch.min_tasks (default 10) tasks
               moved: it says how many more.
  holding      no test reached its threshold over at least watch.min_tasks moved tasks (or
               the change moves no level at all: only costs changed, nothing to judge).
The threshold is 1/alpha with alpha split over the tests the two versions allow: not helping
for an upward change, overkill only when it can lift a task from L0/L1 past L2 (not a +1 or +2
from the reference buckets: 20 at the default alpha 0.05), regressions for a downward one. The
table lists the moved tasks: parent level → version level, the test(s) each one is a trial of,
and whether it counts against the version.

"not helping" and "harmful" on the active version write a rollback proposal to the parent's
content (weights/proposals/<id>.json, with the tasks behind the verdict as its evidence and the
fixture suite replayed under the version and after each step back) and log its decision; review
it and apply it with tune apply, like any proposal. Nothing is applied silently, and watch writes
nothing else. Running watch again does not write a second proposal for the same rollback. For an
earlier version that is no longer active no proposal is written.

The bounds live in tune.toml (or --config / TUNE_CONFIG):
  [watch]
  min_tasks = 10
  overkill_bound = 0.10
  min_recurrences = 2
  alpha = 0.05

Exit codes: 0 for every verdict (the verdict is the output; nightly acts on it), 1 on an
error; a store with no applied version prints a note and exits 0.

--json prints {version, parent, changes, verdict, reason, need_more, tasks_before, tasks_after,
moved, not_counted {dispatch: n}, before {lifted_while_low, other_low, overkill_high, dropped:
{k, n, rate, lo, hi}, raised_levels, break_even_excess, excess}, tests [{name, sample, event, n, k, null_rate, alt_rate, basis, e_value,
threshold, need_more, rejected, note}], moved_tasks [{log, line, meta_timestamp, task, from, to,
level, test, overkill_trial, regressed, event, evidence}], evidence [{log, line, meta_timestamp, task, level,
note}], config {min_tasks, overkill_bound, min_recurrences, alpha}, active, proposal,
proposal_path, proposal_new, proposal_note, logs, warnings [{source, line, reason}]}; need_more and the proposal fields only when
they apply. A test's alt_rate is 0 when its e-value averages over every rate worse than the null
(the harm tests); its need_more is -1 when the test cannot be made (note says why).`,
		Example: `  tune watch
  tune watch projects/*/.ldd/trace.log --json | jq -r .verdict
  tune watch --version v0003 .ldd/trace.log`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Logs = args
			if opts.Version == "active" {
				opts.Version = "" // as diff and weights show spell it
			}
			if opts.Version != "" {
				if _, err := weights.ParseVersionName(opts.Version); err != nil {
					return FlagErrorf("--version %q: want a version name like v0002, or active", opts.Version)
				}
			}
			return runOnLogs(f, opts, &opts.Logs, runF, watchRun)
		},
	}
	cmd.Flags().StringVar(&opts.Version, "version", "", "watch this applied `version` (e.g. v0002; default active) instead of the active one")
	cmd.Flags().StringVar(&opts.ConfigPath, "config", "", "config `file` with the [watch] bounds (default TUNE_CONFIG, else tune.toml)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the finding as JSON")
	return cmd
}

func watchRun(opts *watchOptions) error {
	res, err := app.Watch(opts.Factory.Env(), app.WatchOptions{Logs: opts.Logs, Version: opts.Version, ConfigPath: opts.ConfigPath})
	if err != nil {
		return storeNothingToDo(opts.IO, err)
	}
	view.Warnings(opts.IO.ErrOut, res.Warnings, nil)
	return view.Print(opts.IO.Out, opts.JSON, res, view.Watch)
}
