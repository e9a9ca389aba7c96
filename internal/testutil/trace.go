package testutil

import (
	"testing"

	"github.com/ldd-tools/tune/internal/traceparse"
)

// TraceTasks reads every task of each log, in the order given (each task keeps its Source). The
// commands stream logs instead (traceparse.StreamLog); tests that want them all at once read them
// here. traceparse's own tests must not import testutil (import cycle).
func TraceTasks(t testing.TB, logs ...string) []traceparse.Task {
	t.Helper()
	var tasks []traceparse.Task
	for _, l := range logs {
		res, err := traceparse.ReadLast(l, 0)
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, res.Tasks...)
	}
	return tasks
}
