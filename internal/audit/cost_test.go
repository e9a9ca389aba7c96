package audit

import (
	"testing"

	"github.com/ldd-tools/tune/internal/pricing"
	"github.com/ldd-tools/tune/internal/transcript"
)

// TestPriceModes: a recorded costUSD is the cost in auto and display modes, split by kind in
// proportion to the prices (the parts sum to it exactly) or unsplit when the model has no price;
// calculate ignores it; display counts a request without one as 0, whatever its model.
func TestPriceModes(t *testing.T) {
	opus := transcript.Request{Model: "claude-opus-4-6", InputTokens: 1000, OutputTokens: 3000, ThinkingTokens: 1000,
		CacheCreationTokens: 5000, CacheCreation5m: 4000, CacheCreation1h: 1000, CacheReadTokens: 90000}
	rec := opus
	rec.RecordedCostUSD, rec.HasRecordedCost = 0.3333333, true
	mystery := transcript.Request{Model: "claude-mystery-9", InputTokens: 10, OutputTokens: 10, RecordedCostUSD: 0.5, HasRecordedCost: true}
	plain := mystery
	plain.HasRecordedCost = false
	calc := Price(nil, &opus)
	if !calc.Known || calc.Recorded || calc.Total() == 0 {
		t.Fatalf("priced: %+v", calc)
	}
	table := pricing.Embedded()
	for _, c := range []struct {
		mode    pricing.Mode
		r       *transcript.Request
		known   bool
		usd     float64
		unsplit bool
	}{
		{pricing.ModeAuto, &rec, true, 0.3333333, false},
		{pricing.ModeDisplay, &rec, true, 0.3333333, false},
		{pricing.ModeCalculate, &rec, true, calc.Total().USD(), false},
		{pricing.ModeAuto, &opus, true, calc.Total().USD(), false},
		{pricing.ModeDisplay, &opus, true, 0, false},
		{pricing.ModeAuto, &mystery, true, 0.5, true},
		{pricing.ModeDisplay, &mystery, true, 0.5, true},
		{pricing.ModeCalculate, &mystery, false, 0, false},
		{pricing.ModeAuto, &plain, false, 0, false},
		{pricing.ModeDisplay, &plain, true, 0, false},
	} {
		got := Price(table.WithMode(c.mode), c.r)
		usd, ok := got.USD()
		if ok != c.known || usd != c.usd || (got.Unsplit != 0) != c.unsplit {
			t.Errorf("%s %s recorded=%v: %v %v unsplit %v, want %v %v unsplit %v", c.mode, c.r.Model, c.r.HasRecordedCost,
				usd, ok, got.Unsplit, c.usd, c.known, c.unsplit)
		}
		if got.Recorded && !got.unsplitOnly() {
			// Split in the priced proportions: output's share of the recorded cost is its share of the price.
			want := float64(calc.Parts.Output) / float64(calc.Total())
			if share := float64(got.Parts.Output) / float64(got.Total()); share < want-1e-6 || share > want+1e-6 {
				t.Errorf("%s: output share %v, priced %v", c.mode, share, want)
			}
			if got.Thinking <= 0 || got.Thinking > got.Parts.Output {
				t.Errorf("%s: thinking %v of output %v", c.mode, got.Thinking, got.Parts.Output)
			}
		}
	}
}

func (c Cost) unsplitOnly() bool { return c.Parts.Total() == 0 }

// Costs past int64 picodollars ($9.2 million) stay right: thirteen requests of the most output tokens a
// request may carry, at claude-opus-4's $75 per million, wrapped the sums to −$8.7 million in --json
// and a 19-digit sum in text (the audit review). The sums are 128-bit now; a recorded cost past the
// per-request bound is held at it, never wrapped.
func TestCostsPastInt64(t *testing.T) {
	var tot Totals
	r := transcript.Request{Model: "claude-opus-4-20250514", OutputTokens: transcript.MaxTokens, Class: transcript.ClassMain}
	c := Price(nil, &r)
	for range 13 {
		tot.Add(&r, c)
	}
	extra := transcript.Request{Model: "claude-opus-4-20250514", OutputTokens: 1000, Class: transcript.ClassSubagent}
	ce := Price(nil, &extra)
	tot.Add(&extra, ce)
	tot.Remove(&extra, ce) // exact: what is removed was added
	tot.Settle()
	if tot.CostUSD == nil || *tot.CostUSD != 9_750_000 || tot.CostByKindUSD.Output != 9_750_000 {
		t.Errorf("13 × 10^10 output tokens at $75/M: cost %v, output %v, want $9,750,000", tot.CostUSD, tot.CostByKindUSD.Output)
	}
	if s := SharesOf(&tot, tot.Spend, tot.PricedCostUSD); s.Cost.Output != 1 || s.Cost.NonMain != 0 {
		t.Errorf("cost shares %+v, want all output, none outside the main loop", s.Cost)
	}
	rec := transcript.Request{Model: "claude-opus-4-20250514", OutputTokens: 10, RecordedCostUSD: 1e300, HasRecordedCost: true}
	if got := Price(pricing.Embedded().WithMode(pricing.ModeAuto), &rec); got.Total() != pricing.MaxPart {
		t.Errorf("a recorded cost of $1e300: %d picodollars, want the bound %d", got.Total(), pricing.MaxPart)
	}
}

// A negative recorded cost (ccusage sums it as it is) splits like a positive one: no thinking for a
// request without any, and the rounding goes to the largest part by magnitude (the re-review: the whole
// output went to thinking).
func TestNegativeRecordedCost(t *testing.T) {
	r := transcript.Request{Model: "claude-opus-4-20250514", OutputTokens: 100, InputTokens: 3, RecordedCostUSD: -5, HasRecordedCost: true}
	c := Price(pricing.Embedded().WithMode(pricing.ModeAuto), &r)
	if c.Thinking != 0 || c.Total() != pricing.FromUSD(-5) || c.Parts.Output > c.Parts.Input {
		t.Errorf("−$5 recorded for 100 output tokens, no thinking: %+v", c)
	}
	r.ThinkingTokens = 50
	c = Price(pricing.Embedded().WithMode(pricing.ModeAuto), &r)
	if c.Thinking >= 0 || c.Thinking < c.Parts.Output || c.Total() != pricing.FromUSD(-5) {
		t.Errorf("−$5 with half the output thinking: %+v", c)
	}
}
