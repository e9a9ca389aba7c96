// Package faultpoint names the moments a file operation of tune can be interrupted, so that a test can
// kill a real tune process exactly there (docs/decisions.md#crash-injection-in-a-real-process). An atomic
// write (internal/atomicfile) reaches, in order: Create (its temp file exists, empty), Write (before each
// write into the temp file), Fsync (the temp file holds the whole content, not yet synced), Rename (synced,
// not yet renamed) and DirSync (renamed, the directory not yet synced). The weights store reaches Remove
// before it deletes a file and DirSync before it syncs the directory after a removal, and Step when it has
// finished a write step of a multi-step operation (the path is the step's name: "pending", "version",
// "sum", "log", "done", …).
//
// It is tune's one fault-injection mechanism. Production code never installs a hook: Reach is one atomic
// load and a nil check, and builds nothing, and no production file reads a TUNE_TEST_* variable. Only
// test binaries store one in Installed: the cli package's tune-killable command (from TUNE_TEST_KILL_AT,
// which SIGKILLs the process), and in-process tests that stop an operation with a panic (store, atomicfile).
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
	Step    = "step"
)

// Ops lists every file operation, in the order an atomic write reaches them (Remove last).
var Ops = []string{Create, Write, Fsync, Rename, DirSync, Remove}

// Hook is called at every fault point with the operation and the path it is about.
type Hook func(op, path string)

// Installed is the hook Reach calls, nil in production. Test binaries store one (and nil when done);
// a variable rather than a setter so that the released binaries hold no function for it.
var Installed atomic.Pointer[Hook]

// Reach marks a fault point: op (one of Ops, or Step) on path.
func Reach(op, path string) {
	if h := Installed.Load(); h != nil {
		(*h)(op, path)
	}
}
