package transcript

import (
	"fmt"
	"strings"
	"testing"
)

// A line over the cap is skipped as too-long while it is read (the buffer never holds it), counted, and
// reading goes on with the next line; also at the end of the input without a newline, and inside a
// pretty-printed record.
func TestLineCapSkipsLongLines(t *testing.T) {
	long := strings.Repeat("x", 5000)
	cases := []struct {
		in      string
		records int
		skipped []string
	}{
		{"{\"a\":1}\n" + long + "\n{\"b\":2}\n", 2, []string{"2:too-long"}},
		{"{\"a\":1}\n{\"" + long + "\":1}\n{\"b\":2}\n", 2, []string{"2:too-long"}},
		{"{\"a\":1}\n" + long, 1, []string{"2:too-long"}},
		{"{\n  \"a\": 1,\n" + long + "\n}\n{\"b\":2}\n", 1, []string{"1:truncated", "3:too-long", "4:not-object"}},
	}
	for i, c := range cases {
		lr := NewLineReader(strings.NewReader(c.in), 0)
		lr.MaxLine = 1000
		var skipped []string
		lr.OnSkip = func(line, lines int, reason string) { skipped = append(skipped, fmt.Sprintf("%d:%s", line, reason)) }
		n := 0
		for {
			_, _, ok := lr.Next()
			if !ok {
				break
			}
			n++
		}
		if n != c.records || strings.Join(skipped, " ") != strings.Join(c.skipped, " ") {
			t.Errorf("case %d: %d records, skipped %v; want %d, %v", i, n, skipped, c.records, c.skipped)
		}
		if len(lr.buf) > 8192 {
			t.Errorf("case %d: the buffer grew to %d bytes for a line over a 1000-byte cap", i, len(lr.buf))
		}
	}
}
