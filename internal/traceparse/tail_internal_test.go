package traceparse

import (
	"bytes"
	"sync/atomic"
	"testing"

	"github.com/ldd-tools/tune/internal/traceparse/tracegen"
)

type countingReaderAt struct {
	r     *bytes.Reader
	bytes atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.bytes.Add(int64(n))
	return n, err
}

// The tail read's cost grows with the number of tasks wanted, not with the file: the same last 20
// tasks cost the same bytes read in a 256 KB and an 8 MB log.
func TestTailReadCostDoesNotGrowWithTheFile(t *testing.T) {
	read := func(size int64, n int) int64 {
		var buf bytes.Buffer
		if _, err := tracegen.Write(&buf, size, tracegen.DefaultTail); err != nil {
			t.Fatal(err)
		}
		c := &countingReaderAt{r: bytes.NewReader(buf.Bytes())}
		if _, _, err := tailStart(c, int64(buf.Len()), n, DefaultMaxLineBytes); err != nil {
			t.Fatal(err)
		}
		return c.bytes.Load()
	}
	small, big := read(256<<10, 20), read(8<<20, 20)
	if small != big || big > 2*firstTailBlock {
		t.Errorf("last 20 tasks: %d bytes read in 256 KB, %d in 8 MB; want equal and at most %d", small, big, 2*firstTailBlock)
	}
	if more := read(8<<20, 2000); more <= big || more > 4<<20 {
		t.Errorf("last 2000 tasks: %d bytes read; want more than for 20 (%d) and far less than the file", more, big)
	}
}
