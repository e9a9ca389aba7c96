package regular

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// DirError refuses a directory tune would write into that is not a real directory (a symbolic link
// could take every write outside the project: a pull request can commit `reports -> /somewhere`).
type DirError struct {
	Path string
	What string // "a symbolic link", "a FIFO (named pipe)", …
}

func (e *DirError) Error() string {
	return fmt.Sprintf("%s is %s, not a directory: tune reads and writes only real directories inside the project (replace it with a directory)", e.Path, e.What)
}

// RealDirs checks the directories tune writes into, each named by its path: every one that exists must
// be a directory itself, not a symbolic link to one (the link, not its target, is inspected). A missing
// one is fine: it is created as a real directory. Callers name each level they own (weights,
// weights/proposals, weights/proposals/inputs), since a link at any of them moves what is below it.
// See docs/decisions.md#hostile-files-issue-25.
func RealDirs(paths ...string) error {
	for _, p := range paths {
		// cleaned: Lstat("weights/") follows a link at weights (the second re-review: a trailing slash
		// let readers, writers and verify through a linked store)
		fi, err := os.Lstat(filepath.Clean(p))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return err
		case !fi.IsDir():
			return &DirError{Path: p, What: Kind(fi.Mode())}
		}
	}
	return nil
}
