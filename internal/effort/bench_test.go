package effort

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ldd-tools/tune/internal/transcript"
)

var sampleRoot = filepath.Join("..", "..", "testdata", "transcripts")

func osOpen(name string) (io.ReadCloser, error) { return os.Open(name) }

// BenchmarkObserve is tune effort's transcript pass on the 21 sample files (17 MB); compare its MB/s
// with BenchmarkScan, the audit's pass over the same files (make bench; benchstat).
func BenchmarkObserve(b *testing.B) {
	files, err := transcript.Discover([]string{sampleRoot})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(transcript.TotalSize(files))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Observe(files, Options{Open: osOpen}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScan is the audit's streaming pass (transcript.Scan with an aggregating sink) on the
// same files, the reference for BenchmarkObserve.
func BenchmarkScan(b *testing.B) {
	files, err := transcript.Discover([]string{sampleRoot})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(transcript.TotalSize(files))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := transcript.Scan(files, transcript.Options{Sink: nopSink{}}); err != nil {
			b.Fatal(err)
		}
	}
}

type nopSink struct{}

func (nopSink) Add(*transcript.Request)    {}
func (nopSink) Remove(*transcript.Request) {}
