// Package testutil holds what the package tests share: golden files (with a unified diff on a
// mismatch), the reference weights and a clean copy of the reference store and fixture suite.
package testutil

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/rogpeppe/go-internal/diff"
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
		t.Errorf("output differs from %s (run go test -update after checking the change):\n%s", path, diff.Diff(path, want, "got", got))
	}
}

// TermWidths are the terminal widths every table golden is also rendered at (COLUMNS=80 and 100).
var TermWidths = []int{80, 100}

// GoldenFit checks output rendered for a terminal of the given width: no line may be wider than the
// terminal, and the output is compared with testdata/<name> with ".w<width>" before the extension
// (store_history.txt → store_history.w80.txt), so that the narrow layouts are reviewed like the wide.
func GoldenFit(t testing.TB, name string, width int, got []byte) {
	t.Helper()
	for i, line := range strings.Split(string(got), "\n") {
		if n := twwidth.Width(line); n > width {
			t.Errorf("%s at %d columns: line %d is %d wide:\n%s", name, width, i+1, n, line)
		}
	}
	ext := filepath.Ext(name)
	Golden(t, fmt.Sprintf("%s.w%d%s", strings.TrimSuffix(name, ext), width, ext), got)
}
