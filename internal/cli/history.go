package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/cmdutil"
	"github.com/ldd-tools/tune/internal/view"
)

type historyOptions struct {
	IO         *IOStreams
	WeightsDir string
	Builtin    bool // no flag, variable or project chose the store (see app.Env)
	JSON       bool
	// Limit is how many of the latest log entries to list (0: all). The table lists
	// defaultHistoryLimit unless --limit is given; --json lists all unless it is.
	Limit int
}

// NewCmdHistory builds `tune history`.
func NewCmdHistory(f *Factory) *cobra.Command {
	return newCmdHistory(f, nil)
}

func newCmdHistory(f *Factory, runF func(*historyOptions) error) *cobra.Command {
	opts := &historyOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List weights versions and evolution attempts in order",
		Long: `List the evolution log in order: every attempt (propose-attempt, accept, halve, revert), every
version written (apply, rollback), every repair — with its serial, the versions it went from and to,
the proposal, the change, the decision and the suite loss before → after. The active version is
marked. A store without a log yet lists its version files.

The table lists the latest 20 entries (--limit N for another number, --limit 0 for all) and says how
many it left out; --json lists every entry unless --limit is given.

--json prints {"active", "serial", "lineage", "versions": [...], "entries": [log entries]}; the entry
fields are those of weights/evolution.jsonl.`,
		Example: `  tune history
  tune history --limit 5
  tune history --json | jq '.entries[] | select(.action == "apply")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.WeightsDir, opts.Builtin = f.WeightsDir, f.Builtin
			if opts.Limit < 0 {
				return FlagErrorf("--limit %d: want a number of entries, or 0 for all", opts.Limit)
			}
			if !cmd.Flags().Changed("limit") && !opts.JSON {
				opts.Limit = defaultHistoryLimit
			}
			if runF != nil {
				return runF(opts)
			}
			return historyRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the history as JSON")
	cmd.Flags().IntVar(&opts.Limit, "limit", 0, fmt.Sprintf("list the latest `N` log entries, 0 for all (default %d in the table, all with --json)", defaultHistoryLimit))
	cmdutil.Want(cmd, "limit", "a number of entries, e.g. --limit 5 (0 for all)")
	return cmd
}

// defaultHistoryLimit is how many log entries the table lists without --limit: a screenful.
const defaultHistoryLimit = 20

func historyRun(opts *historyOptions) error {
	rep, err := app.History(opts.WeightsDir, opts.Builtin)
	if err != nil {
		return err
	}
	rep.Latest(opts.Limit)
	// Outside a project the note is the output, with --json too.
	return view.Print(opts.IO.Out, opts.JSON && rep.NoStore == "", rep, view.History)
}
