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
		Short: "Judge the applied weights version on the tasks that came after it; propose its rollback when it fails",
		Long: `A weight change is a bet made on a handful of tasks; the tasks that come after it are the honest
test. tune watch compares the closed tasks dispatched under the active version (or --version, an
earlier applied one) with those dispatched under its parent: a task belongs to the version its
meta line names with weights=, else to the version the evolution log says was active at its
meta time. It reports, before → after with 95% Wilson intervals and a one-sided Fisher exact p:
low-side regressions (a regression recorded on an L0/L1 task: regression_followed=true, or a
later task's regression_of=) among the tasks carrying a changed signal, the overkill and
underkill rates, the level mix, and the tasks the change lifted to a higher level.

Verdicts, in the order they are tried:
  too early    fewer closed tasks under the version than watch.min_tasks (default 20):
               it says how many more are needed. Nothing else is judged yet.
  harmful      low-side regressions among the tasks carrying the changed signal rose
               (Fisher p ≤ watch.alpha, default 0.05), or the overkill rate rose by more than
               watch.overkill_bound (default 0.10, ten points) with Fisher p ≤ watch.alpha.
  not helping  at least watch.min_recurrences (default 2) of the tasks the change lifted still
               regressed, at a rate no lower than the low-side regressions before it: the
               pattern that motivated the change recurs.
  holding      none of the above: no evidence against the version.

"not helping" and "harmful" on the active version write a rollback proposal to the parent's
content (weights/proposals/<id>.json, with the tasks behind the verdict as its evidence and the
fixture suite replayed under the version and after each step back) and log its decision; review
it and apply it with tune apply, like any proposal. Nothing is applied silently, and watch writes
nothing else. Running watch again does not write a second proposal for the same rollback. For an earlier version that is no longer active no proposal is written.

The bounds live in tune.toml (or --config / TUNE_CONFIG):
  [watch]
  min_tasks = 20
  overkill_bound = 0.10
  min_recurrences = 2
  alpha = 0.05

Exit codes: 0 for every verdict (the verdict is the output; nightly acts on it), 1 on an
error; a store with no applied version prints a note and exits 0.

--json prints {version, parent, changes, verdict, reason, need_more, tasks_before, tasks_after,
concerned_before, concerned_after, low_side_regressions, overkill, underkill ({before, after:
{k, n, rate, lo, hi}, p}), lifted, lifted_regressed, level_mix [{level, before, after}],
evidence [{log, line, meta_timestamp, task, level, note}], config {min_tasks, overkill_bound,
min_recurrences, alpha}, active, proposal, proposal_path, proposal_new, proposal_note, logs};
need_more and the proposal fields only when they apply.`,
		Example: `  tune watch
  tune watch projects/*/.ldd/trace.log --json | jq -r .verdict
  tune watch --version v0003 .ldd/trace.log`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Logs = args
			if opts.Version != "" {
				if _, err := weights.ParseVersionName(opts.Version); err != nil {
					return FlagErrorf("--version %q: want a version name like v0002", opts.Version)
				}
			}
			return runOnLogs(f, opts, &opts.Logs, runF, watchRun)
		},
	}
	cmd.Flags().StringVar(&opts.Version, "version", "", "watch this applied `version` (e.g. v0002) instead of the active one")
	cmd.Flags().StringVar(&opts.ConfigPath, "config", "", "config `file` with the [watch] bounds (default TUNE_CONFIG, else tune.toml)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the finding as JSON")
	return cmd
}

func watchRun(opts *watchOptions) error {
	res, err := app.Watch(opts.Factory.Env(), app.WatchOptions{Logs: opts.Logs, Version: opts.Version, ConfigPath: opts.ConfigPath})
	if err != nil {
		return storeNothingToDo(opts.IO, err)
	}
	return view.Print(opts.IO.Out, opts.JSON, res, view.Watch)
}
