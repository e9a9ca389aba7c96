package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/accuracy"
	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/termtable"
)

type accuracyOptions struct {
	IO         *IOStreams
	Factory    *Factory
	WeightsDir string
	Logs       []string
	Days       int
	JSON       bool
}

// NewCmdAccuracy builds `tune accuracy`.
func NewCmdAccuracy(f *Factory) *cobra.Command {
	return newCmdAccuracy(f, nil)
}

func newCmdAccuracy(f *Factory, runF func(*accuracyOptions) error) *cobra.Command {
	opts := &accuracyOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "accuracy [LOG...]",
		Short: "How well dispatch is doing: per level, tasks, iterations, final loss, overkill and underkill",
		Long: `Report dispatch accuracy over the closed tasks of the trace logs (default .ldd/trace.log) whose
meta line is at most --days old: per dispatched level L0…L4 the number of tasks, the median
iteration count and final loss, the complete rate, the overkill and underkill rates, the top
three signals and the terminals. It is the LDD reference's "ldd_trace telemetry dispatch" with
the same definitions and rounding:

  k           the non-baseline iterations of a task
  final loss  loss_final on the task's last close, else its last iteration's loss
  overkill    dispatched L3/L4, terminal complete, k ≤ 1, final loss ≤ 0.01 or unknown:
              the level was heavier than the task needed
  underkill   dispatched L0/L1 and ended failed or aborted, or needed k ≥ 5:
              the level was lighter than the task needed
  top signals the three signals= names on most of the level's tasks, ties by first appearance

Tasks without a level count in n_tasks_total only. Every rate comes with a 95% Wilson interval
(small samples are the norm: 1 of 3 is anywhere from 6% to 79%).

tune reads some logs further than the reference (a BOM, a v0.10.1 level_chosen= meta line, a
line with unbalanced quotes, a missing loss kept unknown instead of read as 0): each such task is
counted and listed with its reason under "read beyond the reference", never silently. The
summary is then split by weights version (weights= on the meta line, else the version the store
log says was active at the task's meta time), by dispatch source and by log.

--json prints the reference's fields exactly (window_days, n_tasks_total, n_tasks_with_level,
per_level {L0…L4: n, median_k, median_final_loss, complete_rate, overkill_rate, underkill_rate,
top_signals [{name, n}], terminals}, overall {overkill_rate, underkill_rate}), so scripts written
for the reference keep working, followed by tune's: read_beyond_reference {n_tasks, tasks [{log,
line, task, level, reasons}]}, intervals {confidence, method, per_level {L0…: {complete_rate,
overkill_rate, underkill_rate: {k, n, rate, lo, hi}}}, overall}, by_weights_version,
by_dispatch, by_log ([{key, summary, intervals}], by_weights_version with n_from_meta and
n_from_log), n_tasks_undated (closed tasks whose meta timestamp is not RFC 3339).`,
		Example: `  tune accuracy
  tune accuracy projects/*/.ldd/trace.log --days 90
  tune accuracy --json --days 36500 | jq '.per_level.L1.underkill_rate'`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Logs = args
			if opts.Days <= 0 {
				return FlagErrorf("--days %d: want a positive number of days", opts.Days)
			}
			opts.WeightsDir = f.WeightsDir
			if runF != nil {
				return runF(opts)
			}
			var err error
			if opts.Logs, err = f.traceLogs(opts.Logs); err != nil {
				return err
			}
			return accuracyRun(opts)
		},
	}
	cmd.Flags().IntVar(&opts.Days, "days", accuracy.DefaultDays, "window: tasks whose meta line is at most `N` days old")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the report as JSON (the reference's fields, then tune's)")
	return cmd
}

func accuracyRun(opts *accuracyOptions) error {
	rep, err := app.Accuracy(opts.Factory.Env(), opts.Logs, opts.Days)
	if err != nil {
		return err
	}
	if opts.JSON {
		return storeWriteJSON(opts.IO.Out, rep)
	}
	return printAccuracy(opts.IO.Out, rep)
}

func fmtRate(r accuracy.Rate) string {
	if r.N == 0 {
		return "—"
	}
	return fmt.Sprintf("%d/%d %.0f%% [%.0f–%.0f%%]", r.K, r.N, 100*r.Rate, 100*r.Lo, 100*r.Hi)
}

func printAccuracy(w io.Writer, rep *accuracy.Report) error {
	termtable.Fprintf(w, "dispatch accuracy · last %s · %s closed, %d with a level\n", plural(rep.WindowDays, "day"), plural(rep.NTasksTotal, "task"), rep.NTasksWithLevel)
	t := termtable.New(w, "Level", "Tasks", "Median k", "Median loss", "Complete", "Overkill", "Underkill", "Top signals", "Terminals").
		Shrink("Top signals", "Terminals").Optional("Terminals", "Median k", "Median loss", "Top signals", "Complete")
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
		termtable.Fprintf(w, "%s left out: meta timestamp not RFC 3339\n", plural(rep.Undated, "closed task"))
	}
	if rep.Beyond.NTasks > 0 {
		termtable.Fprintf(w, "read beyond the reference: %s (the reference's numbers differ by exactly these)\n", plural(rep.Beyond.NTasks, "task"))
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
