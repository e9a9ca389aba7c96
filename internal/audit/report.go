package audit

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/ldd-tools/tune/internal/transcript"
)

// Input describes what was read, for the report's header and the JSON "skipped" object.
type Input struct {
	// Prices says where the prices come from (the table's source), for the text output.
	Prices   string
	Files    int
	Bytes    int64
	Sessions int
	Lines    transcript.LineCounts
	Skipped  map[string]int
	Warnings []transcript.Warning
	// Unreadable are the files left out because they could not be read.
	Unreadable []transcript.FileError
}

// InputOf summarises a scan.
func InputOf(res *transcript.Result) Input {
	in := Input{Files: len(res.Files), Bytes: res.Bytes, Lines: res.Lines, Skipped: res.Skipped, Warnings: res.Warnings, Unreadable: res.Unreadable}
	for _, s := range res.Sessions {
		if s.Requests > 0 {
			in.Sessions++
		}
	}
	return in
}

// skipReasons lists every skip reason, so that JSON output always has the same keys.
var skipReasons = []string{
	transcript.ReasonNotObject, transcript.ReasonTruncated, transcript.ReasonMalformed,
	transcript.ReasonInvalidUsage, transcript.ReasonNoTimestamp, transcript.ReasonInvalidField,
	transcript.ReasonNullField, transcript.ReasonTooLong,
}

// SkippedCounts returns the skip counts with every reason present.
func SkippedCounts(m map[string]int) map[string]int {
	out := make(map[string]int, len(skipReasons))
	for _, r := range skipReasons {
		out[r] = m[r]
	}
	for r, n := range m {
		out[r] = n
	}
	return out
}

// timeFormat is Claude Code's own timestamp format (UTC, milliseconds).
const timeFormat = "2006-01-02T15:04:05.000Z"

// RowHeader is the column list of the per-request CSV and JSONL rows, and of the Parquet export's
// export.RequestRow (TestRequestRowIsTheAuditRow in internal/export ties the two, names and values).
var RowHeader = []string{
	"session", "project", "class", "agent_id", "model", "effort", "effort_source", "version", "speed",
	"message_id", "request_id", "first", "last", "input_tokens", "output_tokens", "cache_creation_input_tokens",
	"cache_creation_5m_input_tokens", "cache_creation_1h_input_tokens", "cache_read_input_tokens",
	"thinking_tokens", "thinking_source", "thinking_blocks", "file", "cost_usd",
}

func row(r *transcript.Request, c Cost) []any {
	var cost any // null (JSONL) or empty (CSV) when the model has no price
	if usd, ok := c.USD(); ok {
		cost = usd
	}
	return []any{
		r.Session, r.Project, r.Class.String(), r.AgentID, r.Model, r.Effort, r.EffortSrc.String(), r.Version, r.Speed,
		r.MessageID, r.RequestID, r.First.UTC().Format(timeFormat), r.Last.UTC().Format(timeFormat),
		r.InputTokens, r.OutputTokens, r.CacheCreationTokens, r.CacheCreation5m, r.CacheCreation1h, r.CacheReadTokens,
		r.ThinkingTokens, r.ThinkingSrc.String(), r.ThinkingBlocks, r.File, cost,
	}
}

// RowWriter writes one row per request as "csv" (with a header) or "jsonl" (one object per line,
// keys as RowHeader, in that order). Both are meant for DuckDB and the like.
type RowWriter struct {
	format string
	w      io.Writer
	csv    *csv.Writer
	rec    []string
	buf    bytes.Buffer
}

// NewRowWriter starts writing rows (the CSV header at once).
func NewRowWriter(w io.Writer, format string) (*RowWriter, error) {
	rw := &RowWriter{format: format, w: w}
	switch format {
	case "csv":
		rw.csv = csv.NewWriter(w)
		rw.rec = make([]string, len(RowHeader))
		return rw, rw.csv.Write(RowHeader)
	case "jsonl":
		return rw, nil
	}
	return nil, fmt.Errorf("unknown row format %q (want csv or jsonl)", format)
}

// Write writes one request; cost (Price's, priced once by the caller) fills the cost_usd column.
func (rw *RowWriter) Write(r *transcript.Request, cost Cost) error {
	if rw.csv != nil {
		for j, v := range row(r, cost) {
			switch v := v.(type) {
			case nil:
				rw.rec[j] = ""
			case float64:
				rw.rec[j] = strconv.FormatFloat(v, 'f', -1, 64)
			default:
				rw.rec[j] = fmt.Sprint(v)
			}
		}
		return rw.csv.Write(rw.rec)
	}
	// Built by hand to keep RowHeader's column order (a map would be sorted).
	b := &rw.buf
	b.Reset()
	b.WriteByte('{')
	for j, v := range row(r, cost) {
		if j > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(RowHeader[j])
		val, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteString("}\n")
	_, err := rw.w.Write(b.Bytes())
	return err
}

// Close flushes buffered rows.
func (rw *RowWriter) Close() error {
	if rw.csv != nil {
		rw.csv.Flush()
		return rw.csv.Error()
	}
	return nil
}
