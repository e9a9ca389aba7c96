// Package atomicfile is tune's one file writer: every file tune writes (weights store, proposals,
// reports, state dumps) goes through Write, so a reader or a crash sees either the old file or the
// whole new one, never half of it. See docs/decisions.md, "Architecture and output (issue 15)".
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Modes: files are readable by everyone (they are reviewed, diffed and committed) unless the data is
// private.
const (
	Public  fs.FileMode = 0o644
	Private fs.FileMode = 0o600
)

// Write writes data to path: a temp file in the same directory → fsync → chmod perm → rename → fsync
// the directory. os.WriteFile alone could leave a truncated file behind after a crash. The directory
// must exist.
func Write(path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmpName := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmpName, path); err != nil {
		return err
	}
	ok = true
	return SyncDir(dir)
}

// SyncDir makes a rename in dir durable. Some file systems refuse fsync on a directory; that is not an
// error worth failing a write for, since the rename itself has happened.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	_ = d.Sync()
	return nil
}
