package scorecmd

import (
	"testing"

	"github.com/ldd-tools/tune/internal/traceparse"
)

// TestTouches: a task touches a file named in files= or in its title, matched whole or at a path
// boundary, never inside a name.
func TestTouches(t *testing.T) {
	task := &traceparse.Task{Title: "fix date parsing in src/util/date.go", Files: []string{`internal\app\watch.go`}}
	for file, want := range map[string]bool{
		"src/util/date.go": true, "util/date.go": true, "date.go": true, "./src/util/date.go": true,
		"internal/app/watch.go": true, "app/watch.go": true, "/home/me/repo/internal/app/watch.go": true,
		"te.go": false, "util/other.go": false, "atch.go": false,
	} {
		if got := touches(task, file); got != want {
			t.Errorf("touches(%q) = %v, want %v", file, got, want)
		}
	}
}
