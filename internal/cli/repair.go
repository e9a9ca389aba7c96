package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/view"
)

type repairOptions struct {
	IO      *IOStreams
	Factory *Factory
	Abort   bool
	Resign  bool
	Reason  string
	JSON    bool
}

// NewCmdRepair builds `tune repair`.
func NewCmdRepair(f *Factory) *cobra.Command {
	return newCmdRepair(f, nil)
}

func newCmdRepair(f *Factory, runF func(*repairOptions) error) *cobra.Command {
	opts := &repairOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "repair",
		Short: "Resolve an interrupted apply or rollback, or re-sign the store after an intended edit",
		Long: `Repair the weights store explicitly; nothing is ever repaired silently.

An apply or rollback writes weights/.pending.json before its first write and removes it after its
last. If tune was killed in between, the marker stays: tune verify reports it, every other write
refuses to run, and tune repair resolves it:
  tune repair           completes the operation from the content recorded in the marker
                        (no version is lost) and logs a repair entry;
  tune repair --abort   removes what the operation wrote but had not yet committed to the log,
                        restores weights.sum, and logs a repair entry.
Either way, and also when there is nothing else to do, it removes the temp files (.NAME.tmp-*) of
killed writes from the store, the harvested fixtures and the --reports-dir, and lists them.

--resign (with --reason, required) is for an intended hand edit of a version file — also a
v0001.toml edited before the store's first write: it re-signs weights.sum, records the new
checksums in the log with a loud "MANUAL EDIT ACCEPTED" entry, and prints a warning. It refuses a
deleted or an extra version file and a broken log (restore those from version control).`,
		Example: `  tune verify || tune repair
  tune repair --abort
  tune repair --resign --reason "raised single-file after review #123"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Abort && opts.Resign {
				return FlagErrorf("--abort and --resign do different things; give one")
			}
			if opts.Reason != "" && !opts.Resign {
				return FlagErrorf("--reason goes with --resign")
			}
			if opts.Resign && strings.TrimSpace(opts.Reason) == "" {
				return FlagErrorf("--resign needs --reason \"why\": a hand edit becomes part of the store's history, and the log says why")
			}
			if runF != nil {
				return runF(opts)
			}
			return repairRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Abort, "abort", false, "undo the interrupted operation instead of completing it")
	cmd.Flags().BoolVar(&opts.Resign, "resign", false, "re-sign weights.sum and the log after an intended hand edit (logged loudly)")
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "why the hand edit is intended (with --resign; goes into the log)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

func repairRun(opts *repairOptions) error {
	rep, err := app.Repair(opts.Factory.Env(), opts.Abort, opts.Resign, opts.Reason)
	if err != nil {
		return err
	}
	view.Resigned(opts.IO.ErrOut, rep)
	if err := view.Print(opts.IO.Out, opts.JSON, rep, view.Repair); err != nil {
		return err
	}
	if !rep.Repaired && len(rep.Details) > 0 {
		return ErrSilent // the store does not verify
	}
	return nil
}
