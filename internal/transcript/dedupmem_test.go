package transcript

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/ldd-tools/tune/internal/testutil"
)

// BenchmarkDedupHeap measures what the audit's exact deduplication keeps per request once its
// session group is done (docs/decisions.md#audit-memory-per-request): the growth of the live heap
// after a GC, per request, of the Deduper of TestRetainedPerRequest (100,000 requests in 1,000
// sessions, three streamed lines each, realistic ids), without the ids (a Sink scan: text, --json,
// --report) and with them (rows written at the end: --format csv|jsonl|parquet). It reports bytes,
// not a time, next to the Deduper's own accounting (retainedB/request, which that test bounds):
//
//	go test ./internal/transcript -run '^$' -bench DedupHeap -benchtime 1x
func BenchmarkDedupHeap(b *testing.B) {
	for _, keepIDs := range []bool{false, true} {
		b.Run(fmt.Sprintf("ids=%v", keepIDs), func(b *testing.B) {
			for range b.N {
				before := testutil.LiveHeap()
				d := realisticDeduper(keepIDs)
				after := testutil.LiveHeap()
				n := float64(d.Len())
				b.ReportMetric(float64(int64(after)-int64(before))/n, "heapB/request")
				b.ReportMetric(float64(d.retained())/n, "retainedB/request")
				runtime.KeepAlive(d)
			}
		})
	}
}
