package app

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ldd-tools/tune/internal/atomicfile"
	"github.com/ldd-tools/tune/internal/export"
)

// CreateExport starts the file an export writes (--out): a temp file beside it that only a complete
// export renames into place, so a failure (an unwritable directory, a full disk, an interrupted run)
// never leaves a partial file under the final name; an existing file is refused unless force.
func CreateExport(path string, force bool) (*atomicfile.File, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("--out %s is a directory: name the file to write", path)
	}
	f, err := atomicfile.Create(path, atomicfile.Public, force)
	if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	return f, nil
}

// dayFiles is export.Output for a Hive-partitioned export under root: ROOT/day=YYYY-MM-DD/requests.parquet,
// each written as CreateExport writes one file. Days already there are left alone unless rewritten,
// which needs force, so a nightly job can add a day at a time. A day (or the root) whose directory
// this export made is removed again when the day is aborted, so a failed export leaves no empty
// day=… directory, which Hive and Trino would list as a day without requests.
type dayFiles struct {
	root  string
	force bool
	// made are the directories this export made for root, deepest first (root, its parent, …)
	made    []string
	files   map[string]*atomicfile.File
	created map[string]bool // the day's directory was made by this export
}

func newDayFiles(root string, force bool) (*dayFiles, error) {
	if fi, err := os.Stat(root); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("--out %s is a file; --partition-by day writes a directory of day=YYYY-MM-DD partitions", root)
	}
	var made []string
	for dir := filepath.Clean(root); ; dir = filepath.Dir(dir) {
		if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) || dir == filepath.Dir(dir) {
			break
		}
		made = append(made, dir)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	return &dayFiles{root: root, force: force, made: made, files: map[string]*atomicfile.File{}, created: map[string]bool{}}, nil
}

func (d *dayFiles) path(day string) string {
	return filepath.Join(d.root, export.PartitionDir(day), export.PartitionFile)
}

func (d *dayFiles) Open(day string) (io.Writer, error) {
	path := d.path(day)
	dir := filepath.Dir(path)
	if _, err := os.Lstat(dir); err != nil {
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, fmt.Errorf("--out: %w", err)
		}
		d.created[day] = true
	}
	f, err := CreateExport(path, d.force)
	if err != nil {
		d.removeDir(day)
		if errors.Is(err, atomicfile.ErrExists) {
			err = fmt.Errorf("--out: day %s was exported already (%s): nothing was written; export other days with --since/--until, or give --force to replace it", day, path)
		}
		return nil, err
	}
	d.files[day] = f
	return f, nil
}

func (d *dayFiles) Ready(day string) error  { return d.files[day].Ready() }
func (d *dayFiles) Commit(day string) error { return d.files[day].Commit() }

// Abort drops the day's file, and its directory when this export made it (and nothing else is
// in it); it does nothing to a committed day.
func (d *dayFiles) Abort(day string) {
	d.files[day].Abort()
	d.removeDir(day)
}

func (d *dayFiles) removeDir(day string) {
	if d.created[day] {
		if os.Remove(filepath.Dir(d.path(day))) == nil { // fails when not empty: a committed day
			delete(d.created, day)
		}
	}
}

// abortRoot removes the root and its parents that this export made, as long as they are empty
// (every day aborted).
func (d *dayFiles) abortRoot() {
	for _, dir := range d.made {
		if os.Remove(dir) != nil {
			return
		}
	}
}
