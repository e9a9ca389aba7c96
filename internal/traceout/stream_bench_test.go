package traceout_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/traceout"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/traceparse/tracegen"
)

// BenchmarkStreamJSONL is `tune trace --last 0 --format jsonl` on a generated 8 MB log without the
// process around it: the log read from a file, streamed, and every task written as JSON Lines to
// io.Discard. MB/s are of the log. read=kept reads as a caller that keeps tasks would
// (a new batch each time); read=transient reuses batches, as `tune trace` does for JSON.
func BenchmarkStreamJSONL(b *testing.B) {
	var gen bytes.Buffer
	if _, err := tracegen.Write(&gen, 8<<20, tracegen.DefaultTail); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "bench.log")
	if err := os.WriteFile(path, gen.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		opts []traceparse.Option
	}{{"read=kept", nil}, {"read=transient", []traceparse.Option{traceparse.Transient()}}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(gen.Len()))
			b.ReportAllocs()
			cpu := testutil.CPUTime()
			for b.Loop() {
				w := traceout.NewTaskJSONL(io.Discard)
				if _, err := traceparse.StreamLog(path, w.Task, nil, c.opts...); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(traceparse.LineCounts{}, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
			testutil.ReportCPU(b, cpu)
		})
	}
}
