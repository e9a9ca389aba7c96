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

// Thinking is a part of output: an estimate above a request's recorded (partial) output tokens is taken
// as the output, in the shares of spend and of output as in the cost, so a part never exceeds its whole
// (the audit review: 33,333 % of spend for a hostile file; 1.1 % beside 0.4 % on the spotter sample).
func TestThinkingSharesNeverExceedOutput(t *testing.T) {
	var tot Totals
	over := &transcript.Request{Class: transcript.ClassMain, Model: "claude-opus-4-6", InputTokens: 100, OutputTokens: 3,
		ThinkingTokens: 1000, ThinkingSrc: transcript.ThinkingEstimated}
	under := &transcript.Request{Class: transcript.ClassMain, Model: "claude-opus-4-6", InputTokens: 100, OutputTokens: 100,
		ThinkingTokens: 40, ThinkingSrc: transcript.ThinkingExact}
	for _, r := range []*transcript.Request{over, under} {
		tot.Add(r, Price(nil, r))
	}
	tot.Settle()
	sh := SharesOf(&tot, tot.Spend, tot.PricedCostUSD)
	if want := 43.0 / 103; sh.ThinkingOfOutput != want {
		t.Errorf("thinking of output %v, want (3 + 40) / 103", sh.ThinkingOfOutput)
	}
	for name, s := range map[string]SpendShares{"cost": sh.Cost, "spend": sh.Spend, "spend_ttl": sh.TTL} {
		if s.Thinking > s.Output {
			t.Errorf("%s: thinking %v exceeds output %v", name, s.Thinking, s.Output)
		}
	}
	if tot.ThinkingTokens != 1040 {
		t.Errorf("thinking_tokens %d: the count stays uncapped", tot.ThinkingTokens)
	}
	tot.Remove(over, Price(nil, over))
	tot.Settle()
	if sh := SharesOf(&tot, tot.Spend, tot.PricedCostUSD); sh.ThinkingOfOutput != 0.4 {
		t.Errorf("after Remove: thinking of output %v, want 0.4", sh.ThinkingOfOutput)
	}
}
