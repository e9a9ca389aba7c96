package app

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/transcript"
)

// BenchmarkAuditSample is the whole audit use case (discovery, scan, dedup, pricing, aggregation) on
// the bundled sample transcripts (17 MB) in three views: `tune audit --ccusage daily`, plain
// `tune audit` and `tune audit --by session`. MB/s and cpu-ns/op (user+system time of the process
// per op, which other load on a shared machine disturbs less than wall time) are the figures to
// compare with benchstat.
func BenchmarkAuditSample(b *testing.B) {
	benchAudit(b, []string{"../../testdata/transcripts/spotter/test/fixtures/transcripts"})
}

// BenchmarkAuditCorpus is the same on the generated 1 GB corpus when TUNE_CORPUS names it
// (make corpus-transcripts).
func BenchmarkAuditCorpus(b *testing.B) {
	dir := os.Getenv("TUNE_CORPUS")
	if dir == "" {
		b.Skip("TUNE_CORPUS not set")
	}
	benchAudit(b, []string{dir})
}

func benchAudit(b *testing.B, paths []string) {
	views := []struct {
		name string
		opts AuditOptions
	}{
		{"ccusage-daily", AuditOptions{CCUsage: "daily"}},
		{"default", AuditOptions{}},
		{"by-session", AuditOptions{By: audit.BySession}},
		// The row outputs price each request for its cost_usd column and for the unpriced-model count.
		{"rows-csv", AuditOptions{Format: "csv"}},
		{"rows-parquet", AuditOptions{Format: "parquet", Force: true}},
	}
	for _, v := range views {
		b.Run(v.name, func(b *testing.B) {
			opts := v.opts
			opts.Paths, opts.Location = paths, time.UTC
			if opts.Format == "" {
				opts.Format = "json"
			}
			if opts.Format == "parquet" {
				opts.Out = filepath.Join(b.TempDir(), "requests.parquet")
			}
			var size int64
			hooks := ScanHooks{Scanned: func(r *transcript.Result) { size = r.Bytes }}
			b.ReportAllocs()
			cpu := testutil.CPUTime()
			for b.Loop() {
				if _, err := Audit(noEnv(), opts, io.Discard, hooks); err != nil {
					b.Fatal(err)
				}
			}
			testutil.ReportCPU(b, cpu)
			b.SetBytes(size)
		})
	}
}
