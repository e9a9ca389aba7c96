package export_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/export"
	"github.com/ldd-tools/tune/internal/transcript"
)

// TestRequestRowIsTheAuditRow ties the two definitions of a request row: the Parquet columns of
// export.RequestRow are audit.RowHeader (the csv/jsonl columns) in the same order, and a request
// written both ways carries the same value in every column (times in the jsonl's format, a missing
// price null in both). A column added to one and not the other fails here.
func TestRequestRowIsTheAuditRow(t *testing.T) {
	typ := reflect.TypeFor[export.RequestRow]()
	var cols []string
	for f := range typ.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
		cols = append(cols, name)
	}
	if !reflect.DeepEqual(cols, audit.RowHeader) {
		t.Fatalf("Parquet columns\n%q\nare not audit.RowHeader\n%q", cols, audit.RowHeader)
	}

	at := time.Date(2026, 2, 10, 12, 30, 0, 123e6, time.UTC)
	req := transcript.Request{Session: "s-1", Project: "-home-me-api", Class: transcript.ClassSubagent, AgentID: "a-1",
		Model: "claude-opus-4-6", Effort: "high", EffortSrc: transcript.EffortTranscript, Version: "2.1.3", Speed: "fast",
		MessageID: "msg_1", RequestID: "req_1", First: at, Last: at.Add(time.Second), InputTokens: 1, OutputTokens: 2,
		CacheCreationTokens: 3, CacheCreation5m: 4, CacheCreation1h: 5, CacheReadTokens: 6, ThinkingTokens: 7,
		ThinkingSrc: transcript.ThinkingEstimated, ThinkingBlocks: 8, File: "/p/s-1.jsonl"}
	for _, cost := range []audit.Cost{audit.Price(nil, &req), {Model: "claude-opus-4-6"}} {
		var line bytes.Buffer
		rw, err := audit.NewRowWriter(&line, "jsonl")
		if err != nil {
			t.Fatal(err)
		}
		if err := rw.Write(&req, cost); err != nil {
			t.Fatal(err)
		}
		var jsonl map[string]any
		if err := json.Unmarshal(line.Bytes(), &jsonl); err != nil {
			t.Fatal(err)
		}
		row := reflect.ValueOf(export.RequestRowOf(&req, cost))
		for i, col := range cols {
			if got, want := parquetValue(row.Field(i)), fmt.Sprint(jsonl[col]); got != want {
				t.Errorf("column %s: Parquet %s, jsonl %s", col, got, want)
			}
		}
	}
}

// parquetValue prints a RequestRow field as the jsonl row's value prints once decoded.
func parquetValue(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case time.Time:
		return x.UTC().Format("2006-01-02T15:04:05.000Z")
	case *float64:
		if x == nil {
			return fmt.Sprint(nil)
		}
		return fmt.Sprint(*x)
	case int64, int32:
		return fmt.Sprint(float64(v.Int()))
	}
	return fmt.Sprint(v.Interface())
}
