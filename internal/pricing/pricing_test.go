package pricing

import (
	"math"
	"strings"
	"testing"
)

func f(v float64) *float64 { return &v }

func TestCostFormula(t *testing.T) {
	p := Price{Input: 1e-6, Output: 10e-6, CacheWrite: 1.25e-6, CacheRead: 0.1e-6, InputAbove: f(2e-6), CacheWriteAbove: f(1.5e-6)}
	for _, c := range []struct {
		name string
		u    Usage
		want Pico
	}{
		// 5m writes at the cache-write price, 1h writes at twice the input price.
		{"ttl split", Usage{CacheWrite5m: 10, CacheWrite1h: 20, CacheRead: 30}, 10*1_250_000 + 20*2_000_000 + 30*100_000},
		{"flat", Usage{Input: 3, Output: 2}, 3*1_000_000 + 2*10_000_000},
		// Each kind's tokens above 200,000 at its long-context rate; output has none here.
		{"long input", Usage{Input: 300_000, Output: 300_000}, 200_000*1_000_000 + 100_000*2_000_000 + 300_000*10_000_000},
		// The 1h price above the threshold is twice the long-context input price.
		{"long 1h", Usage{CacheWrite1h: 250_000}, 200_000*2_000_000 + 50_000*4_000_000},
		{"zero", Usage{}, 0},
	} {
		if got := p.Cost(c.u); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	// Whole-request tiers: once the context exceeds the threshold every kind is at its long rate.
	w := Price{Input: 2e-6, Output: 6e-6, CacheRead: 0.3e-6, InputAbove: f(4e-6), OutputAbove: f(12e-6), CacheReadAbove: f(0.6e-6), WholeRequestThreshold: 200_000}
	if got, want := w.Cost(Usage{Input: 10_000, Output: 1_000, CacheRead: 500_000}).USD(), 0.352; abs(got-want) > 1e-12 {
		t.Errorf("whole-request long: %v, want %v", got, want)
	}
	if got, want := w.Cost(Usage{Input: 10_000, Output: 1_000, CacheRead: 100_000}).USD(), 0.056; abs(got-want) > 1e-12 {
		t.Errorf("whole-request short: %v, want %v", got, want)
	}
	// Fast mode multiplies the whole cost.
	fast := Price{Input: 5e-6, FastMultiplier: 6}
	if got := fast.Cost(Usage{Input: 10, Fast: true}); got != 6*10*5_000_000 {
		t.Errorf("fast: %d", got)
	}
	if got := fast.Cost(Usage{Input: 10}); got != 10*5_000_000 {
		t.Errorf("standard speed: %d", got)
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func TestEmbeddedLookup(t *testing.T) {
	tab := Embedded()
	if tab.Version != "20.0.24" || tab.Extracted == "" || !strings.Contains(tab.Source, "ccusage") {
		t.Errorf("provenance: %q %q %q", tab.Version, tab.Extracted, tab.Source)
	}
	for _, c := range []struct {
		model string
		input float64 // 0: not found
		fast  float64
	}{
		{"claude-opus-4-6", 5e-6, 6},
		{"claude-sonnet-4-5-20250929", 3e-6, 1},
		{"claude-haiku-4-5-20251001", 1e-6, 1},
		// Fuzzy: an unknown date suffix still finds its model; the longest id wins.
		{"claude-opus-4-6-20261231", 5e-6, 6},
		{"claude-opus-4.6", 5e-6, 6},
		{"anthropic/claude-haiku-4-5", 1e-6, 1},
		// claude-opus-4 must not price claude-opus-4-9 (a further version number).
		{"claude-opus-4-9", 0, 0},
		// A separately priced tier is found exactly in the fallback, never as its base model.
		{"claude-opus-4-8-fast", 12e-6, 1},
		{"<synthetic>", 0, 0},
		{"gpt-5", 0, 0},
		{"", 0, 0},
	} {
		p, ok := tab.Lookup(c.model)
		if c.input == 0 {
			if ok {
				t.Errorf("%q: found %+v, want unknown", c.model, p)
			}
			continue
		}
		if !ok || abs(p.Input-c.input) > 1e-15 {
			t.Errorf("%q: %+v %v, want input %v", c.model, p, ok, c.input)
			continue
		}
		if fm := max(p.FastMultiplier, 1); fm != c.fast {
			t.Errorf("%q: fast multiplier %v, want %v", c.model, fm, c.fast)
		}
	}
	sonnet, _ := tab.Lookup("claude-sonnet-4-5-20250929")
	if sonnet.InputAbove == nil || *sonnet.InputAbove != 6e-6 || sonnet.WholeRequestThreshold != 0 {
		t.Errorf("sonnet 4.5 long-context: %+v", sonnet)
	}
}

func TestOverride(t *testing.T) {
	tab, err := Embedded().Override(strings.NewReader(`{"models": {"my-model": {"input": 1e-6, "output": 2e-6, "cache_write": 0, "cache_read": 0}, "claude-opus-4-6": {"input": 1e-6, "output": 1e-6, "cache_write": 1e-6, "cache_read": 1e-6}}}`), "p.json")
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := tab.Lookup("my-model"); !ok || p.Output != 2e-6 {
		t.Errorf("my-model: %+v %v", p, ok)
	}
	if p, _ := tab.Lookup("claude-opus-4-6"); p.Input != 1e-6 {
		t.Errorf("override not applied: %+v", p)
	}
	if p, _ := tab.Lookup("claude-haiku-4-5"); p.Input != 1e-6 {
		t.Errorf("embedded entry lost: %+v", p)
	}
	if p, _ := Embedded().Lookup("claude-opus-4-6"); p.Input != 5e-6 {
		t.Errorf("embedded table changed: %+v", p)
	}
	for _, bad := range []string{`{}`, `[1]`, `{"models": {"m": {"input": -1}}}`, `{"models": {"m": {"input": 5}}}`} {
		if _, err := Embedded().Override(strings.NewReader(bad), "bad.json"); err == nil || !strings.Contains(err.Error(), "bad.json") {
			t.Errorf("%s: error %v, want one naming the file", bad, err)
		}
	}
}

// FuzzOverride: any --pricing file either fails with an error naming it or gives a table whose prices
// are finite, non-negative and price any usage without panicking.
func FuzzOverride(f *testing.F) {
	f.Add(`{"models": {"m": {"input": 1e-6, "output": 2e-6, "cache_write": 1.25e-6, "cache_read": 1e-7}}}`)
	f.Add(`{"models": {"claude-opus-4-6": {"input": 1e-6, "output": 1e-6, "input_above": 2e-6, "whole_request_threshold": 10, "fast_multiplier": 3}}}`)
	f.Add(`{"models": {}}`)
	f.Add(`{"models": {"m": {"input": -1}}}`)
	f.Add(`[1]`)
	f.Add(``)
	f.Fuzz(func(t *testing.T, src string) {
		tab, err := Embedded().Override(strings.NewReader(src), "p.json")
		if err != nil {
			if !strings.Contains(err.Error(), "p.json") {
				t.Fatalf("error %v does not name the file", err)
			}
			return
		}
		for _, m := range tab.Models() {
			p, ok := tab.Lookup(m)
			if !ok {
				t.Fatalf("model %q listed but not found", m)
			}
			u := Usage{Input: 300_000, Output: 1_000, CacheWrite5m: 250_000, CacheWrite1h: 250_000, CacheRead: 1_000_000, Fast: true}
			if c := p.Cost(u); c < 0 {
				t.Fatalf("model %q: negative cost %d", m, c)
			}
		}
	})
}

// A Sum is exact past int64 and in any order; a rate past what MaxPart allows is held at it.
func TestSumAndBound(t *testing.T) {
	var s Sum
	for range 20 {
		s.Add(MaxPart, 1)
	}
	s.Add(7, 1)
	s.Add(MaxPart, -1)
	if got, want := s.Float(), 19*float64(MaxPart)+7; got != want {
		t.Errorf("19 × 2^60 + 7: %v, want %v", got, want)
	}
	for range 19 {
		s.Add(MaxPart, -1)
	}
	if s.Float() != 7 || s.Plus(Sum{}).Float() != 7 {
		t.Errorf("after taking everything but 7 out: %v", s.Float())
	}
	s.Add(10, -1)
	if s.Float() != -3 {
		t.Errorf("7 − 10: %v", s.Float())
	}
	p := Price{Output: 1e-3, Input: 1e-3, CacheWrite: 1e-3, CacheRead: 1e-3, FastMultiplier: 100}
	parts := p.Parts(Usage{Input: 1e10, Output: 1e10, CacheWrite5m: 1e10, CacheWrite1h: 1e10, CacheRead: 1e10, Fast: true})
	if parts.Output != MaxPart || parts.CacheWrite != MaxPart || parts.Total() < 0 {
		t.Errorf("10^10 tokens of each kind at $1,000/M in fast mode: %+v, want each part held at MaxPart", parts)
	}
	if FromUSD(math.NaN()) != 0 || FromUSD(-1e300) != -MaxPart || FromUSD(0.25) != 250_000_000_000 {
		t.Errorf("FromUSD: %d %d %d", FromUSD(math.NaN()), FromUSD(-1e300), FromUSD(0.25))
	}
}
