//go:build unix

package testutil

import (
	"syscall"
	"testing"
	"time"
)

// CPUTime is the user and system time the process has used so far (0 if it cannot be read).
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ReportCPU reports the process's CPU time per op since start as "cpu-ns/op": on a machine that
// others load, wall time per op measures the load as much as the code, CPU time much less. Call it
// after the benchmark loop.
func ReportCPU(b *testing.B, start time.Duration) {
	if b.N > 0 {
		b.ReportMetric(float64((CPUTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
