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

// A path in a title stands whole: "date.go.orig", "date.go.bak" or "date.go-old" do not name date.go,
// though the scorer's pattern reads "date.go" in them (the trace review: --regression-of-last picked the
// task that restored date.go.orig); "date.go:42", "date.go," and a sentence's "date.go." do.
func TestTouchesWholePaths(t *testing.T) {
	for title, want := range map[string]bool{
		"restore src/util/date.go.orig from backup":      false,
		"drop src/util/date.go.bak":                      false,
		"see src/util/date.go-old":                       false,
		"fix src/util/date.go:42":                        true,
		"fix src/util/date.go, then test":                true,
		"fix the parsing in src/util/date.go.":           true,
		"fix src/util/date.go.orig and src/util/date.go": true,
	} {
		if got := touches(&traceparse.Task{Title: title}, "src/util/date.go"); got != want {
			t.Errorf("%q touches src/util/date.go: %v, want %v", title, got, want)
		}
	}
}
