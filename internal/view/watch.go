package view

import (
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ldd-tools/tune/internal/accuracy"
	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/watch"
)

// watchRows is how many moved tasks the terminal table lists (those that count against the version
// first); --json lists them all.
const watchRows = 20

// Watch prints tune watch: the verdict and its reason, the tests (e-values), the rates before the
// version they were fixed from, the table of the tasks the change moved, and the rollback proposal.
func Watch(w io.Writer, r *app.WatchResult) error {
	termtable.Fprintf(w, "%s (parent %s, %s): %s\n", r.Version, r.Parent, strings.Join(r.Changes, ", "), strings.ToUpper(r.Verdict))
	termtable.Fprintf(w, "  %s\n", r.Reason)
	if len(r.Tests) > 0 {
		t := termtable.New(w, "Test", "Events", "Null ≤", "Alt", "e-value", "Threshold", "More").Optional("Alt", "More") // the test is the key: never cut
		for _, x := range r.Tests {
			null, alt, e, more := fmt.Sprintf("%.0f%%", 100*x.Null), "any worse", watchE(x.E), "—"
			if x.Alt > 0 {
				alt = fmt.Sprintf("%.0f%%", 100*x.Alt)
			}
			if x.NeedMore > 0 {
				more = strconv.Itoa(x.NeedMore)
			}
			if x.Note != "" {
				null, alt, e = "—", "—", "—"
			}
			if err := t.Append(x.Name, fmt.Sprintf("%d/%d", x.K, x.N), null, alt, e, fmt.Sprintf("%.3g", x.Threshold), more); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
		for _, x := range r.Tests {
			termtable.Fprintf(w, "  %s: %s %s; null from %s\n", x.Name, x.Sample, x.Event, cmp.Or(x.Note, x.Basis))
		}
		termtable.Fprintf(w, "  More = events in a row that would reach the threshold (1/α split over the tests)\n")
	}
	b := r.Before
	termtable.Fprintf(w, "  before (%s, auto): lifted while low %s regressed, other low-side %s, L3/L4 overkill %s, moved down %s regressed\n",
		r.Parent, rate(b.LiftedWhileLow), rate(b.OtherLow), rate(b.OverkillHigh), rate(b.Dropped))
	if err := watchMoved(w, r.Result); err != nil {
		return err
	}
	if s := watch.NotCountedText(r.NotCounted); s != "" {
		termtable.Fprintf(w, "  moved but not counted (a level the user set is not the weights'): %s\n", s)
	}
	switch {
	case r.Proposal != "" && r.ProposalNew:
		termtable.Fprintf(w, "rollback proposal %s written: %s\nreview it, then: tune apply %s\n", r.Proposal, r.ProposalPath, r.Proposal)
	case r.Proposal != "":
		termtable.Fprintf(w, "rollback proposal %s is already pending: %s\nreview it, then: tune apply %s\n", r.Proposal, r.ProposalPath, r.Proposal)
	case r.ProposalNote != "":
		termtable.Fprintf(w, "%s\n", r.ProposalNote)
	}
	return nil
}

// watchMoved is the table of the tasks the change moved.
func watchMoved(w io.Writer, r *watch.Result) error {
	if len(r.MovedTasks) == 0 {
		return nil
	}
	rows := watch.EventsFirst(r.MovedTasks)
	more := len(rows) - watchRows
	if more > 0 {
		rows = rows[:watchRows]
	}
	t := termtable.New(w, "Task", "Meta time", "Levels", "Test", "Against").Shrink("Task", "Test", "Against").Optional("Meta time")
	for _, m := range rows {
		if err := t.Append(m.Task, m.MetaTimestamp, m.From+" → "+m.To, cmp.Or(m.Tests(), "—"), cmp.Or(m.Against(), "—")); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	termtable.Fprintf(w, "  Levels = the task's signals under %s → under %s; Against = counts against %s, and how it is known\n", r.Parent, r.Version, r.Version)
	if more > 0 {
		termtable.Fprintf(w, "  … %d more moved task(s): --json lists them all\n", more)
	}
	return nil
}

func rate(r accuracy.Rate) string { return fmt.Sprintf("%d/%d", r.K, r.N) }

// watchE prints a test's e-value with 3 significant digits, and one below 0.001 (no evidence against
// the version at all) as "< 0.001", so that the tests' table fits 80 columns (--json has the value).
func watchE(e float64) string {
	if e < 0.001 {
		return "< 0.001"
	}
	return fmt.Sprintf("%.3g", e)
}
