package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/cmdutil"
	"github.com/ldd-tools/tune/internal/view"
)

type reportOptions struct {
	IO     *IOStreams
	Notes  io.Writer // stderr, or io.Discard with --quiet
	Env    app.Env
	OutDir string
	JSON   bool

	Kind     string // proposal | history | audit
	Proposal string // proposal file or id; "" = the newest proposal

	Paths      []string // audit: transcript paths; history: trace logs
	Arms       []string // audit: NAME=PATH
	AllowMixed bool
	Pricing    string // audit: price file, as tune audit --pricing
	CostMode   string // audit: as tune audit --cost-mode
	Repo       string // audit: the effort section's pins
}

// NewCmdReport builds `tune report` and its subcommands.
func NewCmdReport(f *Factory) *cobra.Command {
	return newCmdReport(f, nil)
}

func newCmdReport(f *Factory, runF func(*reportOptions) error) *cobra.Command {
	opts := &reportOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "report <command>",
		Short: "Write an EVAL report (Markdown with SVG charts) for a proposal, the weights history or an audit",
		Long: `Write an EVAL report under --out (default the --reports-dir, "reports"): a Markdown file with
SVG charts beside it, meant to be read in a pull request.

Reports are byte-for-byte reproducible: the same input gives the same bytes and the same file
names (proposal-<id>.md, history-<hash>.md, audit-<hash>.md; the hash is of the report's input), so regenerating one
changes nothing and a diff shows only what really changed. Task titles and labels pass through a
redaction of secret-looking strings (API keys, tokens, passwords in URLs); no transcript text is
ever copied into a report.

tune propose and tune nightly write the proposal report themselves (tune audit --report the audit
report); these commands write one on demand. The written paths are printed one per line (--json: {"report", "files", ...}).`,
		Example: `  tune report proposal
  tune report proposal weights/proposals/p-4f1c2a9be07d.json --out /tmp/review
  tune report history --json
  tune report audit --arm high=runs/high --arm xhigh=runs/xhigh`,
		Args: cobra.ArbitraryArgs,
		// A parent without RunE would print its help and exit 0 even for "tune report bogus".
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return FlagErrorf("unknown report %q: want proposal, history or audit", args[0])
			}
			return FlagErrorf("which report? tune report proposal|history|audit")
		},
	}
	cmd.PersistentFlags().StringVar(&opts.OutDir, "out", "", "write the report into `DIR` (default the --reports-dir)")
	cmd.PersistentFlags().BoolVar(&opts.JSON, "json", false, "print the written files as JSON")

	run := func(kind string) func(*cobra.Command, []string) error {
		return func(_ *cobra.Command, args []string) error {
			opts.Kind, opts.Env, opts.Notes = kind, f.Env(), f.noteOut()
			if opts.OutDir == "" {
				opts.OutDir = f.ReportsDir
			}
			switch {
			case kind == "audit" || kind == "history":
				opts.Paths = args
			case len(args) > 0:
				opts.Proposal = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return reportRun(opts)
		}
	}

	proposal := &cobra.Command{
		Use:   "proposal [PROPOSAL]",
		Short: "Report on a proposal: evidence, screen, every attempt, replay per scenario, weight diff",
		Long: `Write the EVAL report of a proposal (a file, or an id under <weights-dir>/proposals/; default the
newest proposal there): the window of trace history, the flagged tasks with their evidence, the
signal screen, every attempt with its decision, the replay of every fixture scenario before and after
with a chart, the guardrails (sign test, leave-one-out, holdout) and the weight diff.

The report is rendered from the input saved with the proposal (under <weights-dir>/proposals/inputs/
when propose, evolve or nightly wrote it): no step is re-run, so the report is byte for byte the one
they wrote. A proposal without a saved input gets what its file holds (no window; screen rows of the
changed signals only) and a fresh replay of the fixtures, and a note on stderr says so.`,
		Example: `  tune report proposal
  tune report proposal p-4f1c2a9be07d --out /tmp/review`,
		Args: cmdutil.WantArgs(cobra.MaximumNArgs(1), "at most one proposal (default the newest), e.g. tune report proposal p-4f1c2a9be07d"),
		RunE: run("proposal"),
	}

	history := &cobra.Command{
		Use:   "history [LOG...]",
		Short: "Report on the weights history: every version and attempt, loss by generation, weight trajectory",
		Long: `Write the EVAL report of the weights store: every version with its changes, every evolution log
entry (attempts, applies, rollbacks), a chart of suite loss by generation with accepted, halved,
reverted, applied and rolled-back steps marked, and the trajectory of every weight that changed.

Given trace LOGs, it adds the dispatch accuracy by weights version (the closed tasks dispatched
under each version: underkill at L0/L1, overkill at L3/L4, with 95% Wilson intervals, as tune
accuracy defines them) and a calibration chart: per level the mis-dispatch rate with its interval,
one line per version, so each applied version reads against the one before it.`,
		Example: `  tune report history --out reports/
  tune report history projects/*/.ldd/trace.log`,
		Args: cobra.ArbitraryArgs,
		RunE: run("history"),
	}
	cmd.AddCommand(proposal, history, newCmdReportAudit(opts, run))
	return cmd
}

func reportRun(opts *reportOptions) error {
	var res app.ReportResult
	var err error
	switch opts.Kind {
	case "proposal":
		res, err = app.ReportProposal(opts.Env, opts.Proposal, opts.OutDir)
	case "history":
		res, err = app.ReportHistory(opts.Env, opts.OutDir, opts.Paths)
	case "audit":
		res, err = auditReportRun(opts)
	default:
		err = fmt.Errorf("unknown report %q", opts.Kind)
	}
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		view.Warn(opts.IO.ErrOut, "", w)
	}
	view.Notes(opts.Notes, res.Notes)
	return view.Print(opts.IO.Out, opts.JSON, res, view.ReportFiles)
}
