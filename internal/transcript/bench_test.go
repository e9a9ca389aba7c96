package transcript

import (
	"bytes"
	"os"
	"testing"

	"github.com/ldd-tools/tune/internal/testutil"
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

// BenchmarkParseUsageLines is the field reader alone on the sample's usage lines (3 MB, in memory),
// as tune audit --ccusage reads them: the part of a scan that is not I/O or byte search.
func BenchmarkParseUsageLines(b *testing.B) {
	files, err := Discover([]string{testdataRoot})
	if err != nil {
		b.Fatal(err)
	}
	var lines [][]byte
	var size int64
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			if hasInputTokens(l) {
				lines = append(lines, l)
				size += int64(len(l))
			}
		}
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var lf lineFields
	cpu := testutil.CPUTime()
	for b.Loop() {
		for _, l := range lines {
			if err := parseLineOpts(l, &lf, nil, true); err != nil {
				b.Fatal(err)
			}
		}
	}
	testutil.ReportCPU(b, cpu)
}
