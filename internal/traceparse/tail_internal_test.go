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

// A tail that reaches a log's first meta line reads the lines before it only when they are all
// skipped lines (then they are that task's, and the whole log is read): a log whose meta lines follow a
// long legacy part (entries without meta lines, legacy tasks of their own) keeps the tail read, which
// stops at the legacy part's last entry.
func TestATailReachingTheFirstTaskReadsOnlyWhatItNeeds(t *testing.T) {
	metas := "2026-05-01T00:00:00Z  meta  L1/diagnostic  task=a\n2026-05-01T00:00:01Z  inner  k=1  loss=0.5\n" +
		"2026-05-02T00:00:00Z  meta  L2/deliberate  task=b\n"
	var legacy bytes.Buffer
	for legacy.Len() < 1<<20 {
		legacy.WriteString("2026-04-20T19:57:58Z  inner  k=1  skill=a  loss=1\n")
	}
	for _, c := range []struct {
		name   string
		prefix string
		first  bool
		most   int64 // bytes read at most
	}{
		{"a legacy part", legacy.String(), false, 2 * firstTailBlock},
		{"skipped lines", "0\nnot a trace line\n\n# a note\n", true, 1 << 10},
		{"nothing", "", false, 1 << 10},
	} {
		data := []byte(c.prefix + metas)
		r := &countingReaderAt{r: bytes.NewReader(data)}
		start, first, err := tailStart(r, int64(len(data)), 2, DefaultMaxLineBytes)
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(len(c.prefix)); start != want || first != c.first || r.bytes.Load() > c.most {
			t.Errorf("%s: start %d, first %v, %d bytes read; want %d, %v, at most %d", c.name, start, first, r.bytes.Load(), want, c.first, c.most)
		}
	}
}
