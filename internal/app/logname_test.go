package app

import (
	"os"
	"path/filepath"
	"testing"
)

// Two logs are never given one name: a log outside the project root is named by its absolute path, so
// that a relative path read from a working directory outside the root cannot take the name of a log
// inside it (the fourth review, docs/decisions.md#fourth-review-the-watch-state-and-explore).
func TestLogNamesOfTwoLogsDiffer(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	for _, d := range []string{root, elsewhere} {
		if err := os.MkdirAll(filepath.Join(d, "a"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(elsewhere)
	env := Env{Root: root}
	inside, outside := env.LogName(filepath.Join(root, "a", "trace.log")), env.LogName(filepath.Join("a", "trace.log"))
	if inside == outside {
		t.Errorf("%s and %s are both named %q", filepath.Join(root, "a", "trace.log"), filepath.Join(elsewhere, "a", "trace.log"), inside)
	}
	if inside != "a/trace.log" || outside != filepath.Join(elsewhere, "a", "trace.log") {
		t.Errorf("named %q and %q: want a/trace.log (inside the root) and the absolute path (outside)", inside, outside)
	}
}
