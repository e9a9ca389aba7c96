package project

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func mk(t *testing.T, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		if f[len(f)-1] == '/' { // a directory
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFindTraceLog(t *testing.T) {
	root := t.TempDir()
	mk(t, root, "outer/.ldd/trace.log", "outer/repo/.git/", "outer/repo/src/deep/", "proj/.ldd/trace.log", "proj/a/b/")

	// from a subdirectory, the nearest log above
	got, err := FindTraceLog(filepath.Join(root, "proj", "a", "b"))
	if err != nil || got != filepath.Join(root, "proj", ".ldd", "trace.log") {
		t.Errorf("from proj/a/b: %q, %v", got, err)
	}
	// the walk stops at the repository root: the enclosing outer/.ldd/trace.log is not this repo's
	_, err = FindTraceLog(filepath.Join(root, "outer", "repo", "src", "deep"))
	if !errors.Is(err, ErrNoTraceLog) {
		t.Errorf("past the repository root: %v", err)
	}
	// a log at the repository root itself is found
	mk(t, root, "outer/repo/.ldd/trace.log")
	if got, err := FindTraceLog(filepath.Join(root, "outer", "repo", "src")); err != nil || got != filepath.Join(root, "outer", "repo", ".ldd", "trace.log") {
		t.Errorf("at the repository root: %q, %v", got, err)
	}
	// a directory named trace.log is not a log
	mk(t, root, "dirlog/.ldd/trace.log/", "dirlog/.git/")
	if _, err := FindTraceLog(filepath.Join(root, "dirlog")); !errors.Is(err, ErrNoTraceLog) {
		t.Errorf("a directory is not a log: %v", err)
	}
}

func TestFindRoot(t *testing.T) {
	root := t.TempDir()
	mk(t, root, "p/tune.toml", "p/x/y/", "q/")
	if got, _ := FindRoot(filepath.Join(root, "p", "x", "y")); got != filepath.Join(root, "p") {
		t.Errorf("from p/x/y: %q", got)
	}
	if got, _ := FindRoot(filepath.Join(root, "q")); got != "" {
		t.Errorf("outside a project: %q", got)
	}
}
