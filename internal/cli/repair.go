package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/store"
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

type repairReport struct {
	Repaired bool     `json:"repaired"`
	Op       string   `json:"op,omitempty"`
	Action   string   `json:"action,omitempty"`
	Details  []string `json:"details"`
	Serial   int      `json:"serial,omitempty"`
	Note     string   `json:"note,omitempty"`
}

func repairRun(opts *repairOptions) error {
	s, err := opts.Factory.Env().OpenStore()
	if err != nil {
		return err
	}
	var res *store.RepairResult
	if opts.Resign {
		res, err = s.Resign(opts.Reason)
	} else {
		res, err = s.Repair(opts.Abort)
	}
	if errors.Is(err, store.ErrNothingToDo) {
		// No marker: say whether anything else is wrong, and what would fix it.
		problems := s.Verify()
		rep := repairReport{Details: []string{}, Note: "nothing to repair: no interrupted operation"}
		for _, p := range problems {
			rep.Details = append(rep.Details, p.String())
		}
		if opts.JSON {
			if err := storeWriteJSON(opts.IO.Out, rep); err != nil {
				return err
			}
		} else if len(problems) == 0 {
			fmt.Fprintln(opts.IO.Out, "nothing to repair: the weights store is intact")
		} else {
			fmt.Fprintf(opts.IO.Out, "no interrupted operation to resolve, but the store does not verify:\n")
			for _, d := range rep.Details {
				fmt.Fprintf(opts.IO.Out, "  %s\n", d)
			}
			fmt.Fprintln(opts.IO.Out, "If a version file was edited on purpose: tune repair --resign --reason \"…\". Otherwise restore the files from version control.")
		}
		if len(problems) > 0 {
			return ErrSilent
		}
		return nil
	}
	if err != nil {
		return err
	}
	rep := repairReport{Repaired: true, Op: res.Op, Action: res.Action, Details: res.Details, Serial: res.Entry.Serial}
	if rep.Details == nil {
		rep.Details = []string{}
	}
	if opts.Resign {
		fmt.Fprintf(opts.IO.ErrOut, "WARNING: the weights store was re-signed; the hand edit is now part of its history (log serial %d):\n", res.Entry.Serial)
		for _, d := range res.Details {
			fmt.Fprintf(opts.IO.ErrOut, "WARNING:   %s\n", d)
		}
	}
	if opts.JSON {
		return storeWriteJSON(opts.IO.Out, rep)
	}
	if opts.Resign {
		fmt.Fprintf(opts.IO.Out, "repair: re-signed %s and recorded the current checksums (logged as serial %d)\n", store.SumFile, rep.Serial)
	} else {
		what := "the interrupted " + rep.Op
		if rep.Op == "unknown" { // the marker could not be read, so what it was is not known
			what = "an interrupted operation whose marker was unreadable"
		}
		fmt.Fprintf(opts.IO.Out, "repair: %s %s (logged as serial %d)\n", rep.Action, what, rep.Serial)
	}
	for _, d := range rep.Details {
		fmt.Fprintf(opts.IO.Out, "  %s\n", d)
	}
	return nil
}
