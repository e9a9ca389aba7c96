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

// dayFiles is export.Output for a Hive-partitioned export under root: ROOT/day=YYYY-MM-DD/requests.parquet.
// A day is written to a hidden temp file in the root (.day=YYYY-MM-DD.requests.parquet.tmp-N, which no
// "*/*.parquet" glob and no Hive reader lists), and its directory is made only when the day is
// committed, so neither a failed export nor a killed one leaves a day=… directory without its file,
// which Hive and Trino would list as a day without requests. Days already there are left alone
// unless rewritten, which needs force, so a nightly job can add a day at a time. A day directory (or
// a root) this export made is removed again if its day is aborted.
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

// Open starts the day's file as a temp file in the root; its directory is made only when the day is
// committed.
func (d *dayFiles) Open(day string) (io.Writer, error) {
	path := d.path(day)
	f, err := atomicfile.CreateIn(d.root, path, atomicfile.Public, d.force)
	if errors.Is(err, atomicfile.ErrExists) {
		err = fmt.Errorf("--out: day %s was exported already (%s): nothing was written; export other days with --since/--until, or give --force to replace it", day, path)
	} else if err != nil {
		err = fmt.Errorf("--out: %w", err)
	}
	if err != nil {
		return nil, err
	}
	d.files[day] = f
	return f, nil
}

func (d *dayFiles) Ready(day string) error { return d.files[day].Ready() }

// Commit makes the day's directory (when missing) and puts its file there. A directory it made is
// removed again if the file cannot be put in place.
func (d *dayFiles) Commit(day string) error {
	dir := filepath.Dir(d.path(day))
	if _, err := os.Lstat(dir); err != nil {
		if err := os.Mkdir(dir, 0o755); err != nil {
			d.files[day].Abort()
			return fmt.Errorf("--out: %w", err)
		}
		d.created[day] = true
	}
	if err := d.files[day].Commit(); err != nil {
		d.removeDir(day)
		return err
	}
	return atomicfile.SyncDir(d.root) // the new day directory's entry
}

// Abort drops the day's file, and its directory when this export made it (and nothing else is in
// it); it does nothing to a committed day.
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
