package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/pricing"
)

// TestEffortCountsTheAuditsRequests: tune effort's requests and cost per level add up to tune audit's
// totals, on every bundled corpus and in every cost mode, with the embedded prices and with a
// --pricing file (docs/decisions.md#effort-conformance-issue-14): the two commands read the requests
// with one reader and price them with one table.
func TestEffortCountsTheAuditsRequests(t *testing.T) {
	prices := filepath.Join(t.TempDir(), "prices.json")
	// A price for the recorded-cost sample's private model, whose cost is otherwise unknown.
	if err := os.WriteFile(prices, []byte(`{"models": {"private-model-y": {"input": 0.000003, "output": 0.000015}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	corpora := map[string]string{
		"spotter":         filepath.Join("..", "..", "testdata", "transcripts", "spotter"),
		"claude-code-log": filepath.Join("..", "..", "testdata", "transcripts", "claude-code-log"),
		"recordedcost":    filepath.Join("..", "audit", "testdata", "recordedcost"),
		"effort-demo":     demoTranscripts,
		"effort-runs":     effortRuns,
	}
	for name, root := range corpora {
		for _, mode := range []pricing.Mode{pricing.ModeAuto, pricing.ModeCalculate, pricing.ModeDisplay} {
			for _, file := range []string{"", prices} {
				au, err := Audit(noEnv(), AuditOptions{Paths: []string{root}, Format: "json", Location: time.UTC, Pricing: file, CostMode: mode}, nil, ScanHooks{})
				if err != nil {
					t.Fatal(err)
				}
				ef, err := Effort(noEnv(), EffortOptions{Paths: []string{root}, Pricing: file, CostMode: mode})
				if err != nil {
					t.Fatal(err)
				}
				requests, cost, known := 0, 0.0, true
				for _, b := range ef.Report.Observed.ByLevel {
					requests += b.Requests
					if b.CostUSD == nil {
						known = false
					} else {
						cost += *b.CostUSD
					}
				}
				tot := au.Report.Totals
				if requests != tot.Requests || ef.Report.Observed.Input.Requests != tot.Requests {
					t.Errorf("%s %s %q: effort counts %d requests (input %d), the audit %d", name, mode, file, requests,
						ef.Report.Observed.Input.Requests, tot.Requests)
				}
				switch {
				case (tot.CostUSD == nil) != !known:
					t.Errorf("%s %s %q: effort's cost known %v, the audit's %v", name, mode, file, known, tot.CostUSD != nil)
				case known && !near(cost, *tot.CostUSD):
					t.Errorf("%s %s %q: effort costs $%.6f, the audit $%.6f", name, mode, file, cost, *tot.CostUSD)
				}
				if tot.Requests == 0 {
					t.Fatalf("%s: an empty corpus proves nothing", name)
				}
			}
		}
	}
}

// near: equal to the audit's rounding (costs are summed in picodollars, then rounded per bucket).
func near(a, b float64) bool {
	d := a - b
	return d < 1e-6 && d > -1e-6
}
