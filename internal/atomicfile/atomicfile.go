// Package atomicfile is tune's one file writer: every file tune writes (weights store, proposals,
// reports, state dumps) goes through Write, so a reader or a crash sees either the old file or the
// whole new one, never half of it. See docs/decisions.md, "Architecture and output (issue 15)".
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ldd-tools/tune/internal/faultpoint"
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
	f, err := Create(path, perm, true)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// SyncDir makes a rename (or a removal) in dir durable. Some file systems refuse fsync on a directory;
// that is not an error worth failing a write for, since the rename itself has happened. It is fault
// point "dirsync" on dir.
func SyncDir(dir string) error {
	faultpoint.Reach(faultpoint.DirSync, dir)
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	_ = d.Sync()
	return nil
}

// ErrExists is returned by Create for a path that exists when replacing it was not asked for.
var ErrExists = errors.New("exists")

// File is a file being written in place of path, for output too large to hold in memory (Parquet and
// JSON Lines exports): the bytes go to a temp file in path's directory, and only Commit makes them
// path, whole. Until then, and whatever happens to the writer (a full disk, a crash, an Abort), no
// file or a previous one stands under path.
type File struct {
	path, tmpName string
	perm          fs.FileMode
	replace       bool
	tmp           *os.File
	w             io.Writer // tmp, or a test's fault injection
	ready         bool      // Ready succeeded: the temp file is durable and closed
	done          bool
}

// Create starts writing path. Without replace, a path that exists is refused (ErrExists) now and
// again at Commit, which never overwrites it then. The directory must exist.
func Create(path string, perm fs.FileMode, replace bool) (*File, error) {
	return CreateIn(filepath.Dir(path), path, perm, replace)
}

// CreateIn is Create with the temp file in tmpDir, which must be on path's file system; path's own
// directory need only exist at Commit. A partitioned export keeps its unfinished files out of the
// partition directories this way, so that a killed run leaves no partition directory behind that
// looks like a day without rows. The temp file is hidden and its name does not end in the target's
// extension (".NAME.tmp-123", or ".DIR.NAME.tmp-123" outside path's directory), so that globs such as
// "*/*.parquet" never read it.
func CreateIn(tmpDir, path string, perm fs.FileMode, replace bool) (*File, error) {
	if !replace {
		if _, err := os.Lstat(path); err == nil {
			return nil, fmt.Errorf("%s %w (give --force to replace it)", path, ErrExists)
		}
	}
	dir := filepath.Dir(path)
	pattern := "." + filepath.Base(path) + ".tmp-*"
	if filepath.Clean(tmpDir) != filepath.Clean(dir) {
		pattern = "." + filepath.Base(dir) + pattern
		dir = tmpDir
	}
	tmp, err := os.CreateTemp(dir, pattern)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("write %s: no directory %s", path, dir)
		}
		return nil, fmt.Errorf("write %s: %w", path, osErr(err))
	}
	f := &File{path: path, tmpName: tmp.Name(), perm: perm, replace: replace, tmp: tmp, w: tmp}
	if wrapWriter != nil {
		f.w = wrapWriter(tmp)
	}
	faultpoint.Reach(faultpoint.Create, path)
	return f, nil
}

// wrapWriter lets this package's tests put a failing writer (a full disk) between File and its temp.
var wrapWriter func(io.Writer) io.Writer

// Path is the file's final name.
func (f *File) Path() string { return f.path }

// Write writes to the temp file; an error names the final path.
func (f *File) Write(p []byte) (int, error) {
	faultpoint.Reach(faultpoint.Write, f.path)
	n, err := f.w.Write(p)
	if err != nil {
		err = fmt.Errorf("write %s: %w", f.path, osErr(err))
	}
	return n, err
}

// osErr is err without the *fs.PathError around it, whose path is the temp file's: the errors of a
// File name its final path (the one the user gave), and the cause.
func osErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Ready makes the written bytes durable without naming them path yet: fsync, chmod, close. After it
// only Commit (which then just names the file) or Abort may follow. A writer of several files (a
// partitioned export) makes them all Ready before committing any, so that a full disk or a failed
// fsync commits none of them. On an error the file is aborted.
func (f *File) Ready() error {
	if f.done {
		return fmt.Errorf("%s: already committed or aborted", f.path)
	}
	if f.ready {
		return nil
	}
	err := f.ready1()
	if err != nil {
		f.Abort()
		return err
	}
	f.ready = true
	return nil
}

func (f *File) ready1() error {
	faultpoint.Reach(faultpoint.Fsync, f.path)
	if err := f.tmp.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", f.path, osErr(err))
	}
	if err := f.tmp.Chmod(f.perm); err != nil {
		return fmt.Errorf("chmod %s: %w", f.path, osErr(err))
	}
	if err := f.tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", f.path, osErr(err))
	}
	return nil
}

// Commit makes the written bytes path: fsync, chmod (Ready, unless done already), then rename
// (replace) or link (no replace, which fails rather than overwrite a file that appeared meanwhile),
// then fsync the directory.
func (f *File) Commit() error {
	if err := f.Ready(); err != nil {
		return err
	}
	f.done = true
	ok := false
	defer func() {
		if !ok {
			os.Remove(f.tmpName)
		}
	}()
	faultpoint.Reach(faultpoint.Rename, f.path)
	if f.replace {
		if err := os.Rename(f.tmpName, f.path); err != nil {
			return err
		}
	} else {
		if err := os.Link(f.tmpName, f.path); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%s %w (give --force to replace it)", f.path, ErrExists)
			}
			return err
		}
		faultpoint.Reach(faultpoint.Remove, f.path) // the temp name of a linked file
		os.Remove(f.tmpName)
	}
	ok = true
	// named after the file, not its directory, so a kill point reads "dirsync v0002.toml"
	faultpoint.Reach(faultpoint.DirSync, f.path)
	return syncDir(filepath.Dir(f.path))
}

// Abort drops the written bytes; path is left as it was. It may follow a failed Commit, and does
// nothing after a successful one.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	if !f.ready {
		f.tmp.Close()
	}
	os.Remove(f.tmpName)
}
