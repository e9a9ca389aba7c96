// Package testutil holds the golden-file helper shared by the package tests.
package testutil

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// Update is the -update flag: rewrite golden files instead of comparing with them.
var Update = flag.Bool("update", false, "rewrite golden files")

// Golden compares got with testdata/<name> and rewrites the file when -update is given.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file %s: %v (run go test -update to create it)", path, err)
	}
	if string(want) != string(got) {
		t.Errorf("output differs from %s (run go test -update after checking the change)\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}
