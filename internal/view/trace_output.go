package view

import (
	"io"

	"github.com/ldd-tools/tune/internal/export"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/traceout"
)

// TraceOutput is where tune trace's tasks go in the formats tune-full draws: the table (text) or a
// Parquet file that appears whole or not at all (JSON is tracecmd.RunJSON's, in either binary).
type TraceOutput struct {
	// Writer receives the tasks (traceout.Read): the concrete writer, so that the read can see what it
	// keeps (traceout.KeepsNoTask).
	Writer traceout.TaskWriter
	out    io.Writer
	errOut io.Writer
	logs   int
	table  *TraceRows
	pq     *export.TaskParquetFile
}

// NewTraceOutput starts the output of format on out (parquet: the file path, replaced only with
// force; its note goes to errOut). logs is how many logs are read: several add a Log column.
func NewTraceOutput(format string, out, errOut io.Writer, path string, force bool, logs int) (*TraceOutput, error) {
	o := &TraceOutput{out: out, errOut: errOut, logs: logs}
	switch format {
	case "parquet":
		pq, err := export.CreateTaskParquetFile(path, force)
		if err != nil {
			return nil, err
		}
		o.pq, o.Writer = pq, pq.TaskParquet
	default:
		o.table = NewTraceRows(logs > 1)
		o.Writer = o.table
	}
	return o, nil
}

// Render draws the text view's table and summary once the read has ended; the other formats have
// written everything already.
func (o *TraceOutput) Render(res *traceout.Result) error {
	if o.table == nil {
		return nil
	}
	if err := o.table.Render(o.out); err != nil {
		return err
	}
	termtable.Fprintln(o.out, TraceSummary(o.table.Tasks(), res.Lines, res.NWarn, res.Tails, o.logs))
	return nil
}

// Commit puts the Parquet file in place and says how many tasks it holds. Without Commit, Abort
// leaves no file; it does nothing once committed, and nothing for the other formats.
func (o *TraceOutput) Commit() error {
	if o.pq == nil {
		return nil
	}
	if err := o.pq.Commit(); err != nil {
		return err
	}
	Wrote(o.errOut, o.pq.Rows, "task", o.pq.Path)
	return nil
}

// Abort removes an uncommitted Parquet file.
func (o *TraceOutput) Abort() {
	if o.pq != nil {
		o.pq.Abort()
	}
}
