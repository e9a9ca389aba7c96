package export_test

import (
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/export"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/transcript"
)

// discardDays is an export.Output that writes nowhere.
type discardDays struct{}

func (discardDays) Open(string) (io.Writer, error) { return io.Discard, nil }
func (discardDays) Ready(string) error             { return nil }
func (discardDays) Commit(string) error            { return nil }
func (discardDays) Abort(string)                   {}

// BenchmarkPartitionHeap measures the live heap of a partitioned export after 50,000 requests
// spread over 1, 30 or 365 days (docs/decisions.md#parquet-exports): in order of day (the audit's
// way: each day's file is finished when the next starts) and, for 30 days, in any order (every
// day's file open at once). It reports bytes, not a time:
//
//	go test ./internal/export -run '^$' -bench PartitionHeap -benchtime 1x
func BenchmarkPartitionHeap(b *testing.B) {
	const n = 50000
	for _, c := range []struct {
		days    int
		ordered bool
	}{{1, true}, {30, true}, {365, true}, {30, false}} {
		b.Run(fmt.Sprintf("days=%d/ordered=%v", c.days, c.ordered), func(b *testing.B) {
			for range b.N {
				before := testutil.LiveHeap()
				p := export.NewPartitionedRequests(discardDays{})
				p.InDayOrder = c.ordered
				t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
				var peak uint64
				for i := range n {
					day := i % c.days
					if c.ordered {
						day = i * c.days / n
					}
					at := t0.AddDate(0, 0, day)
					r := &transcript.Request{Session: fmt.Sprintf("%08d-0000-0000-0000-000000000000", i/100), Project: "-home-me-shop-api",
						Model: "claude-opus-4-6", MessageID: fmt.Sprintf("msg_01%022d", i), RequestID: fmt.Sprintf("req_011C%020d", i),
						First: at, Last: at, UsageTime: at, OutputTokens: 100, CacheReadTokens: 90000,
						File: fmt.Sprintf("/home/me/.claude/projects/-home-me-shop-api/%08d-0000-0000-0000-000000000000.jsonl", i/100)}
					if err := p.Write(r, audit.Cost{}); err != nil {
						b.Fatal(err)
					}
					if i%(n/10) == n/10-1 {
						peak = max(peak, testutil.LiveHeap())
					}
				}
				b.ReportMetric(float64(peak-before)/1e6, "peakHeapMB")
				if err := p.Close(); err != nil {
					b.Fatal(err)
				}
				runtime.KeepAlive(p)
			}
		})
	}
}
