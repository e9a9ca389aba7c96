// Package regular opens input files only when they are regular files. A FIFO, a device (/dev/zero), a
// socket or a directory given where tune expects a file would otherwise make a reader block forever on
// open (a FIFO without a writer) or read without end (/dev/zero); here they are refused with an error that
// names the path and what it is. See docs/decisions.md#store-integrity-and-hostile-inputs-issue-18.
//
// Open follows symbolic links (a trace log may be a link); OpenNoFollow refuses them too, for the files of
// the weights store, whose contents a link could silently swap for a file outside the store.
package regular

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// Error says why a path was refused.
type Error struct {
	Path string
	What string // "a FIFO", "a device", "a socket", "a directory", "a symbolic link", …
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file: tune opens only regular files", e.Path, e.What)
}

// Kind names the type of a file mode for messages ("a FIFO", "a device", …); "" for a regular file.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file (mode " + m.String() + ")"
}

// Check returns an *Error when fi is not a regular file.
func Check(path string, fi fs.FileInfo) error {
	if k := Kind(fi.Mode()); k != "" {
		return &Error{Path: path, What: k}
	}
	return nil
}

// Open opens path for reading when it is (or links to) a regular file. It opens without blocking, so a
// FIFO with no writer is refused instead of hanging, and checks the opened file itself (fstat), so a
// path swapped between a check and the open cannot slip through.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return checkOpened(path, f)
}

// OpenAppend opens path for appending (created when missing, perm) when it is, or links to, a regular
// file: a FIFO opened read-write never blocks and swallows what is written, a device takes it
// elsewhere. The path is checked before the open (opening a device can act) and the opened file after.
func OpenAppend(path string, perm fs.FileMode) (*os.File, error) {
	if fi, err := os.Stat(path); err == nil {
		if err := Check(path, fi); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, err
	}
	return checkOpened(path, f)
}

// checkOpened checks the file itself once it is open (fstat), closing it when it is not a regular file.
func checkOpened(path string, f *os.File) (*os.File, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := Check(path, fi); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenNoFollow is Open that also refuses a symbolic link at path (the link itself, not what it points to).
func OpenNoFollow(path string) (*os.File, error) {
	li, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if err := Check(path, li); err != nil {
		return nil, err
	}
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !os.SameFile(li, fi) {
		f.Close()
		return nil, &Error{Path: path, What: "a file that was replaced while it was opened"}
	}
	return f, nil
}

// CheckPath returns an *Error when path exists and is not (a link to) a regular file, and the os error
// when it cannot be inspected. It does not open the file, so a FIFO cannot block it: for commands that
// hand a path to a reader they do not own (the trace reader opens its logs itself).
func CheckPath(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return Check(path, fi)
}
