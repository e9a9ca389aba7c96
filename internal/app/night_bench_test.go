package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/weights"
)

// BenchmarkNight is issue 28's cost item as a Go benchmark (compare runs with benchstat; TestNightCost
// times whole processes with their peak RSS): on a log of TUNE_BENCH_MB megabytes (default 16) made by
// the project's trace generator, one op is
//   - accuracy: a whole-log `tune accuracy`, the yardstick;
//   - nightly-full: a night with no nightly state (it reads and decides from every task of the log);
//   - nightly-from-state: the same night again, starting from the state the previous run left, which
//     reads only the tasks after what that state counted for good (docs/decisions.md#nightly-state);
//   - nightly-from-state-applied: the same with a version applied (layer-crossings +1), which the
//     watch judges from its own state.
//
// Besides the wall time, each reports cpu-ns/op: the process's CPU time (user + system, every goroutine)
// per op, which the shared machine's load moves far less than the wall time.
//
// The targets are ratios: nightly-full within 2× accuracy, nightly-from-state a small fraction.
func BenchmarkNight(b *testing.B) {
	dir := b.TempDir()
	if err := testutil.CopyReference(dir); err != nil {
		b.Fatal(err)
	}
	log := writeGeneratedLog(b, dir, envMB(b, "TUNE_BENCH_MB", 16))
	now := time.Date(2027, 1, 2, 3, 0, 0, 0, time.UTC) // a day after the log's last task: every task settled
	env := Env{Now: func() time.Time { return now }, WeightsDir: filepath.Join(dir, "weights"),
		FixturesDir: filepath.Join(dir, "fixtures"), ReportsDir: filepath.Join(dir, "reports")}
	night := func(b *testing.B) {
		if _, err := Nightly(env, EvolveOptions{Logs: []string{log}}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("accuracy", func(b *testing.B) {
		defer reportCPU(b, processCPU())
		for b.Loop() {
			if _, err := Accuracy(env, []string{log}, 100000); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("nightly-full", func(b *testing.B) {
		defer reportCPU(b, processCPU())
		for b.Loop() {
			b.StopTimer()
			if err := os.RemoveAll(filepath.Join(env.WeightsDir, store.CacheDir)); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			night(b)
		}
	})
	b.Run("nightly-from-state", func(b *testing.B) {
		night(b) // leaves the state
		defer reportCPU(b, processCPU())
		for b.Loop() {
			night(b)
		}
	})
	// With a version applied the watch judges it too, from its own state (docs/decisions.md#watch-state).
	applyByHand(b, env, now, weights.LayerCrossings)
	now = now.Add(time.Hour)
	b.Run("nightly-from-state-applied", func(b *testing.B) {
		night(b) // the first night after the apply reads in full and leaves the states
		defer reportCPU(b, processCPU())
		for b.Loop() {
			night(b)
		}
	})
}

// reportCPU reports the process's CPU time since start per op (nothing where processCPU is 0).
func reportCPU(b *testing.B, start time.Duration) {
	if used := processCPU() - start; used > 0 && b.N > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
