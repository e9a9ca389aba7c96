package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Readers never take the store lock (score must not wait for a nightly apply, and a checkout may be
// read-only), so a reader can read while a writer runs: the directory listing before a new version, the
// log after its append, an anchor renamed in between. Such a read mixes two states and used to report
// tampering that was not there (79 of 1,749 `tune score` runs during a loop of rollbacks). quietly runs a
// read again until one run started and ended on the same store: every write is an atomic rename or a
// removal in the store directory, so the directory's and the bookkeeping files' inode, size and
// modification time taken before and after a read are the same only when nothing was written during it
// (docs/decisions.md#hostile-files-issue-25).

// settleTimeout bounds how long a reader waits for a quiet store: the lock timeout, the longest a
// writer may hold the store. After it the last read is used as it is.
const settleTimeout = DefaultLockTimeout

// quietly runs read, and again while the store changed during the run.
func quietly(dir string, read func()) {
	quietlyUnless(dir, read, func() bool { return false })
}

// quietlyUnless is quietly that also reads again while busy() says the run saw a writer at work (verify:
// the marker and temp files of an operation that is running, not interrupted, while it holds the lock).
func quietlyUnless(dir string, read func(), busy func() bool) {
	deadline := time.Now().Add(settleTimeout)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		before := fingerprint(dir)
		read()
		if (fingerprint(dir) == before && !busy()) || time.Now().After(deadline) {
			return
		}
		time.Sleep(wait)
	}
}

// fingerprint identifies the state of the store directory and its bookkeeping files: inode, size and
// modification time (nanoseconds) of each, or that it is missing.
func fingerprint(dir string) string {
	var b strings.Builder
	for _, name := range []string{".", LogFile, HeadFile, SumFile, PendingFile} {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			b.WriteString("-;")
			continue
		}
		var ino uint64
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			ino = st.Ino
		}
		fmt.Fprintf(&b, "%d/%d/%d;", ino, fi.Size(), fi.ModTime().UnixNano())
	}
	return b.String()
}
