//go:build !unix

package testutil

import (
	"testing"
	"time"
)

// CPUTime is 0 where getrusage is missing.
func CPUTime() time.Duration { return 0 }

// ReportCPU reports nothing where the CPU time cannot be read.
func ReportCPU(*testing.B, time.Duration) {}
