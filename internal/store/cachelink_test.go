package store

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// weights/.cache is written by a pull request like the rest of weights/: a link there to a directory
// elsewhere must not make a night write its caches (and a .gitignore) there, nor remove that
// directory's dot-temp-named files, nor read a state from there (docs/decisions.md#fourth-review-the-watch-state-and-explore).
func TestCacheDirLinkIsRefused(t *testing.T) {
	for _, c := range []struct {
		file  string
		read  func(string) []byte
		write func(string, []byte) error
	}{{DetectStateFile, ReadDetectState, WriteDetectState}, {WatchStateFile, ReadWatchState, WriteWatchState}} {
		t.Run(c.file, func(t *testing.T) {
			dir, elsewhere := t.TempDir(), t.TempDir()
			victim := filepath.Join(elsewhere, ".keep.tmp-1")
			if err := os.WriteFile(victim, []byte("not a temp of tune's"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(elsewhere, c.file), []byte("planted"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, filepath.Join(dir, CacheDir)); err != nil {
				t.Fatal(err)
			}
			if got := c.read(dir); got != nil {
				t.Errorf("read %q through a linked cache directory", got)
			}
			if err := c.write(dir, []byte("state")); err == nil {
				t.Errorf("wrote through a linked cache directory")
			}
			if _, err := os.Stat(victim); err != nil {
				t.Errorf("a file of the linked directory was removed: %v", err)
			}
			if data, _ := os.ReadFile(filepath.Join(elsewhere, c.file)); string(data) != "planted" {
				t.Errorf("the linked directory's %s is now %q", c.file, data)
			}
			if _, err := os.Lstat(filepath.Join(elsewhere, ".gitignore")); err == nil {
				t.Errorf("a .gitignore was written into the linked directory")
			}
		})
	}
}

// A FIFO in place of a state file is no state, read without blocking.
func TestCacheFileFIFOIsNoState(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, CacheDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file string
		read func(string) []byte
	}{{DetectStateFile, ReadDetectState}, {WatchStateFile, ReadWatchState}} {
		if err := syscall.Mkfifo(filepath.Join(dir, CacheDir, c.file), 0o644); err != nil {
			t.Skip(err)
		}
		done := make(chan []byte, 1)
		go func() { done <- c.read(dir) }()
		select {
		case got := <-done:
			if got != nil {
				t.Errorf("%s: read %q from a FIFO", c.file, got)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the read of a FIFO blocks", c.file)
		}
	}
}
