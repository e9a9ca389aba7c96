// Package faultpoint names the moments a file operation of tune can be interrupted, so that a test can
// kill a real tune process exactly there (docs/decisions.md#crash-injection-in-a-real-process). An atomic
// write (internal/atomicfile) reaches, in order: Create (its temp file exists, empty), Write (before each
// write into the temp file), Fsync (the temp file holds the whole content, not yet synced), Rename (synced,
// not yet renamed) and DirSync (renamed, the directory not yet synced). The weights store reaches Remove
// before it deletes a file and DirSync before it syncs the directory after a removal.
//
// Production code never sets a hook: Reach is one atomic load and a nil check, and builds nothing. Only
// the cli package's test binary installs one (from TUNE_TEST_KILL_AT), so a kill point cannot be reached
// from a released binary.
package faultpoint

import "sync/atomic"

// The operations, as a hook sees them.
const (
	Create  = "create"
	Write   = "write"
	Fsync   = "fsync"
	Rename  = "rename"
	DirSync = "dirsync"
	Remove  = "remove"
)

// Ops lists every operation, in the order an atomic write reaches them (Remove last).
var Ops = []string{Create, Write, Fsync, Rename, DirSync, Remove}

// Hook is called at every fault point with the operation and the path it is about.
type Hook func(op, path string)

var hook atomic.Pointer[Hook]

// Set installs h (nil removes it). Tests only.
func Set(h Hook) {
	if h == nil {
		hook.Store(nil)
		return
	}
	hook.Store(&h)
}

// Reach marks a fault point: op (one of Ops) on path.
func Reach(op, path string) {
	if h := hook.Load(); h != nil {
		(*h)(op, path)
	}
}
