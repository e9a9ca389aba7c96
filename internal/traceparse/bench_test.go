package traceparse_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/traceparse/tracegen"
)

// BenchmarkParse measures full-parse throughput (MB/s) on a generated 32 MB log held in memory.
// The reference Python reader runs at about 2 MB/s on the same machine.
func BenchmarkParse(b *testing.B) {
	var buf bytes.Buffer
	if _, err := tracegen.Write(&buf, 32<<20, tracegen.DefaultTail); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := traceparse.Parse(bytes.NewReader(data), "bench.log"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadLast reads the last 20 tasks of a 1 MB log and of a large one ending with the same 20
// tasks: the two must cost about the same. The large log is 30 MB, or 300 MB with TUNE_BENCH_BIG=1.
func BenchmarkReadLast(b *testing.B) {
	big := int64(30 << 20)
	if os.Getenv("TUNE_BENCH_BIG") == "1" {
		big = 300 << 20
	}
	dir := b.TempDir()
	for _, size := range []int64{1 << 20, big} {
		path := filepath.Join(dir, fmt.Sprintf("trace-%dMB.log", size>>20))
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tracegen.Write(f, size, tracegen.DefaultTail); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := traceparse.ReadLast(path, tracegen.DefaultTail)
				if err != nil || len(res.Tasks) != tracegen.DefaultTail {
					b.Fatalf("%v, %d tasks", err, len(res.Tasks))
				}
			}
		})
	}
}
