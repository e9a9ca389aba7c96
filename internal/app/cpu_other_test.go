//go:build !unix

package app

import "time"

// processCPU is 0 where getrusage is missing: the benchmarks then report wall time only.
func processCPU() time.Duration { return 0 }
