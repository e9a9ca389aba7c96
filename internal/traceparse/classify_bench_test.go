package traceparse

import (
	"bytes"
	"testing"

	"github.com/ldd-tools/tune/internal/traceparse/tracegen"
)

// BenchmarkClassify is the per-line work the workers of a parallel read do (tokens, text, fields,
// entry) on the lines of a generated 1 MB log, without the reading and the task segmentation around
// it: the largest share of a streamed `tune trace`'s CPU (docs/decisions.md#streaming-reads).
func BenchmarkClassify(b *testing.B) {
	var buf bytes.Buffer
	if _, err := tracegen.Write(&buf, 1<<20, tracegen.DefaultTail); err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	entries := make([]Entry, len(lines))
	classes := make([]lineClass, len(lines))
	var c classifier
	c.entryMemory.sizeFor(batchSize)
	c.entryMemory.recycling()
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		c.entryMemory.reset()
		for i, l := range lines {
			c.classify(l, &classes[i], &entries[i])
			entries[i] = Entry{}
		}
	}
}
