package evolve

import (
	"bytes"
	"math"
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

// LogEValue is the log e-value of one table alone (one stratum, no onset mixture).
func LogEValue(a, b, c, d int) float64 { return LogEValueStrata([]Table{{a, b, c, d}}) }

// EValue is exp(LogEValue).
func EValue(a, b, c, d int) float64 { return math.Exp(LogEValue(a, b, c, d)) }

// Passes reports whether a table's e-value reaches the threshold, as the screen judges one stratum.
func Passes(a, b, c, d int) bool { return PassesOnsets([]Table{{a, b, c, d}}, nil) }

// passesStrata is the strata e-value alone (no onset mixture) at the threshold: the variant the reviews
// measured before the mixture.
func passesStrata(tables []Table) bool { return LogEValueStrata(tables) >= math.Log(Threshold) }

// liftedTable is the whole history's 2×2 of liftedExcess: the eligible carriers c lifts regressed and
// not, the eligible tasks without the signal regressed and not (excessTable: flagged, or a weak witness
// net of the placebos).
func liftedTable(c Change, parent *weights.Weights, tasks []screenCell) [4]int {
	group := liftedGroup(c, parent)
	var n excessTable
	for _, t := range tasks {
		if g := group(&t.screenTask); g != groupNone {
			n.add(g == groupLifted, t)
		}
	}
	return n.cells()
}
