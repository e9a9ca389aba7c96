package traceparse_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/traceparse"
)

// The reader itself refuses what is not a regular file, so no caller can hang on a FIFO or read
// /dev/zero forever, whether or not it checked the path first (accuracy and watch did not).
func TestReadersRefuseWhatIsNotARegularFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "trace.log")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	readers := map[string]func(path string) error{
		"ReadLast":   func(p string) error { _, err := traceparse.ReadLast(p, 20); return err },
		"ReadLast 0": func(p string) error { _, err := traceparse.ReadLast(p, 0); return err },
		"ReadWindow": func(p string) error { _, err := traceparse.ReadWindow(p, 20); return err },
		"StreamLog": func(p string) error {
			_, err := traceparse.StreamLog(p, func(*traceparse.Task) error { return nil }, nil)
			return err
		},
	}
	for _, path := range []string{fifo, os.DevNull, "/dev/zero"} {
		if _, err := os.Stat(path); err != nil {
			continue
		}
		for name, read := range readers {
			done := make(chan error, 1)
			go func() { done <- read(path) }()
			select {
			case err := <-done:
				var re *regular.Error
				if !errors.As(err, &re) {
					t.Errorf("%s(%s): %v, want a not-a-regular-file error", name, path, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s(%s) hangs", name, path)
			}
		}
	}
}
