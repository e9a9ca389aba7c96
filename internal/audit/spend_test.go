package audit

import (
	"testing"

	"github.com/ldd-tools/tune/internal/transcript"
)

// A "<synthetic>" error reply is a request (ccusage counts it) but no API call: it must not dilute the
// per-request means of the main loop.
func TestSyntheticRepliesStayOutOfTheMeans(t *testing.T) {
	var tot Totals
	opus := &transcript.Request{Class: transcript.ClassMain, Model: "claude-opus-4-6", CacheReadTokens: 1000, InputTokens: 10,
		ThinkingTokens: 40, ThinkingSrc: transcript.ThinkingExact}
	synthetic := &transcript.Request{Class: transcript.ClassMain, Model: SyntheticModel}
	tot.Add(opus, Price(nil, opus))
	tot.Add(synthetic, Price(nil, synthetic))
	tot.Settle()
	sh := SharesOf(&tot, tot.Spend, tot.PricedCostUSD)
	// A synthetic reply has no tokens: it costs 0, a known price.
	if tot.CostUSD == nil || *tot.CostUSD != (10*5e-6+1000*0.5e-6) || tot.UnpricedRequests != 0 {
		t.Fatalf("cost %v, %d unpriced", tot.CostUSD, tot.UnpricedRequests)
	}
	if tot.Requests != 2 || tot.MainRequests != 2 {
		t.Fatalf("requests %d / main %d, want 2 / 2", tot.Requests, tot.MainRequests)
	}
	if sh.MeanContextMain == nil || *sh.MeanContextMain != 1010 || sh.MeanThinkingMain == nil || *sh.MeanThinkingMain != 40 {
		t.Fatalf("means %v context, %v thinking; want 1010 and 40", sh.MeanContextMain, sh.MeanThinkingMain)
	}
	tot.Remove(synthetic, Price(nil, synthetic))
	if tot.SyntheticMainRequests != 0 {
		t.Fatal("Remove did not take the synthetic reply out")
	}
}
