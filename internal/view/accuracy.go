package view

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ldd-tools/tune/internal/accuracy"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/textfmt"
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
