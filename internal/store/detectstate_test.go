package store

import (
	"os"
	"path/filepath"
	"testing"
)

// The detection's cache: written whole, read back, ignored by git, a killed write's temp file cleared by
// the next write, and nothing read through a link (a cache is hostile input like every file).
func TestDetectStateFile(t *testing.T) {
	dir := t.TempDir()
	if got := ReadDetectState(dir); got != nil {
		t.Fatalf("no state yet, read %q", got)
	}
	cache := filepath.Join(dir, CacheDir)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(cache, "."+DetectStateFile+".tmp-123")
	if err := os.WriteFile(stale, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteDetectState(dir, []byte("state")); err != nil {
		t.Fatal(err)
	}
	if got := string(ReadDetectState(dir)); got != "state" {
		t.Errorf("read back %q", got)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the killed write's temp file is still there: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(cache, ".gitignore")); err != nil || string(data) != "*\n" {
		t.Errorf(".gitignore %q, %v", data, err)
	}
	outside := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(outside, []byte("not ours"), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(cache, DetectStateFile)
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, state); err != nil {
		t.Fatal(err)
	}
	if got := ReadDetectState(dir); got != nil {
		t.Errorf("read %q through a link", got)
	}
}
