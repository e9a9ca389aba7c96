package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/weights"
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
	return cmd
}

// defaultHistoryLimit is how many log entries the table lists without --limit: a screenful.
const defaultHistoryLimit = 20

func historyRun(opts *historyOptions) error {
	if _, err := os.Stat(opts.WeightsDir); opts.Builtin && errors.Is(err, fs.ErrNotExist) {
		// Outside a project: nothing has happened yet, which is not an error.
		fmt.Fprintf(opts.IO.Out, "no weights store at %s, so no history: tune init starts a project (outside one, tune score, detect and replay use the built-in reference weights v0001)\n", opts.WeightsDir)
		return nil
	}
	rep, err := app.History(opts.WeightsDir)
	if err != nil {
		return err
	}
	left := 0
	if opts.Limit > 0 && len(rep.Entries) > opts.Limit {
		left = len(rep.Entries) - opts.Limit
		rep.Entries = rep.Entries[left:]
	}
	if opts.JSON {
		return storeWriteJSON(opts.IO.Out, rep)
	}
	if err := printHistory(opts.IO.Out, rep); err != nil {
		return err
	}
	if left > 0 {
		termtable.Fprintf(opts.IO.Out, "(the %d earlier entries are not listed; --limit 0 lists all)\n", left)
	}
	return nil
}

func printHistory(w io.Writer, rep *app.HistoryResult) error {
	if len(rep.Entries) == 0 {
		termtable.Fprintln(w, "no evolution log yet; version files:")
		t := termtable.New(w, "Version", "Parent", "Created", "Reason").Shrink("Reason")
		for _, v := range rep.Versions {
			name := v.Version
			if v.Active {
				name += " *"
			}
			if err := t.Append(name, dash(v.Parent), v.Created.UTC().Format("2006-01-02 15:04"), v.Reason); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
		termtable.Fprintf(w, "* active: %s\n", rep.Active)
		return nil
	}
	t := termtable.New(w, "Serial", "Time", "Action", "Versions", "Proposal", "Change", "Decision", "Suite loss", "Reason").
		Shrink("Reason", "Change").Optional("Proposal", "Time", "Decision", "Suite loss")
	for _, e := range rep.Entries {
		if err := t.Append(historyCells(&e, rep.Active)...); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	termtable.Fprintf(w, "* active: %s; log serial %d, lineage %s\n", rep.Active, rep.Serial, rep.Lineage)
	return nil
}

func historyCells(e *store.LogEntry, active string) []string {
	versions := "—"
	switch {
	case e.Result > 0 && e.Parent > 0:
		versions = weights.VersionName(e.Parent) + " → " + weights.VersionName(e.Result)
	case e.Result > 0:
		versions = weights.VersionName(e.Result)
	case e.Parent > 0:
		versions = "on " + weights.VersionName(e.Parent)
	}
	if e.Result > 0 && weights.VersionName(e.Result) == active && (e.Action == store.ActionApply || e.Action == store.ActionRollback || e.Action == store.ActionInit) {
		versions += " *"
	}
	change := e.Change
	if e.Restores > 0 {
		change = strings.TrimSpace("restores " + weights.VersionName(e.Restores) + ": " + change)
	}
	return []string{
		fmt.Sprint(e.Serial), e.Time.UTC().Format("2006-01-02 15:04"), e.Action, versions, dash(e.Proposal), dash(change),
		dash(e.Decision), lossPair(e.SuiteLossBefore, e.SuiteLossAfter), dash(e.Reason),
	}
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
