package app

import (
	"fmt"
	"io"
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
// which needs force, so a nightly job can add a day at a time.
type dayFiles struct {
	root  string
	force bool
	files map[string]*atomicfile.File
}

func newDayFiles(root string, force bool) (*dayFiles, error) {
	if fi, err := os.Stat(root); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("--out %s is a file; --partition-by day writes a directory of day=YYYY-MM-DD partitions", root)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	return &dayFiles{root: root, force: force, files: map[string]*atomicfile.File{}}, nil
}

func (d *dayFiles) path(day string) string {
	return filepath.Join(d.root, export.PartitionDir(day), export.PartitionFile)
}

func (d *dayFiles) Open(day string) (io.Writer, error) {
	path := d.path(day)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	f, err := CreateExport(path, d.force)
	if err != nil {
		return nil, err
	}
	d.files[day] = f
	return f, nil
}

func (d *dayFiles) Commit(day string) error { return d.files[day].Commit() }
func (d *dayFiles) Abort(day string)        { d.files[day].Abort() }
