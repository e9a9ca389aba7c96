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
