package regular

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Eighth review (docs/decisions.md#eighth-review-store-reads-by-content): readAll sizes its buffer by the
// stat, and must still read what the stat did not count and stop at the limit. A pipe's stat says 0
// bytes, as a file that grew after the stat (or a /proc file) would: its content is read whole under the
// limit, refused over it, and an endless writer is read no further than the limit (plus one read).
func TestReview8ReadAllDoesNotTrustTheStat(t *testing.T) {
	pipe := func(t *testing.T, write func(*os.File)) *os.File {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		go func() {
			write(w)
			w.Close()
		}()
		if fi, err := r.Stat(); err != nil || fi.Size() != 0 {
			t.Fatalf("a pipe's stat: %v %v", fi, err)
		}
		return r
	}
	content := bytes.Repeat([]byte("0123456789abcdef"), 5000) // 80,000 bytes: more than one pipe buffer
	r := pipe(t, func(w *os.File) { w.Write(content) })
	if data, err := readAll(r, "pipe", Limit{"a test file", int64(len(content))}); err != nil || !bytes.Equal(data, content) {
		t.Fatalf("under the limit: %d bytes, %v", len(data), err)
	}
	r = pipe(t, func(w *os.File) { w.Write(content) })
	var big *TooLargeError
	if _, err := readAll(r, "pipe", Limit{"a test file", int64(len(content)) - 1}); !errors.As(err, &big) {
		t.Fatalf("one byte over: %v", err)
	}
	r = pipe(t, func(w *os.File) {
		for {
			if _, err := w.Write(content); err != nil {
				return // the reader closed
			}
		}
	})
	if _, err := readAll(r, "pipe", Limit{"a test file", 1 << 20}); !errors.As(err, &big) {
		t.Fatalf("endless: %v", err)
	}
	// a zero-size file reads as empty, not as an error
	p := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadLimitedNoFollow(p, Limit{"a test file", 10}); err != nil || len(data) != 0 {
		t.Fatalf("empty: %q %v", data, err)
	}
}
