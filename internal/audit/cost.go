package audit

import (
	"github.com/ldd-tools/tune/internal/pricing"
	"github.com/ldd-tools/tune/internal/transcript"
)

// Cost is the price of one request (docs/decisions.md#cost-and-date-views-in-the-audit-issue-13).
type Cost struct {
	Known bool
	Parts pricing.Parts
	// Thinking is the part of Parts.Output spent on thinking tokens (output cost × thinking/output).
	Thinking pricing.Pico
	// Model is the priced model label (ModelLabel), named when the price is unknown.
	Model string
}

// USD is the cost in dollars; ok is false when the model has no price.
func (c Cost) USD() (usd float64, ok bool) { return c.Parts.Total().USD(), c.Known }

// UsageOf is what a request is billed for: its cache writes split by TTL as recorded (a flat
// cache_creation_input_tokens counts as 5-minute writes, as ccusage prices it) and its speed.
func UsageOf(r *transcript.Request) pricing.Usage {
	return pricing.Usage{Input: r.InputTokens, Output: r.OutputTokens, CacheWrite5m: r.CacheCreation5m,
		CacheWrite1h: r.CacheCreation1h, CacheRead: r.CacheReadTokens, Fast: r.Speed == "fast"}
}

// ModelLabel is a request's model as ccusage names it in its breakdowns: fast-mode requests get a
// "-fast" suffix (they are priced differently).
func ModelLabel(r *transcript.Request) string {
	if r.Speed == "fast" {
		return r.Model + "-fast"
	}
	return r.Model
}

// Price prices a request with table (nil: the embedded table). A request without tokens costs 0
// whatever its model ("<synthetic>" error replies); one whose model the table lacks has an unknown
// cost — never 0.
func Price(table *pricing.Table, r *transcript.Request) Cost {
	c := Cost{Model: ModelLabel(r)}
	u := UsageOf(r)
	if u.Tokens() == 0 {
		c.Known = true
		return c
	}
	if table == nil {
		table = pricing.Embedded()
	}
	p, ok := table.Lookup(r.Model)
	if !ok {
		return c
	}
	c.Known = true
	c.Parts = p.Parts(u)
	if r.OutputTokens > 0 && r.ThinkingTokens > 0 {
		th := min(r.ThinkingTokens, r.OutputTokens)
		c.Thinking = pricing.Pico(float64(c.Parts.Output) * float64(th) / float64(r.OutputTokens))
	}
	return c
}

// RequestCost is a request's cost in USD with table (nil: the embedded table); ok is false when
// its model has no price. It is the per-request cost of the audit's totals, for exports.
func RequestCost(table *pricing.Table, r *transcript.Request) (usd float64, ok bool) {
	return Price(table, r).USD()
}
