package traceparse

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCountLinesUsesTheReadersTerminators(t *testing.T) {
	dir := t.TempDir()
	split := strings.Repeat("a", 1<<20-1) + "\r\n" // a CRLF across the 1 MiB read boundary
	for _, c := range []struct {
		text string
		want int
	}{
		{"a\nb\nc", 2},
		{"a\r\nb\rc\n", 3},
		{"\r\r\n\n", 3},
		{split + "x\n", 2},
		{strings.Repeat("z", 1<<20) + "\n\n", 2},
	} {
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := countLines(p, int64(len(c.text)))
		if err != nil || got != c.want {
			t.Errorf("countLines(%q…) = %d, %v; want %d", c.text[:min(len(c.text), 12)], got, err, c.want)
		}
	}
}
