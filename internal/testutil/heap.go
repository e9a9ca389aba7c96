package testutil

import "runtime"

// LiveHeap is the heap in use after a full GC: the memory benchmarks (watch.BenchmarkBuilderHeap,
// transcript.BenchmarkDedupHeap, export.BenchmarkPartitionHeap) report its growth per item.
func LiveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
