package transcript

import (
	"os"
	"testing"
)

// BenchmarkScan reads the 21 sample files (17 MB); MB/s is the figure to compare.
func BenchmarkScan(b *testing.B) {
	benchScan(b, testdataRoot)
}

// BenchmarkScanSink reads the sample into a Sink, as tune audit does (requests finalised per session
// group instead of held to the end).
func BenchmarkScanSink(b *testing.B) {
	files, err := Discover([]string{testdataRoot})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(TotalSize(files))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Scan(files, Options{Sink: &tokenSink{}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanCorpus reads the generated corpus when TUNE_CORPUS names it.
func BenchmarkScanCorpus(b *testing.B) {
	dir := os.Getenv("TUNE_CORPUS")
	if dir == "" {
		b.Skip("TUNE_CORPUS not set")
	}
	benchScan(b, dir)
}

func benchScan(b *testing.B, dir string) {
	files, err := Discover([]string{dir})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(TotalSize(files))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Scan(files, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
