package cli

import (
	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/view"
)

// newCmdReportAudit builds `tune report audit`; it shares reportOptions with the other reports.
func newCmdReportAudit(opts *reportOptions, run func(kind string) func(*cobra.Command, []string) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit [PATH...] [--arm NAME=PATH...]",
		Short: "Report on transcripts: spend shares, thinking by class and effort, and an A/B of arms",
		Long: `Write the EVAL report of a transcript audit: token totals, the share of weighted spend of each token
kind (with a chart; standard and TTL-aware prices, as tune audit), the headline figures, thinking by
class (main, subagent, compaction, side-question) and effort, and — with two or more --arm — the A/B
table of tune audit ab (medians with 95% CIs, Mann–Whitney p, Holm, bootstrap ratio, "~" for no
detected difference) with a chart of every run per arm.

Transcripts are found as tune audit finds them (PATH arguments, else CLAUDE_CONFIG_DIR or the default
folders). With --arm and no PATH, the spend part covers the arms' transcripts, each labelled with its
arm name as the effort where the transcript records none. Arms that mix Claude Code versions with
different output-token semantics are refused unless --allow-mixed (the report then says so loudly).

Costs are tune audit's: --pricing FILE and --cost-mode apply as there.
Its effort conformance section (tune effort's check) reads the pins of --repo DIR, else of the
project root (the directory of tune.toml) when it holds agents/, skills/, .claude/ or
settings.json; without pins, shifts are the effort-<level> skills and agents are not judged.

The report holds numbers and labels only: no transcript text is ever copied into it.`,
		Example: `  tune report audit ~/.claude/projects/-home-me-shop-api
  tune report audit --arm high=runs/high --arm xhigh=runs/xhigh --out reports/`,
		Args: cobra.ArbitraryArgs,
		RunE: run("audit"),
	}
	cmd.Flags().StringArrayVar(&opts.Arms, "arm", nil, "an A/B arm: `NAME=PATH` (repeatable; the first is the baseline)")
	cmd.Flags().BoolVar(&opts.AllowMixed, "allow-mixed", false, "compare arms whose Claude Code versions count output tokens differently")
	cmd.Flags().StringVar(&opts.Pricing, "pricing", "", "read prices from `FILE` (as tune audit --pricing)")
	cmd.Flags().StringVar(&opts.CostMode, "cost-mode", "auto", costModeUsage)
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "check the effort section against the pins of the agents and skills in `DIR` (default the project root, when it holds them)")
	return cmd
}

func auditReportRun(opts *reportOptions) (app.ReportResult, error) {
	mode, err := app.ParseCostMode(opts.CostMode)
	if err != nil {
		return app.ReportResult{Report: "audit"}, err
	}
	if err := app.CheckRepo(opts.Repo); err != nil {
		return app.ReportResult{Report: "audit"}, err
	}
	var arms []app.Arm
	if len(opts.Arms) > 0 {
		// tune audit ab's own parsing of NAME=PATH, so that both commands read arms the same way.
		if arms, err = app.ParseArms(opts.Arms); err != nil {
			return app.ReportResult{Report: "audit"}, err
		}
	}
	hooks, printer := view.ScanHooks(opts.IO.ErrOut, opts.IO.ErrIsTerminal)
	defer printer.Clear()
	return app.ReportAudit(opts.Env, app.ReportAuditOptions{Paths: opts.Paths, Arms: arms, AllowMixed: opts.AllowMixed, OutDir: opts.OutDir,
		Pricing: opts.Pricing, CostMode: mode, Repo: opts.Repo}, hooks)
}
