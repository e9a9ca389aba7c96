package testutil

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/weights"
)

// RepoRoot is the module root.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// ReferenceWeightsPath is the reference weights version every test measures against: the committed
// weights/v0001.toml, the values of the reference scorer.
func ReferenceWeightsPath() string { return filepath.Join(RepoRoot(), "weights", "v0001.toml") }

// ReferenceWeights loads the reference weights (see ReferenceWeightsPath). Tests take them from here,
// never from hand-copied literals; it panics when the file does not load, as every test would fail.
func ReferenceWeights() weights.Weights {
	w, err := weights.Load(ReferenceWeightsPath())
	if err != nil {
		panic("reference weights: " + err.Error())
	}
	return w
}

// CopyReference copies the committed reference store and fixture suite of the repository into dst
// (dst/weights, dst/fixtures), and nothing that running tune in the repository root leaves behind:
// the weights directory contributes v0001.toml only (not the evolution log, weights.sum, later
// versions, proposals or locks) and the fixtures directory everything but harvested/. So the README's
// commands, run in the root, cannot change what the tests see (docs/decisions.md, "Architecture and
// output (issue 15)").
func CopyReference(dst string) error {
	if err := CopyReferenceWeights(filepath.Join(dst, "weights")); err != nil {
		return err
	}
	return CopyFixtures(filepath.Join(RepoRoot(), "fixtures"), filepath.Join(dst, "fixtures"))
}

// CopyReferenceWeights makes dir a fresh weights store holding the reference version only.
func CopyReferenceWeights(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := os.ReadFile(ReferenceWeightsPath())
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, filepath.Base(ReferenceWeightsPath())), data, 0o644)
}

// CopyFixtures copies a fixture suite directory without its harvested/ scenarios (written by tune
// apply; see CopyReference).
func CopyFixtures(src, dst string) error {
	return CopyTree(src, dst, func(rel string) bool {
		return rel == "harvested" || strings.HasPrefix(rel, "harvested"+string(filepath.Separator))
	})
}

// CopyTree copies the directory tree src to dst (files 0644), leaving out the paths (relative to src)
// that skip reports; skip may be nil.
func CopyTree(src, dst string, skip func(rel string) bool) error {
	return filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if skip != nil && skip(rel) {
			if info.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// ReferenceFixtures is a private copy of the repository's fixture suite without harvested/ (see
// CopyReference), for tests that load the suite.
func ReferenceFixtures(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "fixtures")
	if err := CopyFixtures(filepath.Join(RepoRoot(), "fixtures"), dir); err != nil {
		tb.Fatal(err)
	}
	return dir
}
