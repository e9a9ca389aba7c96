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

// A log of unlabelled tasks makes ReadWindow widen its read only up to maxWindowRead tasks, never to
// the whole log; labelled tasks before them are then out of the window.
func TestReadWindowStopsWidening(t *testing.T) {
	var b strings.Builder
	b.WriteString("2026-05-01T00:00:00Z  meta  L2/deliberate  task=labelled\n")
	for i := range maxWindowRead + 5000 {
		b.WriteString("2026-05-01T00:00:01Z  meta  task=u")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\n")
	}
	p := filepath.Join(t.TempDir(), "trace.log")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ReadWindow(p, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tasks) != maxWindowRead || res.Tasks[0].Level != "" {
		t.Errorf("%d tasks, first %+v", len(res.Tasks), res.Tasks[0])
	}
}
