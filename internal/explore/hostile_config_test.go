package explore

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A tune.toml that is not a regular file (a FIFO, a link to /dev/zero or to nowhere) is hostile input:
// tune score --log must refuse it with an error naming it, as every other reader of tune.toml does,
// not read the directory as no project and log the task with exploration silently off (and the
// parent's tune.toml, if any, in its place) (docs/decisions.md#fourth-review-the-watch-state-and-explore).
func TestReadConfigRefusesSpecialFiles(t *testing.T) {
	for name, make := range map[string]func(path string) error{
		"fifo":         func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"/dev/zero":    func(p string) error { return os.Symlink("/dev/zero", p) },
		"dangling":     func(p string) error { return os.Symlink(filepath.Join(filepath.Dir(p), "gone.toml"), p) },
		"a directory?": nil,
	} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			// A parent project that explores: it must not stand in for the refused file.
			if err := os.WriteFile(filepath.Join(parent, "tune.toml"), []byte("[explore]\nshare = 0.2\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			root := filepath.Join(parent, "p")
			sub := filepath.Join(root, "sub")
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(root, "tune.toml")
			if make == nil {
				// A directory named tune.toml marks nothing: the parent's file applies.
				if err := os.Mkdir(path, 0o755); err != nil {
					t.Fatal(err)
				}
				if c, err := ReadConfig(sub, ""); err != nil || c.Share != 0.2 {
					t.Fatalf("a directory named tune.toml: %+v %v", c, err)
				}
				return
			}
			if err := make(path); err != nil {
				t.Skip(err)
			}
			c, err := ReadConfig(sub, "")
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("read %+v, error %v: want an error naming %s", c, err, path)
			}
		})
	}
}
