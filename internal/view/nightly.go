package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/termtable"
)

// Nightly prints tune nightly: the evolve summary, then what the night leaves to review and, with
// --branch, the branch that holds it. The review line is what a crontab line greps for.
func Nightly(w io.Writer, out *app.NightlyResult) error {
	if err := Evolve(w, out.EvolveResult); err != nil {
		return err
	}
	for _, b := range out.Declined {
		// What the recipes printed before tune knew: the reviewer's no, and that it holds.
		termtable.Fprintf(w, "declined: %s (a reviewer closed its pull request unmerged): not proposed again on this version; reopen it to ask again\n", b)
	}
	switch out.Review {
	case "":
		read := fmt.Sprintf("%d task(s) read", out.Tasks)
		if out.TasksFromState > 0 {
			read = fmt.Sprintf("%d task(s): %d taken up from the last night's state, %d read", out.Tasks, out.TasksFromState, out.Tasks-out.TasksFromState)
		}
		termtable.Fprintf(w, "review: nothing (%s)\n", read)
		if len(out.Stale) > 0 {
			termtable.Fprintf(w, "stale: %s (made on a version no longer active: their change can no longer merge; close their pull requests)\n", strings.Join(out.Stale, " "))
		}
	default:
		termtable.Fprintf(w, "review: %s %s\n", out.Review, out.ReviewProposal)
	}
	branchLines(w, out)
	return nil
}

// branchLines prints the branch that holds the night's change (--branch), if any.
func branchLines(w io.Writer, out *app.NightlyResult) {
	b := out.BranchResult
	if b == nil {
		return
	}
	state := "written"
	switch {
	case b.BranchUpdated:
	case b.BranchProposal != "" && b.BranchProposal != out.ReviewProposal:
		// The night's evidence grew; the open pull request keeps the proposal it was opened with.
		state = fmt.Sprintf("unchanged (it already holds this change on this base, as %s)", b.BranchProposal)
	default:
		state = "unchanged (it already holds this proposal on this base)"
	}
	termtable.Fprintf(w, "branch: %s %s (commit %s on %s)\n", b.Branch, state, shortCommit(b.Commit), shortCommit(b.Base))
	termtable.Fprintf(w, "title: %s\n", b.Title)
	termtable.Fprintf(w, "body: %s\n", Path(b.BodyFile))
	if len(b.Supersedes) > 0 {
		termtable.Fprintf(w, "supersedes: %s\n", strings.Join(b.Supersedes, " "))
	}
}

// shortCommit is the first 12 hex digits of a commit id.
func shortCommit(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
