// Package faultpoint names the moments a file operation of tune can be interrupted, so that a test can
// kill a real tune process exactly there (docs/decisions.md#crash-injection-in-a-real-process). Every
// atomic write reaches "create" (its temp file exists, empty) and "rename" (the temp file holds the whole
// new content, synced, not yet renamed); the weights store reaches "remove" before it deletes a file.
//
// Production code never sets a hook: Reach is one nil check. Only the cli package's test binary installs
// one (from TUNE_TEST_KILL_AT), so the kill point cannot be reached from a released binary.
package faultpoint

import "sync/atomic"

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

// Reach marks a fault point: op ("create", "rename", "remove") on path.
func Reach(op, path string) {
	if h := hook.Load(); h != nil {
		(*h)(op, path)
	}
}
