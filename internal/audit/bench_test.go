package audit

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/ldd-tools/tune/internal/transcript"
)

// BenchmarkAudit is `tune audit --by session` on the 21 sample files (17 MB): discovery, scan and
// dedup, aggregation and the text report. MB/s is the figure to compare (make bench; benchstat).
func BenchmarkAudit(b *testing.B) {
	root := filepath.Join("..", "..", "testdata", "transcripts")
	files, err := transcript.Discover([]string{root})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(transcript.TotalSize(files))
	b.ReportAllocs()
	for b.Loop() {
		files, err := transcript.Discover([]string{root})
		if err != nil {
			b.Fatal(err)
		}
		res, err := transcript.Scan(files, transcript.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := WriteText(io.Discard, Aggregate(res.Requests, BySession), InputOf(res)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompareArms is the A/B statistics of the effort testdata (12 runs, 5 metrics, 1,000
// bootstrap resamples each).
func BenchmarkCompareArms(b *testing.B) {
	arms := effortArms(b)
	for b.Loop() {
		if _, err := CompareArms(arms, ABOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
