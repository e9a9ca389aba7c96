package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/textfmt"
)

// Version prints tune version: release, module, VCS revision, Go.
func Version(w io.Writer, v app.VersionInfo) error {
	fmt.Fprintf(w, "tune %s\nmodule: %s\n", v.Version, v.Module)
	if v.Revision != "" {
		mod := ""
		if v.Modified {
			mod = " (modified)"
		}
		fmt.Fprintf(w, "revision: %s%s %s\n", v.Revision, mod, v.Time)
	} else {
		fmt.Fprintln(w, "revision: unknown (built without VCS information)")
	}
	_, err := fmt.Fprintf(w, "go: %s\n", v.Go)
	return err
}

// Apply prints what tune apply wrote and how to undo it.
func Apply(w io.Writer, rep *app.ApplyResult) error {
	fmt.Fprintf(w, "applied %s as %s (parent %s): %s\n", rep.Proposal, rep.Version, rep.Parent, rep.Change)
	fmt.Fprintf(w, "active version: %s (evolution log serial %d)\n", rep.Version, rep.Serial)
	if len(rep.Harvested) > 0 {
		fmt.Fprintf(w, "harvested %s:\n", textfmt.Plural(len(rep.Harvested), "fixture"))
		for _, h := range rep.Harvested {
			fmt.Fprintf(w, "  %s\n", h)
		}
	}
	fmt.Fprintf(w, "undo with: tune rollback (writes a new version equal to %s)\n", rep.Parent)
	return nil
}

// Rollback prints the version tune rollback wrote.
func Rollback(w io.Writer, rep *app.RollbackResult) error {
	fmt.Fprintf(w, "rolled back to %s: wrote %s (parent %s) with the content of %s: %s\n",
		rep.Restores, rep.Version, rep.Parent, rep.Restores, rep.Change)
	fmt.Fprintf(w, "active version: %s (evolution log serial %d)\n", rep.Version, rep.Serial)
	return nil
}

// Init prints what tune init wrote and kept, and the next commands.
func Init(w io.Writer, res *app.InitResult) error {
	fmt.Fprintf(w, "initialised a tune project in %s\n", res.Dir)
	for _, f := range res.Written {
		fmt.Fprintf(w, "  wrote %s\n", f)
	}
	for _, f := range res.Kept {
		why := "as it is"
		if f == "weights/" {
			why = "an existing store's history is never touched"
		}
		fmt.Fprintf(w, "  kept  %s (%s)\n", f, why)
	}
	if len(res.Gitignore) > 0 {
		fmt.Fprintf(w, "  .gitignore: added %s\n", strings.Join(res.Gitignore, ", "))
	}
	where := ""
	if res.Dir != "." {
		where = " (in " + res.Dir + " or below it: tune finds the project from there)"
	}
	for _, f := range res.CI {
		if res.Repo == "" {
			fmt.Fprintf(w, "  wrote %s\n", f)
			continue
		}
		fmt.Fprintf(w, "  wrote %s (in the repository %s)\n", f, res.Repo)
	}
	fmt.Fprint(w, `next`+where+`:
  tune score --project-log "the task"   # record a task, from any subdirectory (agents do it on each task)
  tune nightly                          # detect, propose, replay: a proposal and its report
  tune apply                            # once you have read reports/proposal-*.md
`)
	if len(res.Notes) > 0 {
		fmt.Fprintf(w, "commit: %s\n", strings.Join(res.Commit, " "))
		for _, n := range res.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
	return nil
}
