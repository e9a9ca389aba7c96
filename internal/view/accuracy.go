package view

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ldd-tools/tune/internal/accuracy"
	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/textfmt"
	"github.com/ldd-tools/tune/internal/watch"
)

// fmtRate is the tables' form of a rate.
func fmtRate(r accuracy.Rate) string { return r.Format(accuracy.RatePlain) }

// Accuracy prints tune accuracy: per level tasks, medians and rates with their intervals, then the splits.
func Accuracy(w io.Writer, rep *accuracy.Report) error {
	termtable.Fprintf(w, "dispatch accuracy · last %s · %s closed, %d with a level\n", textfmt.Plural(rep.WindowDays, "day"), textfmt.Plural(rep.NTasksTotal, "task"), rep.NTasksWithLevel)
	t := termtable.New(w, "Level", "Tasks", "Median k", "Median loss", "Complete", "Overkill", "Underkill", "Top signals", "Terminals").
		Key("Level").Shrink("Top signals", "Terminals").Optional("Terminals", "Median k", "Median loss", "Top signals", "Complete")
	for i, lvl := range accuracy.Levels {
		ls, iv := rep.PerLevel.At(i), rep.Intervals.At(i)
		if ls.N == 0 {
			if err := t.Append(lvl, "0", "—", "—", "—", "—", "—", "—", "—"); err != nil {
				return err
			}
			continue
		}
		sigs := make([]string, len(ls.TopSignals))
		for j, s := range ls.TopSignals {
			sigs[j] = fmt.Sprintf("%s ×%d", s.Name, s.N)
		}
		if err := t.Append(lvl, fmt.Sprint(ls.N), fmt.Sprintf("%g", ls.MedianK), fmt.Sprintf("%.3f", ls.MedianFinalLoss),
			fmtRate(iv.Complete), fmtRate(iv.Overkill), fmtRate(iv.Underkill), dash(strings.Join(sigs, ", ")), terminalsCell(ls.Terminals)); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	termtable.Fprintf(w, "overall: overkill %s · underkill %s (95%% Wilson intervals)\n", fmtRate(rep.Intervals.Overall.Overkill), fmtRate(rep.Intervals.Overall.Underkill))
	if rep.Undated > 0 {
		termtable.Fprintf(w, "%s left out: meta timestamp not RFC 3339\n", textfmt.Plural(rep.Undated, "closed task"))
	}
	if rep.Beyond.NTasks > 0 {
		termtable.Fprintf(w, "read beyond the reference: %s (the reference's numbers differ by exactly these)\n", textfmt.Plural(rep.Beyond.NTasks, "task"))
		for _, b := range rep.Beyond.Tasks {
			termtable.Fprintf(w, "  %s:%d %q: %s\n", b.Log, b.Line, b.Task, strings.Join(b.Reasons, "; "))
		}
	}
	for _, s := range []struct {
		title  string
		groups []accuracy.Group
	}{{"weights version", rep.ByWeightsVersion}, {"dispatch source", rep.ByDispatch}, {"log", rep.ByLog}} {
		if len(s.groups) == 0 {
			continue
		}
		termtable.Fprintf(w, "by %s:\n", s.title)
		first := strings.ToUpper(s.title[:1]) + s.title[1:]
		t := termtable.New(w, first, "Tasks", "With level", "Overkill", "Underkill").Shrink(first)
		for _, g := range s.groups {
			key := g.Key
			if g.NFromLog != nil && *g.NFromLog > 0 {
				key += fmt.Sprintf(" (%d by apply time)", *g.NFromLog)
			}
			if err := t.Append(key, fmt.Sprint(g.Summary.NTasksTotal), fmt.Sprint(g.Summary.NTasksWithLevel),
				fmtRate(g.Intervals.Overall.Overkill), fmtRate(g.Intervals.Overall.Underkill)); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	return nil
}

func terminalsCell(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return dash(strings.Join(parts, ", "))
}

// Watch prints tune watch: the verdict, before → after per measure, the evidence and the rollback proposal.
func Watch(w io.Writer, r *app.WatchResult) error {
	termtable.Fprintf(w, "%s (parent %s, %s): %s\n", r.Version, r.Parent, strings.Join(r.Changes, ", "), strings.ToUpper(r.Verdict))
	termtable.Fprintf(w, "  %s\n", r.Reason)
	// The measure names are short so that the table fits 80 columns with its four columns whole (the
	// before/after cells take 20 each); the line under the table says what the two long ones count.
	t := termtable.New(w, "Measure", "Before ("+r.Parent+")", "After ("+r.Version+")", "p (rose)").Shrink("Measure").Optional("p (rose)")
	rows := []struct {
		name string
		c    watch.Comparison
	}{{"low-side regressed", r.Regressions}, {"overkill", r.Overkill}, {"underkill", r.Underkill}}
	for _, row := range rows {
		if err := t.Append(row.name, fmtRate(row.c.Before), fmtRate(row.c.After), fmt.Sprintf("%.3g", row.c.P)); err != nil {
			return err
		}
	}
	for _, l := range r.LevelMix {
		if err := t.Append("share at "+l.Level, fmtRate(l.Before), fmtRate(l.After), ""); err != nil {
			return err
		}
	}
	if err := t.Append("lifted, regressed", "", fmtRate(accuracy.NewRate(r.LiftedRegressed, r.Lifted)), ""); err != nil {
		return err
	}
	if err := t.Render(); err != nil {
		return err
	}
	termtable.Fprintf(w, "  low-side regressed = regressions of L0/L1 tasks carrying a changed signal\n")
	termtable.Fprintf(w, "  lifted, regressed = tasks %s scores higher than %s that still regressed\n", r.Version, r.Parent)
	termtable.Fprintf(w, "  [lo–hi] = 95%% Wilson interval; p (rose) = one-sided Fisher exact p\n")
	for _, e := range r.Evidence {
		termtable.Fprintf(w, "  %s:%d %s %s %q: %s\n", e.Log, e.Line, e.MetaTimestamp, e.Level, e.Task, e.Note)
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
