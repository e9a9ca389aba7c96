package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/export"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/traceparse"

	"github.com/ldd-tools/tune/internal/regular"
)

// A single log smaller than this is shown whole by default; anything bigger shows its last tasks.
const (
	smallTraceLog   = 1 << 20
	defaultLastTask = 20
)

// maxTraceRows is the most rows the text view draws: a whole-log read of a huge log shows its last
// tasks and says how many came before (the summary counts them all); --format jsonl lists every one.
const maxTraceRows = 1000

type traceOptions struct {
	IO      *IOStreams
	Logs    []string
	Last    int
	LastSet bool // --last given; otherwise the default depends on the logs
	JSON    bool
	Format  string // text | json | jsonl | parquet
	Out     string // --out FILE (parquet)
	Force   bool
	Strict  bool
	MaxLine int // --max-line-mb
}

// NewCmdTrace builds `tune trace`.
func NewCmdTrace(f *Factory) *cobra.Command {
	return newCmdTrace(f, nil)
}

func newCmdTrace(f *Factory, runF func(*traceOptions) error) *cobra.Command {
	opts := &traceOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "trace [LOG...]",
		Short: "Read LDD trace logs: tasks, levels, outcomes, and every line that could not be read",
		Long: `Read one or more .ldd/trace.log files (default: .ldd/trace.log in the current directory) and
list their tasks: the meta line that opened each (level, dispatch, title), its iterations, its
last close (terminal, final loss).

Every era of the format is read, from hand-written v0.3.1 logs to the v0.14 writer. Lines before
the first meta line form one legacy task without a level. A missing loss is unknown ("—"), never
0. Δloss is recomputed within each task, loop and epoch rather than trusted from the writer.

Nothing is dropped silently: every line is parsed or skipped, and the summary says how many of
each. Skipped lines (a continuation of a value that held a newline, an incomplete last line
still being written, …) and lines kept with a caveat (unbalanced quotes read by a whitespace
split, a malformed signals= pair, …) are listed on stderr with file, line and reason.

--last N reads only the last N tasks of each log, backwards from its end, so its cost does not
grow with the log. Then line numbers count from where the read started (the byte offset is
given too); byte offsets are exact in any case. The default is decided for each log alone, however many
are given: the whole log when it is under 1 MB, its last 20 tasks otherwise; --last 0 reads everything.

--json prints {"tasks": [...], "lines": {"read", "parsed", "skipped", "blank", "comment"},
"warnings": [{"file", "line", "offset", "reason", "skipped"}], "tails": [{"file", "offset"}]}.
Task fields: source, line, offset, meta_timestamp, legacy, level, dispatch, creativity, signals
[{name, weight}], weights_version, task, loops, loops_used, closed, terminal, loss_final (null
when unknown), loss_final_from (close | iteration), regression_followed, regression_of, files,
iterations (its iteration, close and epoch lines, each with its fields and the recomputed
delta_loss).

--format jsonl streams one JSON object per task and line (the fields of --json's tasks) as the logs
are read, in memory that does not grow with them: the way to hand a year of logs to jq, DuckDB
(read_json_auto) or a pipeline. Warnings stay on stderr. A whole-log text view of more than 1,000
tasks shows the last 1,000 rows; the summary counts every task.

--format parquet --out FILE writes one row per task (the fields of --json's tasks without the
iterations; meta_timestamp as a timestamp, signals as a list of {name, weight}), zstd-compressed, in
row groups as the logs are read. The file appears whole or not at all; an existing one needs --force.

A line longer than --max-line-mb (default 64 MB; no trace writer comes near it) is skipped as it is
read, never held, and reported like any skipped line, so a log of garbage cannot exhaust memory.

--strict exits 1 when any line was skipped (blank and comment lines aside).`,
		Example: `  tune trace
  tune trace .ldd/trace.log --last 5
  tune trace projects/*/.ldd/trace.log --json | jq '.tasks[] | select(.level == "L1")'
  tune trace --strict ci/trace.log
  tune trace --last 0 --format jsonl .ldd/trace.log | jq -c 'select(.regression_followed)'`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Logs = args
			opts.LastSet = cmd.Flags().Changed("last")
			if opts.MaxLine < 1 || opts.MaxLine > 1024 {
				return FlagErrorf("--max-line-mb %d: want 1 to 1024", opts.MaxLine)
			}
			switch opts.Format {
			case "text", "json", "jsonl":
				if opts.Out != "" {
					return FlagErrorf("--out writes a Parquet file: give --format parquet too")
				}
			case "parquet":
				if opts.Out == "" {
					return FlagErrorf("--format parquet needs --out FILE (Parquet is not for a terminal)")
				}
			default:
				return FlagErrorf("--format %q: want text, json, jsonl or parquet", opts.Format)
			}
			if opts.Force && opts.Out == "" {
				return FlagErrorf("--force replaces the --out file; give --out too")
			}
			if opts.JSON {
				if cmd.Flags().Changed("format") && opts.Format != "json" {
					return FlagErrorf("--json is --format json; it cannot go with --format %s", opts.Format)
				}
				opts.Format = "json"
			}
			if opts.Last < 0 {
				return FlagErrorf("--last %d: want a number of tasks, or 0 for all", opts.Last)
			}
			if runF != nil {
				return runF(opts)
			}
			var err error
			if opts.Logs, err = f.traceLogs(opts.Logs); err != nil {
				return err
			}
			return traceRun(opts)
		},
	}
	cmd.Flags().IntVar(&opts.Last, "last", 0, "read only the last `N` tasks of each log, 0 for all (default: all for one log under 1 MB, else 20)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print tasks, line counts and warnings as JSON (--format json)")
	cmd.Flags().StringVar(&opts.Format, "format", "text", "output `format`: text, json (one document), jsonl (one task per line, streamed) or parquet (--out)")
	cmd.Flags().StringVar(&opts.Out, "out", "", "write the --format parquet export to `FILE` (atomically: all of it or nothing)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace an existing --out file")
	cmd.Flags().IntVar(&opts.MaxLine, "max-line-mb", traceparse.DefaultMaxLineBytes>>20, "skip (and report) lines longer than `N` MB instead of reading them")
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "exit 1 if any line was skipped (blank and comment lines aside)")
	return cmd
}

// lastTasks is the number of tasks to read per log: --last, or the default for these logs.
// lastTasks is the number of tasks to read of one log (0: all): --last, else all of a log under 1 MB and
// the last defaultLastTask of a larger one. The rule looks at that log alone: `tune trace A B` reads A
// as `tune trace A` does (docs/decisions.md#trace-window).
func (opts *traceOptions) lastTasks(log string) int {
	if opts.LastSet {
		return opts.Last
	}
	if fi, err := os.Stat(log); err == nil && fi.Size() < smallTraceLog {
		return 0
	}
	return defaultLastTask
}

func traceRun(opts *traceOptions) (err error) {
	// A FIFO or a device (/dev/zero) would block the reader or never end: refused by name first
	// (docs/decisions.md#store-integrity-and-hostile-inputs-issue-18).
	for _, log := range opts.Logs {
		if err := regular.CheckPath(log); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	var out export.TaskWriter
	var table *traceRows
	switch opts.Format {
	case "json":
		out = export.NewTaskJSON(opts.IO.Out)
	case "jsonl":
		out = export.NewTaskJSONL(opts.IO.Out)
	case "parquet":
		f, err := app.CreateExport(opts.Out, opts.Force)
		if err != nil {
			return err
		}
		defer f.Abort() // nothing once committed
		pq := export.NewTaskParquet(f)
		out = pq
		defer func() {
			if err == nil {
				if err = f.Commit(); err == nil {
					fmt.Fprintf(opts.IO.ErrOut, "tune: wrote %s to %s\n", plural(int(pq.Rows), "task"), opts.Out)
				}
			}
		}()
	default:
		table = &traceRows{withSource: len(opts.Logs) > 1}
		out = table
	}
	var (
		lines    traceparse.LineCounts
		warnings []traceparse.Warning // kept for the JSON document only
		tails    []traceparse.Tail
		nWarn    int
		skipped  int
	)
	count := func(w traceparse.Warning) {
		nWarn++
		if w.Skipped {
			skipped++
		}
	}
	// Each log is read by its own rule (lastTasks), so the default window of a log does not depend on
	// how many logs are given (docs/decisions.md#trace-window).
	for _, log := range opts.Logs {
		if last := opts.lastTasks(log); last == 0 {
			// The whole log, streamed: a task is written (or becomes a row) as soon as it is read, and
			// nothing keeps it, so memory does not follow the log (docs/decisions.md#streaming-reads).
			warn := func(w traceparse.Warning) {
				count(w)
				if opts.Format == "json" {
					warnings = append(warnings, w)
				} else {
					printTraceWarning(opts.IO.ErrOut, w, false)
				}
			}
			l, err := traceparse.StreamLog(log, out.Task, warn, traceparse.MaxLineBytes(opts.MaxLine<<20))
			if err != nil {
				return traceReadError(opts, err)
			}
			lines.Add(l)
			continue
		}
		res, err := traceparse.ReadLast(log, opts.lastTasks(log), traceparse.MaxLineBytes(opts.MaxLine<<20))
		if err != nil {
			return traceReadError(opts, err)
		}
		for i := range res.Tasks {
			if err := out.Task(&res.Tasks[i]); err != nil {
				return err
			}
		}
		for _, w := range res.Warnings {
			count(w)
		}
		lines.Add(res.Lines)
		warnings, tails = append(warnings, res.Warnings...), append(tails, res.Tails...)
		if opts.Format != "json" {
			printTraceWarnings(opts.IO.ErrOut, res)
		}
	}
	if err := out.Close(lines, warnings, tails); err != nil {
		return err
	}
	if table != nil {
		if err := table.render(opts.IO.Out); err != nil {
			return err
		}
		termtable.Fprintln(opts.IO.Out, traceSummary(table.tasks, lines, nWarn, tails, len(opts.Logs)))
	}
	if opts.Strict && skipped > 0 {
		return fmt.Errorf("--strict: %s skipped (see the warnings)", plural(skipped, "line"))
	}
	return nil
}

func traceReadError(opts *traceOptions, err error) error {
	if errors.Is(err, fs.ErrNotExist) && len(opts.Logs) == 1 && opts.Logs[0] == traceparse.DefaultLog {
		return fmt.Errorf("no trace log at %s: run tune trace in a project that has one, or name the LOG files", traceparse.DefaultLog)
	}
	return err
}

// traceRows is the text view as a TaskWriter: it keeps the rows of the last maxTraceRows tasks (a ring)
// and counts the rest.
type traceRows struct {
	withSource bool
	tasks      int
	rows       [][]string
}

func (r *traceRows) Task(task *traceparse.Task) error {
	row := traceRow(task, r.withSource)
	if len(r.rows) < maxTraceRows {
		r.rows = append(r.rows, row)
	} else {
		r.rows[r.tasks%maxTraceRows] = row
	}
	r.tasks++
	return nil
}

func (r *traceRows) Close(traceparse.LineCounts, []traceparse.Warning, []traceparse.Tail) error {
	return nil
}

func (r *traceRows) render(w io.Writer) error {
	if r.tasks == 0 {
		_, err := fmt.Fprintln(w, "no tasks")
		return err
	}
	if r.tasks > maxTraceRows {
		start := r.tasks % maxTraceRows
		r.rows = append(r.rows[start:], r.rows[:start]...)
		termtable.Fprintf(w, "the last %d of %d tasks (--format jsonl lists every one):\n", maxTraceRows, r.tasks)
	}
	header := []string{"Line", "Meta time", "Level", "Dispatch", "Task", "Iters", "Loops", "Terminal", "Loss"}
	if r.withSource {
		header = append([]string{"Log"}, header...)
	}
	t := termtable.New(w, header...).Shrink("Task", "Loops").Optional("Dispatch", "Iters", "Loops", "Meta time")
	if r.withSource {
		t.Shrink("Log")
	}
	for _, row := range r.rows {
		if err := t.Append(row...); err != nil {
			return err
		}
	}
	return t.Render()
}

func traceRow(task *traceparse.Task, withSource bool) []string {
	iters := 0
	for _, e := range task.Entries {
		if e.Kind == traceparse.KindIter {
			iters++
		}
	}
	level := dash(task.Level)
	if task.Legacy {
		level = "legacy"
	}
	terminal := dash(task.Terminal)
	if !task.Closed {
		terminal = "in-progress"
	}
	loss := "—"
	if task.LossFinal != nil {
		loss = strconv.FormatFloat(*task.LossFinal, 'f', 3, 64)
	}
	row := []string{strconv.Itoa(task.Line), traceTime(*task), level, dash(task.Dispatch), task.Title,
		strconv.Itoa(iters), dash(strings.Join(task.LoopsUsed, ",")), terminal, loss}
	if withSource {
		row = append([]string{task.Source}, row...)
	}
	return row
}

// traceTime shows the meta time to the second in UTC, or as written when it is not RFC 3339.
func traceTime(task traceparse.Task) string {
	if task.MetaTime.IsZero() {
		return dash(task.MetaTimestamp)
	}
	return task.MetaTime.UTC().Format(time.DateOnly + "T" + time.TimeOnly + "Z")
}

func traceSummary(tasks int, l traceparse.LineCounts, warnings int, tails []traceparse.Tail, logs int) string {
	s := fmt.Sprintf("%s from %s · %s read: %d parsed, %d skipped", plural(tasks, "task"), plural(logs, "log"), plural(l.Read, "line"), l.Parsed, l.Skipped)
	if l.Blank+l.Comment > 0 {
		s += fmt.Sprintf(" (%d blank, %d comment)", l.Blank, l.Comment)
	}
	if warnings > 0 {
		s += fmt.Sprintf(" · %s on stderr", plural(warnings, "warning"))
	}
	for _, tail := range tails {
		s += fmt.Sprintf("\n%s: read from byte %d to its end; its line numbers count from there", tail.File, tail.Offset)
	}
	return s
}

// printTraceWarnings lists the warnings of a read as file:line: reason. For a log read from its tail,
// the line counts from the tail's start, so the exact byte offset is given as well.
func printTraceWarnings(w io.Writer, res *traceparse.Result) {
	tailed := map[string]bool{}
	for _, t := range res.Tails {
		tailed[t.File] = true
	}
	for _, warn := range res.Warnings {
		printTraceWarning(w, warn, tailed[warn.File])
	}
}

func printTraceWarning(w io.Writer, warn traceparse.Warning, tailed bool) {
	where := fmt.Sprintf("%s:%d", warn.File, warn.Line)
	if tailed {
		where = fmt.Sprintf("%s: byte %d (line %d of the tail)", warn.File, warn.Offset, warn.Line)
	}
	what := warn.Reason
	if warn.Skipped {
		what = "skipped: " + what
	}
	fmt.Fprintf(w, "tune: warning: %s: %s\n", where, what)
}
