package store

import (
	"sync"
)

// SharedReads is one read of a store shared by the Stores of a run (OpenSharing). A night opens the
// store about twenty times — the watch, the active weights, the ledger, the watermark, the refuted
// raises — and each read verifies the store again (docs/decisions.md#store-reads-by-content). A shared
// read is reused while the store directory and its bookkeeping files are as they were when it was read
// (quiet.go's fingerprint: inode, size and modification time of the directory, the log, the anchor, the
// sum and the marker). Every write by tune is an atomic rename or removal there that changes the log, the
// anchor, the sum or the marker, so a write by this run or by another tune process makes the next read a
// fresh one; what it cannot see is a file edited in place during the run by something else, which a
// fresh read in the middle of a run would catch only by chance and `tune verify` always does.
// Writes never use it: a mutation reads the store fresh under the lock. The zero value is ready; a nil
// *SharedReads reads fresh every time.
type SharedReads struct {
	mu  sync.Mutex
	dir string
	fp  string
	st  *state
	// checked says readable() ran on st; checkErr is what it gave.
	checked  bool
	checkErr error
}

// load is loadState (readable false) or loadReadable (readable true), shared when r is not nil.
func (r *SharedReads) load(dir string, readable bool) (*state, error) {
	if r == nil {
		if readable {
			return loadReadable(dir)
		}
		return loadState(dir)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fp := fingerprint(dir)
	if r.st == nil || r.dir != dir || r.fp != fp {
		st, err := loadState(dir)
		if err != nil {
			return nil, err
		}
		if fingerprint(dir) != fp {
			// written while it was read (quietly read it again until it was not): keep nothing
			if readable {
				return loadReadable(dir)
			}
			return st, nil
		}
		r.dir, r.fp, r.st, r.checked = dir, fp, st, false
	}
	if readable && !r.checked {
		r.checked, r.checkErr = true, r.st.readable()
	}
	if readable && r.checkErr != nil {
		return nil, r.checkErr
	}
	return r.st, nil
}
