package audit

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func armOf(name string, requests ...int) Arm {
	a := Arm{Name: name}
	for i, n := range requests {
		a.Runs = append(a.Runs, Run{Arm: name, Session: fmt.Sprintf("%s-%d", name, i), Requests: n, OutputTokens: uint64(10 * n), WallSeconds: float64(n)})
	}
	return a
}

// TestRatioTooFewRuns: with fewer runs than a median's distribution-free CI needs, the ratio has no
// interval and says why, instead of a bootstrap of three values ([0.72, 1767.21]).
func TestRatioTooFewRuns(t *testing.T) {
	rep, err := CompareArms([]Arm{armOf("low", 10, 12, 9), armOf("high", 11, 30, 8)}, ABOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mr := rep.Metrics[0]
	if mr.RatioNote != "too few runs (n=3)" || mr.RatioLo != nil || mr.RatioHi != nil || mr.Ratio == nil {
		t.Errorf("n=3: ratio %v [%v, %v] note %q; want the ratio, no interval, \"too few runs (n=3)\"", mr.Ratio, mr.RatioLo, mr.RatioHi, mr.RatioNote)
	}
	rep, err = CompareArms([]Arm{armOf("low", 10, 12, 9, 11, 10, 12, 9), armOf("high", 11, 30, 8, 12, 14, 9, 13)}, ABOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mr := rep.Metrics[0]; mr.RatioNote != "" || mr.RatioLo == nil || mr.RatioHi == nil {
		t.Errorf("n=7: ratio [%v, %v] note %q; want an interval", mr.RatioLo, mr.RatioHi, mr.RatioNote)
	}
}

// TestDisagreementExplained: a ratio interval that excludes 1 next to a test that is not significant
// after Holm (or the reverse) carries the reason, since the two come from different procedures.
func TestDisagreementExplained(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		lo, hi      float64
		significant bool
		want        string
	}{
		{0.48, 0.85, false, "the ratio's CI excludes 1 but the test is not significant"},
		{0.8, 1.2, true, "the test is significant but the ratio's CI includes 1"},
		{0.48, 0.85, true, ""},
		{0.8, 1.2, false, ""},
	} {
		mr := MetricResult{RatioLo: f(c.lo), RatioHi: f(c.hi), PHolm: f(1), Significant: c.significant}
		explainDisagreement(&mr, 5)
		got := strings.Join(mr.Warnings, "; ")
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("[%v, %v] significant %v: warnings %q, want %q", c.lo, c.hi, c.significant, got, c.want)
		}
	}
}

// The footnote of a disagreement names the tests Holm adjusted over, as the header does: a metric
// without data has no p and is no test (the audit review: the footnote said 5 beside a header's 4).
func TestHolmCountsOnlyTests(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	rep := &ABReport{Metrics: []MetricResult{{P: f(0.03)}, {P: nil}, {P: f(0.5)}, {P: f(math.NaN())}, {P: f(0.01)}}}
	if got := rep.Tests(); got != 3 {
		t.Errorf("Tests: %d, want 3", got)
	}
	mr := MetricResult{RatioLo: f(0.48), RatioHi: f(0.85), PHolm: f(0.125)}
	explainDisagreement(&mr, rep.Tests())
	if got := strings.Join(mr.Warnings, "; "); !strings.Contains(got, "over 3 tests") {
		t.Errorf("footnote %q, want it to say over 3 tests", got)
	}
}
