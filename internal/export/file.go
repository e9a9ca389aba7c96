package export

import (
	"fmt"
	"os"

	"github.com/ldd-tools/tune/internal/atomicfile"
	"github.com/ldd-tools/tune/internal/regular"
)

// CreateFile starts the file an export writes (--out): a temp file beside it that only a complete
// export renames into place, so a failure (an unwritable directory, a full disk, an interrupted run)
// never leaves a partial file under the final name; an existing file is refused unless force. Whatever
// force says, only a regular file is replaced: the rename would put the export in place of a device
// (as root, --out /dev/null --force replaced the system's /dev/null), a FIFO or a link.
func CreateFile(path string, force bool) (*atomicfile.File, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.IsDir() {
			return nil, fmt.Errorf("--out %s is a directory: name the file to write", path)
		}
		if k := regular.Kind(fi.Mode()); k != "" {
			return nil, fmt.Errorf("--out %s is %s: an export replaces a regular file only (--force too); name a file", path, k)
		}
	}
	f, err := atomicfile.Create(path, atomicfile.Public, force)
	if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	return f, nil
}

// TaskParquetFile is `tune trace --format parquet`'s file: the tasks' Parquet written to CreateFile's
// temp file, which appears whole under Path on Commit or not at all.
type TaskParquetFile struct {
	*TaskParquet
	Path string
	file *atomicfile.File
}

// CreateTaskParquetFile starts the Parquet file of tasks at path (an existing file is replaced only
// with force).
func CreateTaskParquetFile(path string, force bool) (*TaskParquetFile, error) {
	f, err := CreateFile(path, force)
	if err != nil {
		return nil, err
	}
	return &TaskParquetFile{TaskParquet: NewTaskParquet(f), Path: path, file: f}, nil
}

// Commit puts the file in place (its rows are written: TaskParquet.Close); Abort then does nothing.
func (f *TaskParquetFile) Commit() error { return f.file.Commit() }

// Abort removes the file unless it was committed.
func (f *TaskParquetFile) Abort() { f.file.Abort() }
