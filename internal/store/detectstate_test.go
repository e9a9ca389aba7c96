package store

import (
	"os"
	"path/filepath"
	"testing"
)

// The nightly caches (the detection's, the watch's): written whole, read back, ignored by git, a killed
// write's temp file cleared by the next write, and nothing read through a link (a cache is hostile input
// like every file).
func TestDetectStateFile(t *testing.T) {
	for _, c := range []struct {
		file  string
		read  func(string) []byte
		write func(string, []byte) error
	}{{DetectStateFile, ReadDetectState, WriteDetectState}, {WatchStateFile, ReadWatchState, WriteWatchState}} {
		t.Run(c.file, func(t *testing.T) { testCacheFile(t, c.file, c.read, c.write) })
	}
}

func testCacheFile(t *testing.T, file string, read func(string) []byte, write func(string, []byte) error) {
	dir := t.TempDir()
	if got := read(dir); got != nil {
		t.Fatalf("no state yet, read %q", got)
	}
	cache := filepath.Join(dir, CacheDir)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(cache, "."+file+".tmp-123")
	if err := os.WriteFile(stale, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := write(dir, []byte("state")); err != nil {
		t.Fatal(err)
	}
	if got := string(read(dir)); got != "state" {
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
	state := filepath.Join(cache, file)
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, state); err != nil {
		t.Fatal(err)
	}
	if got := read(dir); got != nil {
		t.Errorf("read %q through a link", got)
	}
}
