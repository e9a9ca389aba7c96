package export

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// --out FILE --force replaces a regular file only: the rename put the export in place of a FIFO, a link
// or (as root) a device such as /dev/null (the review of the writing side).
func TestCreateFileReplacesOnlyARegularFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{link: "symbolic link"}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err == nil {
		paths[fifo] = "FIFO"
	}
	for p, kind := range paths {
		if f, err := CreateFile(p, true); err == nil || !strings.Contains(err.Error(), kind) {
			if f != nil {
				f.Abort()
			}
			t.Errorf("--out %s --force: %v, want a refusal naming a %s", filepath.Base(p), err, kind)
		}
		if fi, err := os.Lstat(p); err != nil || fi.Mode().IsRegular() {
			t.Errorf("%s was replaced", filepath.Base(p))
		}
	}
	f, err := CreateFile(target, true)
	if err != nil {
		t.Fatalf("--force over a regular file: %v", err)
	}
	f.Abort()
}
