package export

import (
	"io"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/transcript"
)

// Parquet is written with github.com/parquet-go/parquet-go: the maintained successor of
// segmentio/parquet-go, pure Go, with a generic row writer that takes Go structs (schema from struct
// tags: lists, optional columns, timestamp logical types) and flushes a row group at a time, so rows
// stream through it; its output is read by DuckDB, Spark, Trino and pyarrow. The older
// xitongsys/parquet-go needs a schema string per column and is no longer developed.
// Hand-writing Parquet (Thrift footers, page encodings, compression) was never an option.
// See docs/decisions.md#parquet-exports.

// RowGroupRows is the most rows a row group holds: a writer buffers one row group, so this bounds its
// memory (a task row is a few hundred bytes, a request row about 300), while groups stay large enough
// for engines to skip by their statistics.
const RowGroupRows = 64 << 10

func parquetOptions() []parquet.WriterOption {
	return []parquet.WriterOption{
		parquet.Compression(&parquet.Zstd),
		parquet.MaxRowsPerRowGroup(RowGroupRows),
		parquet.CreatedBy("tune", "", ""),
		parquet.PageBufferSize(PageBufferBytes),
	}
}

// PageBufferBytes is the page buffer of each column: pages are compressed when it fills, and a row
// group is held as compressed pages until it is written. The library's default, 256 KB, made the
// trace export's peak RSS grow with the log (143 MB on a 256 MB log); 64 KB keeps it flat, for files
// a few percent larger (docs/decisions.md#parquet-exports has the numbers).
const PageBufferBytes = 64 << 10

// SignalRow is one name:weight pair of a task's signals.
type SignalRow struct {
	Name   string  `parquet:"name"`
	Weight float64 `parquet:"weight"`
}

// TaskRow is one task of a trace log as a Parquet row: the columns are the JSON field names of
// `tune trace --json`'s tasks, without the per-line iterations but with their counts (iteration_count,
// k); meta_timestamp is a timestamp (UTC, microseconds), null when the log's text is not RFC 3339.
type TaskRow struct {
	Source             string      `parquet:"source,dict"`
	Line               int64       `parquet:"line"`
	Offset             int64       `parquet:"offset"`
	MetaTimestamp      *time.Time  `parquet:"meta_timestamp,optional,timestamp(microsecond)"`
	Legacy             bool        `parquet:"legacy"`
	Level              string      `parquet:"level,dict"`
	Dispatch           string      `parquet:"dispatch,dict"`
	Creativity         string      `parquet:"creativity,dict"`
	Signals            []SignalRow `parquet:"signals,list"`
	WeightsVersion     string      `parquet:"weights_version,dict"`
	Task               string      `parquet:"task"`
	Loops              []string    `parquet:"loops,list"`
	LoopsUsed          []string    `parquet:"loops_used,list"`
	Closed             bool        `parquet:"closed"`
	Terminal           string      `parquet:"terminal,dict"`
	LossFinal          *float64    `parquet:"loss_final,optional"`
	LossFinalFrom      string      `parquet:"loss_final_from,dict"`
	RegressionFollowed bool        `parquet:"regression_followed"`
	RegressionOf       string      `parquet:"regression_of"`
	// Explore, ExploreLevel and ExploreShare are the recorded [explore] draw, "" when none.
	Explore      string   `parquet:"explore,dict"`
	ExploreLevel string   `parquet:"explore_level,dict"`
	ExploreShare string   `parquet:"explore_share,dict"`
	Files        []string `parquet:"files,list"`
	// IterationCount and K count its iteration lines, all and those that are not baselines, summarised
	// ones included (traceparse.Task.Iterations): what the JSON's iterations list gives, for the
	// queries that need k (dispatch accuracy) without reading the lines.
	IterationCount int64 `parquet:"iteration_count"`
	K              int64 `parquet:"k"`
	// Omitted is null unless the task was summarised past its bound (docs/decisions.md#bounded-memory-per-task).
	Omitted *OmittedRow `parquet:"omitted,optional"`
}

// OmittedRow is traceparse.Omitted: what a task past its bound read but did not keep.
type OmittedRow struct {
	Line       int64 `parquet:"line"`
	Offset     int64 `parquet:"offset"`
	Entries    int64 `parquet:"entries"`
	Iterations int64 `parquet:"iterations"`
	Baselines  int64 `parquet:"baselines"`
	Departures int64 `parquet:"departures"`
	Files      int64 `parquet:"files"`
}

// TaskRowOf converts a task.
func TaskRowOf(t *traceparse.Task) TaskRow {
	row := TaskRow{
		Source: t.Source, Line: int64(t.Line), Offset: t.Offset, Legacy: t.Legacy, Level: t.Level,
		Dispatch: t.Dispatch, Creativity: t.Creativity, WeightsVersion: t.WeightsVersion, Task: t.Title,
		Loops: t.Loops, LoopsUsed: t.LoopsUsed, Closed: t.Closed, Terminal: t.Terminal, LossFinal: t.LossFinal,
		LossFinalFrom: t.LossFinalFrom, RegressionFollowed: t.RegressionFollowed, RegressionOf: t.RegressionOf,
		Explore: t.Explore, ExploreLevel: t.ExploreLevel, ExploreShare: t.ExploreShare, Files: t.Files,
	}
	all, k := t.Iterations()
	row.IterationCount, row.K = int64(all), int64(k)
	if !t.MetaTime.IsZero() {
		ts := t.MetaTime.UTC()
		row.MetaTimestamp = &ts
	}
	for _, s := range t.Signals {
		row.Signals = append(row.Signals, SignalRow{Name: s.Name, Weight: s.Weight.Float()})
	}
	if o := t.Omitted; o != nil {
		row.Omitted = &OmittedRow{Line: int64(o.Line), Offset: o.Offset, Entries: int64(o.Entries), Iterations: int64(o.Iterations),
			Baselines: int64(o.Baselines), Departures: int64(o.Departures), Files: int64(o.Files)}
	}
	return row
}

// rows writes Parquet rows of type T one at a time; the library buffers them into row groups.
type rows[T any] struct {
	w    *parquet.GenericWriter[T]
	row  [1]T
	Rows int64 // rows written
}

func newRows[T any](w io.Writer) rows[T] {
	return rows[T]{w: parquet.NewGenericWriter[T](w, parquetOptions()...)}
}

func (p *rows[T]) write(v T) error {
	p.row[0] = v
	_, err := p.w.Write(p.row[:])
	p.Rows++
	return err
}

// TaskParquet writes tasks as Parquet rows (a TaskWriter). Close writes the footer; it does not close w.
type TaskParquet struct{ rows[TaskRow] }

// NewTaskParquet returns a TaskParquet writing to w.
func NewTaskParquet(w io.Writer) *TaskParquet { return &TaskParquet{newRows[TaskRow](w)} }

// Task implements TaskWriter.
func (p *TaskParquet) Task(t *traceparse.Task) error { return p.write(TaskRowOf(t)) }

// Close implements TaskWriter: line counts and warnings are not rows (they go to stderr).
func (p *TaskParquet) Close(traceparse.LineCounts, []traceparse.Warning, []traceparse.Tail) error {
	return p.w.Close()
}

// RequestRow is one deduplicated request of a transcript audit as a Parquet row: the columns of
// `tune audit --format jsonl` (audit.RowHeader), with first and last as timestamps (UTC,
// milliseconds), token counts as 64-bit integers and cost_usd null where the model has no price.
type RequestRow struct {
	Session               string    `parquet:"session,dict"`
	Project               string    `parquet:"project,dict"`
	Class                 string    `parquet:"class,dict"`
	AgentID               string    `parquet:"agent_id,dict"`
	Model                 string    `parquet:"model,dict"`
	Effort                string    `parquet:"effort,dict"`
	EffortSource          string    `parquet:"effort_source,dict"`
	Version               string    `parquet:"version,dict"`
	Speed                 string    `parquet:"speed,dict"`
	MessageID             string    `parquet:"message_id"`
	RequestID             string    `parquet:"request_id"`
	First                 time.Time `parquet:"first,timestamp(millisecond)"`
	Last                  time.Time `parquet:"last,timestamp(millisecond)"`
	InputTokens           int64     `parquet:"input_tokens"`
	OutputTokens          int64     `parquet:"output_tokens"`
	CacheCreationTokens   int64     `parquet:"cache_creation_input_tokens"`
	CacheCreation5mTokens int64     `parquet:"cache_creation_5m_input_tokens"`
	CacheCreation1hTokens int64     `parquet:"cache_creation_1h_input_tokens"`
	CacheReadTokens       int64     `parquet:"cache_read_input_tokens"`
	ThinkingTokens        int64     `parquet:"thinking_tokens"`
	ThinkingSource        string    `parquet:"thinking_source,dict"`
	ThinkingBlocks        int32     `parquet:"thinking_blocks"`
	File                  string    `parquet:"file,dict"`
	CostUSD               *float64  `parquet:"cost_usd,optional"`
}

// RequestRowOf converts a request; cost_usd is c (audit.Price's, priced once by the caller), null when
// the model has no price.
func RequestRowOf(r *transcript.Request, c audit.Cost) RequestRow {
	var cost *float64
	if usd, ok := c.USD(); ok {
		cost = &usd
	}
	return RequestRow{
		CostUSD: cost,
		Session: r.Session, Project: r.Project, Class: r.Class.String(), AgentID: r.AgentID, Model: r.Model,
		Effort: r.Effort, EffortSource: r.EffortSrc.String(), Version: r.Version, Speed: r.Speed,
		MessageID: r.MessageID, RequestID: r.RequestID, First: r.First.UTC(), Last: r.Last.UTC(),
		InputTokens: int64(r.InputTokens), OutputTokens: int64(r.OutputTokens),
		CacheCreationTokens: int64(r.CacheCreationTokens), CacheCreation5mTokens: int64(r.CacheCreation5m),
		CacheCreation1hTokens: int64(r.CacheCreation1h), CacheReadTokens: int64(r.CacheReadTokens),
		ThinkingTokens: int64(r.ThinkingTokens), ThinkingSource: r.ThinkingSrc.String(),
		ThinkingBlocks: int32(r.ThinkingBlocks), File: r.File,
	}
}

// RequestParquet writes requests as Parquet rows. Close writes the footer; it does not close w.
type RequestParquet struct {
	rows[RequestRow]
}

// NewRequestParquet returns a RequestParquet writing to w.
func NewRequestParquet(w io.Writer) *RequestParquet {
	return &RequestParquet{newRows[RequestRow](w)}
}

// Write writes one request with its cost (audit.Price's).
func (p *RequestParquet) Write(r *transcript.Request, cost audit.Cost) error {
	return p.write(RequestRowOf(r, cost))
}

// Close writes the footer.
func (p *RequestParquet) Close() error { return p.w.Close() }
