package report

import (
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/audit"
)

// TestFromAuditRoundsMeansNotShares: means of token counts get one decimal in the report; shares keep
// their precision; a missing mean is left out; without a price line the embedded table's is named.
func TestFromAuditRoundsMeansNotShares(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	rep := &audit.Report{}
	rep.Totals.Requests = 3
	rep.Shares.ThinkingInMain = f(0.123456)
	rep.Shares.MeanThinkingMain = f(1234.56)
	rep.Shares.MeanContextMain = f(99.94)
	in := FromAudit(rep, audit.NewClassEffort(), audit.Input{}, nil)
	got := map[string]float64{}
	for _, fig := range in.Figures {
		got[fig.Name] = fig.Value
	}
	for name, want := range map[string]float64{
		"main-loop share of thinking":               0.123456,
		"mean thinking per request, main loop":      1234.6,
		"mean cached context per main-loop request": 99.9,
	} {
		if v, ok := got[name]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
		}
	}
	if _, ok := got["mean thinking per request, outside the main loop"]; ok {
		t.Error("a mean over no request is in the figures")
	}
	if !strings.HasPrefix(in.Totals.Prices, "ccusage ") || in.AB != nil {
		t.Errorf("prices %q, AB %v", in.Totals.Prices, in.AB)
	}
}
