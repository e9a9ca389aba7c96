package export_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/export"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/transcript"
)

// A summarised task's Omitted comes back from the Parquet file; other tasks read it as null.
func TestTaskParquetOmitted(t *testing.T) {
	var log bytes.Buffer
	log.WriteString("2026-05-01T00:00:00Z  meta  L1/diagnostic  task=small\n2026-05-01T00:00:01Z  inner  k=1  loss=0.5\n")
	log.WriteString("2026-05-01T00:01:00Z  meta  L2/deliberate  task=big\n")
	for k := 1; k <= 50; k++ {
		fmt.Fprintf(&log, "2026-05-01T00:01:01Z  inner  k=%d  loss=0.5\n", k)
	}
	res, err := traceparse.Parse(bytes.NewReader(log.Bytes()), "t.log", traceparse.MaxTaskEntries(10, 0))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := export.NewTaskParquet(&out)
	for i := range res.Tasks {
		if err := w.Task(&res.Tasks[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(res.Lines, nil, nil); err != nil {
		t.Fatal(err)
	}
	rows, err := parquet.Read[export.TaskRow](bytes.NewReader(out.Bytes()), int64(out.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].IterationCount != 1 || rows[0].K != 1 || rows[1].IterationCount != 50 || rows[1].K != 50 {
		t.Errorf("iteration counts %d/%d and %d/%d, want 1/1 and 50/50 (summarised ones count)", rows[0].IterationCount, rows[0].K, rows[1].IterationCount, rows[1].K)
	}
	o := res.Tasks[1].Omitted
	if len(rows) != 2 || rows[0].Omitted != nil || rows[1].Omitted == nil || o == nil ||
		*rows[1].Omitted != (export.OmittedRow{Line: int64(o.Line), Offset: o.Offset, Entries: 40, Iterations: 40}) {
		t.Fatalf("rows %+v, omitted %+v", rows, o)
	}
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	bytes.Buffer
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) { c.n += len(p); return c.Buffer.Write(p) }

// TestRowGroupsWhileStreaming: a writer holds at most one row group: once RowGroupRows rows are in, a
// row group reaches the output before Close, and the file has groups of at most RowGroupRows rows.
func TestRowGroupsWhileStreaming(t *testing.T) {
	var out countingWriter
	w := export.NewRequestParquet(&out)
	at := time.Date(2026, 2, 10, 12, 0, 0, 0, time.UTC)
	n := 2*export.RowGroupRows + 10
	var flushedAt int
	for i := range n {
		r := transcript.Request{Session: "s", Model: "claude-opus-4-6", First: at, Last: at, UsageTime: at, OutputTokens: uint64(i)}
		if err := w.Write(&r, audit.Cost{}); err != nil {
			t.Fatal(err)
		}
		if flushedAt == 0 && out.n > 0 {
			flushedAt = i + 1
		}
	}
	if flushedAt == 0 || flushedAt > export.RowGroupRows+1 {
		t.Fatalf("first bytes written after %d of %d rows, want by row %d", flushedAt, n, export.RowGroupRows+1)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(out.Bytes()), int64(out.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != int64(n) || len(f.RowGroups()) != 3 {
		t.Fatalf("%d rows in %d row groups", f.NumRows(), len(f.RowGroups()))
	}
	for _, rg := range f.RowGroups() {
		if rg.NumRows() > export.RowGroupRows {
			t.Errorf("a row group of %d rows", rg.NumRows())
		}
	}
}
