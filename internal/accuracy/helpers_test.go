package accuracy

import "github.com/ldd-tools/tune/internal/traceparse"

// Build computes the report over tasks.
func Build(tasks []traceparse.Task, opt Options) *Report {
	b := NewBuilder(opt)
	for i := range tasks {
		b.Add(&tasks[i])
	}
	return b.Report()
}
