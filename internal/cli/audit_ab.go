package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/cmdutil"
	"github.com/ldd-tools/tune/internal/view"
)

type auditABOptions struct {
	IO     *IOStreams
	Getenv func(string) string

	// The flags fill the use case's options; Complete reads Arms from ArmFlags.
	app.AuditABOptions
	ArmFlags []string // --arm NAME=PATH
	JSON     bool
	Format   string
}

func newCmdAuditAB(f *Factory, runF func(*auditABOptions) error) *cobra.Command {
	opts := &auditABOptions{IO: f.IO, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "ab (--arm NAME=PATH... | --by-effort [PATH...])",
		Short: "Compare runs at two effort levels (or any two arms): requests, output, thinking, time",
		Long: `Compare arms of runs, such as the same task run at effort high and at xhigh. A run is a session
(its main file and its subagent files). Per run: requests, output tokens, thinking tokens, wall
seconds (first to last timestamp over all its files) and active seconds (the sum of the turn
durations Claude Code records, where it does).

Arms come from --arm NAME=PATH (repeat it; a name given twice gathers several paths; the first arm is
the baseline unless --baseline says otherwise; requests that record no effort take the arm name as
their effort label), or from --by-effort, which groups the runs found under PATH (or the default
transcript folders, see tune audit) by the effort level their main loop records (the top-level
"effort" of assistant lines, Claude Code ≥ 2.1.21x; the most frequent level of a run wins). Arms are
then ordered low, medium, high, xhigh, max and the lowest is the baseline.

For each metric and arm: the median with a distribution-free 95% confidence interval (none below 6
runs: "± ∞" and a footnote). For each arm against the baseline: a two-sided Mann–Whitney U test (exact
for small samples) or, with --paired, the exact Wilcoxon signed-rank test on paired differences;
Holm's adjustment across all metrics and arms; "~" when the adjusted p is above --alpha (no
difference detected at this n — not "no difference"); and a bootstrap 95% CI of the ratio of medians
(1,000 resamples, seeded from the data, so the output is reproducible). Footnotes say when n is too
small for a CI or for any significant result.

Pairing (--paired): --pair-by order pairs the i-th run of each arm by start time (run the tasks in
the same order in each arm); --pair-by task pairs runs by their task directory, the first directory
under the arm's path (lay runs out as ARM/TASK/… with one run per task and arm).

Output counts mean different things across Claude Code versions (≤ 2.1.6x streaming snapshots,
2.1.70–2.1.96 the last line final, ≥ 2.1.97 every line final): arms that mix these are refused unless
--allow-mixed, which prints the comparison with a loud warning.

Formats: text (benchstat style), markdown, json ({"metrics": [{"name", "arms": {NAME: {"n", "median",
"lo", "hi"}}, "p", "p_holm", "significant", "ratio", "ratio_lo", "ratio_hi", …}], "arms", "runs", …}),
csv (one row per metric and arm), and benchfmt: Go benchmark lines, one per run, that
"benchstat -col /effort FILE" compares with its own statistics.`,
		Example: `  tune audit ab --arm high=runs/high --arm xhigh=runs/xhigh
  tune audit ab --arm high=runs/high --arm xhigh=runs/xhigh --paired --pair-by task
  tune audit ab --by-effort ~/.claude/projects/-home-me-shop-api --format markdown
  tune audit ab --arm low=a --arm high=b --format benchfmt > ab.txt && benchstat -col /effort ab.txt`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if err := cmdutil.CheckFormat(cmd); err != nil {
				return err
			}
			if err := opts.Complete(opts.ArmFlags, cmd.Flags().Changed("pair-by")); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return auditABRun(opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.ArmFlags, "arm", nil, "an arm: `NAME=PATH` (repeatable; the first is the baseline)")
	addMaxLineBytesFlag(cmd, &opts.MaxLineBytes)
	cmd.Flags().BoolVar(&opts.ByEffort, "by-effort", false, "make arms from the effort level the transcripts record")
	cmd.Flags().StringVar(&opts.Baseline, "baseline", "", "the baseline arm `NAME` (default: the first --arm, or the lowest effort)")
	cmd.Flags().BoolVar(&opts.Paired, "paired", false, "compare paired runs (exact signed-rank test)")
	cmd.Flags().StringVar(&opts.PairBy, "pair-by", "order", "how runs pair with --paired: `MODE` order (start time) or task (ARM/TASK/ directories)")
	cmd.Flags().Float64Var(&opts.Alpha, "alpha", 0.05, "significance `level` after Holm's adjustment")
	cmd.Flags().Float64Var(&opts.Confidence, "confidence", 0.95, "confidence `level` of the intervals")
	cmd.Flags().BoolVar(&opts.AllowMixed, "allow-mixed", false, "compare arms whose Claude Code versions count output tokens differently")
	cmdutil.AddFormatFlags(cmd, &opts.Format, &opts.JSON, view.ABFormats, "output `FORMAT`: "+strings.Join(view.ABFormats, ", "),
		"print the comparison as JSON (same as --format json)")
	cmd.Flags().StringVar(&opts.CCUsage, "ccusage", "", "read lines exactly as ccusage 20.x's `MODE` report does: daily or session")
	return cmd
}

func auditABRun(opts *auditABOptions) error {
	hooks, printer := view.ScanHooks(opts.IO.ErrOut, opts.IO.ErrIsTerminal)
	res, err := app.AuditAB(app.Env{Getenv: opts.Getenv}, opts.AuditABOptions, hooks)
	printer.Clear()
	if res.NoEffort > 0 {
		view.Warn(opts.IO.ErrOut, "", fmt.Sprintf("%d of %d runs record no effort level and are left out", res.NoEffort, res.Runs))
	}
	if err != nil {
		return err
	}
	if res.Report.MixedVersions {
		fmt.Fprintln(opts.IO.ErrOut, "tune: WARNING: the arms mix Claude Code versions that count output tokens differently (--allow-mixed); output and thinking are not comparable")
	}
	return view.AuditAB(opts.IO.Out, res.Report, opts.Format)
}
