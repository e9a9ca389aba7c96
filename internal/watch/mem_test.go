package watch

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// BenchmarkBuilderHeap measures what a Builder holds per task of each kind (docs/decisions.md#watch-memory):
// a kept task (one the change moved, after the version: its row and title), a low-side task before
// the version (open only for its horizon, then counted: docs/decisions.md#the-watch-settles-a-task-after-the-detections-horizon),
// a task only counted, and a task that names another with regression_of= (nothing kept). It reports the
// live heap per task after a GC, not a time:
//
//	go test ./internal/watch -run '^$' -bench BuilderHeap -benchtime 1x
func BenchmarkBuilderHeap(b *testing.B) {
	p, v := versions(b)
	in := Input{Version: Version{v, applied}, Parent: Version{p, parentFrom}, Changes: []string{"contract-rule-hit +1"}}
	const n = 100000
	for _, kind := range []string{"kept", "before", "counted", "naming"} {
		b.Run(kind, func(b *testing.B) {
			for range b.N {
				bl := NewBuilder(in)
				before := testutil.LiveHeap()
				for i := range n {
					at := applied.Add(time.Duration(i) * time.Second)
					if kind == "before" {
						at = parentFrom.Add(time.Duration(i) * time.Second)
					}
					task := traceparse.Task{Source: "/home/user/project/.ldd/trace.log", Line: 3*i + 1, MetaTimestamp: at.Format(time.RFC3339Nano),
						MetaTime: at, Level: "L1", Closed: true, HasSignals: true, Dispatch: "auto",
						Title: fmt.Sprintf("fix the flaky retry in the payment webhook handler %d", i)}
					task.Signals = []weights.SignalWeight{{Name: "greenfield"}}
					switch kind {
					case "kept":
						task.Level = "L2"
						task.Signals = []weights.SignalWeight{{Name: "contract-rule-hit"}, {Name: "explicit-bugfix"}, {Name: "unknown-file-territory"}}
					case "before":
						task.Signals = []weights.SignalWeight{{Name: "explicit-bugfix"}}
					case "naming":
						task.RegressionOf = applied.Add(-time.Duration(i+1) * time.Second).Format(time.RFC3339Nano)
					}
					bl.Add(&task)
				}
				after := testutil.LiveHeap()
				runtime.KeepAlive(bl)
				b.ReportMetric(float64(int64(after)-int64(before))/n, "heapB/task")
			}
		})
	}
}
