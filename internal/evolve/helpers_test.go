package evolve

import (
	"bytes"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ldd-tools/tune/internal/fixtures"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func refWeights(t testing.TB) weights.Weights {
	t.Helper()
	w, err := weights.Load(filepath.Join(repoRoot(), "weights", "v0001.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func repoSuite(t testing.TB) (*Suite, *Suite) {
	t.Helper()
	s, err := fixtures.LoadSuite(filepath.Join(repoRoot(), "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	return PrepareSuite(s.Scenarios), PrepareSuite(s.Holdout)
}

func parseLog(t testing.TB, name string, data []byte) *traceparse.Result {
	t.Helper()
	res, err := traceparse.Parse(bytes.NewReader(data), name)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
