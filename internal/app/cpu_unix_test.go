//go:build unix

package app

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) this process has used: a benchmark's wall time on a
// shared machine moves with the load, its CPU time much less.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
