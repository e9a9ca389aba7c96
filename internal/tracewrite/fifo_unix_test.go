//go:build unix

package tracewrite

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A trace log that is a FIFO (opened read-write it never blocks, and the entry goes nowhere) is refused
// with nothing written (the trace review: --log to a FIFO exited 0 and the meta line was lost).
func TestAppendRefusesAFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "trace.log")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	if err := Append(fifo, "2026-12-01T10:00:00Z  meta  L0/reflex  task=t"); err == nil || !strings.Contains(err.Error(), "is a FIFO (named pipe), not a regular file") {
		t.Errorf("Append to a FIFO: %v, want a refusal", err)
	}
}
