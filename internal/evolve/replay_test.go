package evolve

import (
	"testing"
)

// The reference weights must give suite loss 0: every expected value in fixtures/ is the reference
// scorer's answer (checked here with the Go port, which matches parity.jsonl).
func TestSuiteIsGreenUnderReferenceWeights(t *testing.T) {
	w := refWeights(t)
	suite, holdout := repoSuite(t)
	for name, s := range map[string]*Suite{"suite": suite, "holdout": holdout} {
		rep := s.Score(&w)
		for _, r := range rep.Rows {
			if r.Red {
				t.Errorf("%s scenario %s is red under v0001: %+v", name, r.Name, r)
			}
		}
		if rep.Loss != 0 || rep.Total != 0 {
			t.Errorf("%s loss under v0001 = %v, want 0", name, rep.Loss)
		}
	}
}
