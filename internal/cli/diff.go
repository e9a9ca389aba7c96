package cli

import (
	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/cmdutil"
	"github.com/ldd-tools/tune/internal/view"
)

type diffOptions struct {
	IO         *IOStreams
	WeightsDir string
	A, B       string
	Format     string
	JSON       bool // --json: --format json
}

// NewCmdDiff builds `tune diff`.
func NewCmdDiff(f *Factory) *cobra.Command {
	return newCmdDiff(f, nil)
}

func newCmdDiff(f *Factory, runF func(*diffOptions) error) *cobra.Command {
	opts := &diffOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two weights versions as a pull-request table",
		Long: `Compare two weights versions (or a version and a proposal) and print what changed: one row per
signal weight, bucket edge or cost that differs, with old → new, Δ, the evidence behind it and the
confidence — the table to paste into the pull request that ships a weights change.

A and B are each a version (v0002, 2), "active", or a proposal file or id (p-…). The evidence
columns come from B's proposal: the file itself, or, for a version written by tune apply, the
proposal it names when it is still in weights/proposals/ (else the counts in the log entry):
  Evidence (a/b/c/d)   the signal's screen table: fired & flagged / fired & not flagged /
                       not fired & flagged / neither (or "n flagged" when only the count is known)
  Fisher p             one-sided Fisher p, raw / Holm-adjusted
  Suite loss           replay loss before → after the change
  Confidence           strong | provisional | underpowered; "—" when unknown`,
		Example: `  tune diff v0001 active
  tune diff active weights/proposals/p-98cce9bd98d5.json --format markdown > pr-body.md
  tune diff 1 2 --format json`,
		Args: cmdutil.WantArgs(cobra.ExactArgs(2), "two versions or proposals, e.g. tune diff active weights/proposals/p-….json"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.WeightsDir = f.WeightsDir
			opts.A, opts.B = args[0], args[1]
			for _, ref := range args {
				if err := checkWeightsRef(ref); err != nil {
					return err
				}
			}
			if err := cmdutil.CheckFormat(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return diffRun(opts)
		},
	}
	cmdutil.AddFormatFlags(cmd, &opts.Format, &opts.JSON, []string{"text", "markdown", "json"}, "output `format`: text, markdown or json", "print the comparison as JSON (same as --format json)")
	return cmd
}

func diffRun(opts *diffOptions) error {
	rep, err := app.Diff(opts.WeightsDir, opts.A, opts.B)
	if err != nil {
		return err
	}
	if opts.Format == "markdown" {
		return view.DiffMarkdown(opts.IO.Out, rep)
	}
	return view.Print(opts.IO.Out, opts.Format == "json", rep, view.DiffText)
}
