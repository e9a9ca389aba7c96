package regular

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// FileLock is an exclusive advisory lock (flock) on a lock file opened with OpenLock. Written here rather
// than with gofrs/flock because that library opens the path with a plain O_CREATE: it follows a symbolic
// link (and creates its target) and blocks on a FIFO, past any timeout.
type FileLock struct{ f *os.File }

// TryLock takes the lock at path, polling every 20 ms for up to wait (once when wait <= 0). It returns
// (nil, nil) when another process still holds it after wait, and an error when the path cannot be a lock
// file (a symbolic link, a FIFO, a device: see OpenLock).
func TryLock(path string, wait time.Duration) (*FileLock, error) {
	f, err := OpenLock(path)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return &FileLock{f: f}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, &os.PathError{Op: "flock", Path: path, Err: err}
		}
		if !time.Now().Before(deadline) {
			f.Close()
			return nil, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// noteMax bounds what Note reads: a lock file is anyone's to fill.
const noteMax = 64

// Note is the short note the lock file holds (what SetNote wrote; at most 64 bytes read), nil when none.
// The lock's holder reads it: a writer leaves the next one a hint (the trace log's last stamp).
func (l *FileLock) Note() []byte {
	b := make([]byte, noteMax)
	n, _ := l.f.ReadAt(b, 0)
	return b[:n]
}

// SetNote replaces the lock file's note with b. Only the holder writes it.
func (l *FileLock) SetNote(b []byte) error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt(b, 0)
	return err
}

// Unlock releases the lock (closing the file releases the flock).
func (l *FileLock) Unlock() error { return l.f.Close() }

// Held reports whether another process holds the lock at path (an exclusive flock). It never creates the
// file and never blocks: a missing, linked or non-regular path counts as not held.
func Held(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	return false // closing the file releases the shared lock
}
