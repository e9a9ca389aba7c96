package regular

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Limit is the most bytes tune reads from one kind of file it did not write itself (or that a pull
// request can replace). A file over its limit is refused before it is read, and the read itself stops one
// byte past the limit, so a file that grows while it is read (or lies in its size) cannot make tune hold
// more. The numbers and why: docs/decisions.md#hostile-files-issue-25.
type Limit struct {
	Kind  string // "a weights file", "tune.toml", … (for the message)
	Bytes int64
}

// The limits per kind. Each is far above what tune writes (a weights version is ~2 KB, a suite fixture
// file ~5 KB, a proposal ~3 KB, a saved report input ~40 KB for a thousand tasks) and far below what
// would hurt a 2 GB CI runner even at the parsers' ~7× of the input.
var (
	WeightsFile = Limit{"a weights version file", 256 << 10}
	ConfigFile  = Limit{"a config file (tune.toml)", 64 << 10}
	FixtureFile = Limit{"a fixture file", 4 << 20}
	// FixtureTotal bounds the fixture files together (suite, harvested, holdout; ~50 KB as shipped, a
	// harvested fixture ~1 KB): no count of files within FixtureFile may make a replay hold gigabytes.
	FixtureTotal  = Limit{"the fixtures together (suite, harvested and holdout)", 16 << 20}
	ProposalFile  = Limit{"a proposal file", 4 << 20}
	ProposalInput = Limit{"a saved report input", 32 << 20}
	ReportFile    = Limit{"a report", 16 << 20}
	// StoreLog is the evolution log: it grows by ~1 KB an attempt, so 64 MiB is tens of thousands of runs.
	StoreLog = Limit{"the evolution log", 64 << 20}
	// StoreSmall is weights.sum, evolution.head and the crash marker.
	StoreSmall = Limit{"a store bookkeeping file", 1 << 20}
	// DetectState bounds the nightly caches (weights/.cache/detect-state.json, watch-state.json): a
	// few bytes per task counted or moved, ~2 MB for a year of a busy log.
	DetectState = Limit{"a nightly cached state", 64 << 20}
	// SmallText is a small file the user hands tune beside its inputs (.gitignore, a price table).
	SmallText = Limit{"a text file", 64 << 20}
)

// TooLargeError refuses a file over its Limit.
type TooLargeError struct {
	Path  string
	Size  int64 // what was seen: the stat size, or Limit+1 when the read went past the limit
	Limit Limit
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: %s holds at most %s; this one has %s: refusing to read it", e.Path, e.Limit.Kind, sizeText(e.Limit.Bytes), sizeText(e.Size))
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadLimited reads the whole regular file at path (following a symbolic link, see Open) when it holds
// at most lim.Bytes.
func ReadLimited(path string, lim Limit) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, path, lim)
}

// ReadLimitedNoFollow is ReadLimited that also refuses a symbolic link at path: for the files of the
// store, the fixtures and the reports, which a link could swap for content from outside the project.
func ReadLimitedNoFollow(path string, lim Limit) ([]byte, error) {
	f, err := OpenNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, path, lim)
}

// readAll reads f (opened from path) up to lim, refusing more.
func readAll(f *os.File, path string, lim Limit) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > lim.Bytes {
		return nil, &TooLargeError{Path: path, Size: fi.Size(), Limit: lim}
	}
	// Sized by the stat, as os.ReadFile does: io.ReadAll grows from 512 bytes by doubling, and on the
	// store's larger files (a log or a proposal of a year's evidence, hundreds of kilobytes) the copies
	// and the fresh pages they touch were a fifth of a `tune score`.
	data := make([]byte, 0, fi.Size()+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // the file grew since the stat
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if int64(len(data)) > lim.Bytes {
			break
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(data)) > lim.Bytes {
		return nil, &TooLargeError{Path: path, Size: lim.Bytes + 1, Limit: lim}
	}
	return data, nil
}

// OpenLock opens (creating it, 0644) a lock file for flock: never through a symbolic link (a link at
// weights/.nightly.lock to ../.git/index.lock would make tune create git's lock) and only a regular file
// (a FIFO would block the open, and a device is no lock). O_NONBLOCK keeps the open of a FIFO from
// hanging; the opened file is checked with fstat.
func OpenLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0o644)
	if errors.Is(err, fs.ErrPermission) {
		// another user's lock file, readable only: flock needs no write access (a note cannot be left)
		f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		if isLoop(err) {
			return nil, &Error{Path: path, What: "a symbolic link"}
		}
		return nil, err
	}
	return checkOpened(path, f)
}

// isLoop reports the error open(2) gives for O_NOFOLLOW on a symbolic link.
func isLoop(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK)
}
