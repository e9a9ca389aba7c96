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
	// Model is the priced model's name (ModelLabel, renamed by the table's aliases), named when the
	// price is unknown.
	Model string
	// Recorded: the cost is the request's recorded costUSD (pricing.ModeAuto or ModeDisplay). Parts
	// then split it in proportion to the prices of its tokens; when they cannot (no price, or
	// tokens that cost nothing), Unsplit holds it.
	Recorded bool
	Unsplit  pricing.Pico
}

// USD is the cost in dollars; ok is false when the model has no price.
func (c Cost) USD() (usd float64, ok bool) { return c.Total().USD(), c.Known }

// Total is the cost in picodollars (of the known part).
func (c Cost) Total() pricing.Pico { return c.Parts.Total() + c.Unsplit }

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

// Price prices a request with table (nil: the embedded table) in the table's cost mode
// (pricing.Mode): the recorded costUSD where the mode takes it, else the tokens at the model's
// prices. A request without tokens costs 0 whatever its model ("<synthetic>" error replies); one
// whose model the table lacks has an unknown cost — never 0.
func Price(table *pricing.Table, r *transcript.Request) Cost {
	if table == nil {
		table = pricing.Embedded()
	}
	mode := table.Mode()
	c := Cost{Model: table.Name(ModelLabel(r))}
	if r.HasRecordedCost && mode != pricing.ModeCalculate {
		return recorded(table, r, c)
	}
	if mode == pricing.ModeDisplay {
		c.Known = true // ccusage's display mode: no recorded cost is 0
		return c
	}
	return priced(table, r, c)
}

// priced is the cost of r's tokens at its model's price.
func priced(table *pricing.Table, r *transcript.Request, c Cost) Cost {
	u := UsageOf(r)
	if u.Tokens() == 0 {
		c.Known = true
		return c
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

// recorded is r's recorded cost, split by token kind in proportion to its priced parts when the
// model has a price and the tokens cost something; the parts sum to the recorded cost exactly.
func recorded(table *pricing.Table, r *transcript.Request, c Cost) Cost {
	total := pricing.FromUSD(r.RecordedCostUSD)
	p := priced(table, r, c)
	c.Known, c.Recorded = true, true
	calc := p.Parts.Total()
	if !p.Known || calc <= 0 {
		c.Unsplit = total
		return c
	}
	f := float64(total) / float64(calc)
	scale := func(v pricing.Pico) pricing.Pico { return pricing.Round(float64(v) * f) }
	c.Parts = pricing.Parts{Input: scale(p.Parts.Input), Output: scale(p.Parts.Output), CacheWrite: scale(p.Parts.CacheWrite),
		CacheRead: scale(p.Parts.CacheRead), Premium1h: scale(p.Parts.Premium1h)}
	// Thinking is a part of the output cost: never more of it than the output, whatever the sign (a
	// recorded cost can be negative, and ccusage sums it as it is; min picked a negative output as
	// the thinking of a request without any, the re-review).
	c.Thinking = scale(p.Thinking)
	if abs(c.Thinking) > abs(c.Parts.Output) {
		c.Thinking = c.Parts.Output
	}
	// Rounding leaves at most a few picodollars: they go to the largest part, by magnitude.
	largest := &c.Parts.Input
	for _, v := range []*pricing.Pico{&c.Parts.Output, &c.Parts.CacheWrite, &c.Parts.CacheRead} {
		if abs(*v) > abs(*largest) {
			largest = v
		}
	}
	*largest += total - c.Parts.Total()
	return c
}

func abs(v pricing.Pico) pricing.Pico {
	if v < 0 {
		return -v
	}
	return v
}
