package view

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/textfmt"
	"github.com/ldd-tools/tune/internal/traceparse"
)

// MaxTraceRows is the most rows the text view draws: a whole-log read of a huge log shows its last
// tasks and says how many came before (the summary counts them all); --format jsonl lists every one.
const MaxTraceRows = 1000

// TraceRows is the text view as a TaskWriter: it keeps the rows of the last MaxTraceRows tasks (a ring)
// and counts the rest.
type TraceRows struct {
	withSource bool
	tasks      int
	rows       [][]string
}

// NewTraceRows starts the table; withSource adds a Log column (several logs are read).
func NewTraceRows(withSource bool) *TraceRows { return &TraceRows{withSource: withSource} }

// Tasks is the number of tasks seen, also those no longer kept.
func (r *TraceRows) Tasks() int { return r.tasks }

// Task implements traceout.TaskWriter.
func (r *TraceRows) Task(task *traceparse.Task) error {
	row := traceRow(task, r.withSource)
	if len(r.rows) < MaxTraceRows {
		r.rows = append(r.rows, row)
	} else {
		r.rows[r.tasks%MaxTraceRows] = row
	}
	r.tasks++
	return nil
}

// Close implements traceout.TaskWriter; the table is drawn by Render.
func (r *TraceRows) Close(traceparse.LineCounts, []traceparse.Warning, []traceparse.Tail) error {
	return nil
}

// Render draws the kept rows, saying how many tasks came before them.
func (r *TraceRows) Render(w io.Writer) error {
	if r.tasks == 0 {
		_, err := fmt.Fprintln(w, "no tasks")
		return err
	}
	if r.tasks > MaxTraceRows {
		start := r.tasks % MaxTraceRows
		r.rows = append(r.rows[start:], r.rows[:start]...)
		termtable.Fprintf(w, "the last %d of %d tasks (--format jsonl lists every one):\n", MaxTraceRows, r.tasks)
	}
	header := []string{"Line", "Meta time", "Level", "Dispatch", "Task", "Iters", "Loops", "Terminal", "Loss"}
	if r.withSource {
		header = append([]string{"Log"}, header...)
	}
	t := termtable.New(w, header...).Key("Level").Shrink("Task", "Loops").Optional("Dispatch", "Iters", "Loops", "Meta time")
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
	iters, _ := task.Iterations()
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

// TraceSummary is the line under the trace table: tasks, logs, line counts, warnings and tail reads.
func TraceSummary(tasks int, l traceparse.LineCounts, warnings int, tails []traceparse.Tail, logs int) string {
	s := fmt.Sprintf("%s from %s · %s read: %d parsed, %d skipped", textfmt.Plural(tasks, "task"), textfmt.Plural(logs, "log"), textfmt.Plural(l.Read, "line"), l.Parsed, l.Skipped)
	if l.Blank+l.Comment > 0 {
		s += fmt.Sprintf(" (%d blank, %d comment)", l.Blank, l.Comment)
	}
	if warnings > 0 {
		s += fmt.Sprintf(" · %s on stderr", textfmt.Plural(warnings, "warning"))
	}
	for _, tail := range tails {
		s += fmt.Sprintf("\n%s: read from byte %d to its end; its line numbers count from there", tail.File, tail.Offset)
	}
	return s
}
