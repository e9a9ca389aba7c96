package evolve

import (
	"bytes"
	"testing"

	"github.com/ldd-tools/tune/internal/fixtures"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

func repoRoot() string { return testutil.RepoRoot() }

func refWeights(t testing.TB) weights.Weights {
	t.Helper()
	return testutil.ReferenceWeights()
}

func repoSuite(t testing.TB) (*Suite, *Suite) {
	t.Helper()
	s, err := fixtures.LoadSuite(testutil.ReferenceFixtures(t))
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

// Passes reports whether a table's e-value reaches the threshold.
func Passes(a, b, c, d int) bool { return PassesStrata([]Table{{a, b, c, d}}) }
