package report

// The converter from a transcript audit into the audit report's input: it lives next to the report
// code so that tune audit --report and tune report audit build the same input.

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/pricing"
)

// FromAudit converts an audit — the aggregate report, thinking by class and effort, what was read
// and, when arms were compared, tune audit ab's comparison — into the audit report's input: numbers
// and labels only, never transcript text.
func FromAudit(rep *audit.Report, thinking *audit.ClassEffort, input audit.Input, ab *audit.ABReport) AuditReport {
	t, sh := rep.Totals, rep.Shares
	if input.Prices == "" {
		input.Prices = pricing.Embedded().Describe("")
	}
	in := AuditReport{
		Files: input.Files, Sessions: input.Sessions, Skipped: map[string]int{},
		Totals: TokenTotals{Requests: t.Requests, Input: int64(t.InputTokens), Output: int64(t.OutputTokens),
			CacheWrite: int64(t.CacheCreationInputTokens), CacheRead: int64(t.CacheReadInputTokens), Thinking: int64(t.ThinkingTokens),
			ThinkingExactRequests: t.ThinkingExactRequests, ThinkingEstimatedRequests: t.ThinkingEstimatedRequests,
			CostUSD: t.PricedCostUSD, UnpricedRequests: t.UnpricedRequests, Cost1hPremiumUSD: t.Cost1hPremiumUSD, Prices: input.Prices},
	}
	for k, n := range input.Skipped {
		if n > 0 {
			in.Skipped[k] = n
		}
	}
	if t.Requests > 0 {
		c := t.CostByKindUSD
		in.Spend = []SpendShare{
			{Kind: "input", CostUSD: c.Input, ShareOfCost: sh.Cost.Input, Share: sh.Spend.Input, ShareTTLAware: sh.TTL.Input},
			{Kind: "output", CostUSD: c.Output, ShareOfCost: sh.Cost.Output, Share: sh.Spend.Output, ShareTTLAware: sh.TTL.Output},
			{Kind: "cache write", CostUSD: c.CacheWrite, ShareOfCost: sh.Cost.CacheWrite, Share: sh.Spend.CacheWrite, ShareTTLAware: sh.TTL.CacheWrite},
			{Kind: "cache read", CostUSD: c.CacheRead, ShareOfCost: sh.Cost.CacheRead, Share: sh.Spend.CacheRead, ShareTTLAware: sh.TTL.CacheRead},
		}
		if c.Unsplit > 0 { // recorded costUSD of models without a price: no split by kind
			in.Spend = append(in.Spend, SpendShare{Kind: "recorded, not split", CostUSD: c.Unsplit, ShareOfCost: c.Unsplit / t.PricedCostUSD})
		}
		sort.SliceStable(in.Spend, func(i, j int) bool { return in.Spend[i].CostUSD > in.Spend[j].CostUSD })
		in.Figures = append(in.Figures,
			Figure{Name: "thinking share of output tokens", Value: sh.ThinkingOfOutput, Share: true},
			Figure{Name: "thinking share of weighted spend", Value: sh.Spend.Thinking, Share: true},
			Figure{Name: "weighted spend outside the main loop", Value: sh.Spend.NonMain, Share: true})
		for _, f := range []struct {
			name  string
			v     *float64
			share bool
		}{
			{"main-loop share of thinking", sh.ThinkingInMain, true},
			{"mean thinking per request, main loop", sh.MeanThinkingMain, false},
			{"mean thinking per request, outside the main loop", sh.MeanThinkingSub, false},
			{"mean cached context per main-loop request", sh.MeanContextMain, false},
		} {
			if f.v != nil {
				v := *f.v
				if !f.share {
					v = math.Round(v*10) / 10 // a mean of token counts: one decimal is all it means
				}
				in.Figures = append(in.Figures, Figure{Name: f.name, Value: v, Share: f.share})
			}
		}
	}
	if sh.ThinkingEstimated {
		in.Notes = append(in.Notes, "Some thinking tokens are estimated from the stored thinking text (characters / 4); Claude Code stores a summary, so these are lower bounds.")
	}
	if sh.ThinkingIncomplete {
		in.Notes = append(in.Notes, fmt.Sprintf("%d requests record no usable thinking (neither a count nor text): thinking totals are lower bounds.", t.ThinkingUnknownRequests))
	}
	if sh.OutputPartialVersion {
		in.Notes = append(in.Notes, "Some requests come from Claude Code versions before 2.1.70, whose transcripts keep streaming snapshots of output_tokens: output and its shares are lower bounds.")
	}
	in.Thinking = thinkingGroups(thinking, t.ThinkingTokens)
	if ab != nil {
		in.AB = abComparison(ab)
	}
	return in
}

// thinkingGroups is the report's thinking table: by class (fixed order) and, within a class, by
// effort (low to max).
func thinkingGroups(thinking *audit.ClassEffort, totalThinking uint64) []ThinkingGroup {
	var out []ThinkingGroup
	for _, g := range thinking.Groups() {
		effort := g.Effort
		if effort == audit.NoEffort {
			effort = ""
		}
		share := 0.0
		if totalThinking > 0 {
			share = float64(g.Totals.ThinkingTokens) / float64(totalThinking)
		}
		out = append(out, ThinkingGroup{Class: g.Class.String(), Effort: effort, Requests: g.Totals.Requests,
			Output: int64(g.Totals.OutputTokens), Thinking: int64(g.Totals.ThinkingTokens), ShareOfThinking: share,
			Estimated: g.Totals.ThinkingEstimatedRequests > 0})
	}
	return out
}

// metricUnits label the chart axes of the A/B metrics.
var metricUnits = map[string]string{"requests": "requests", "output_tokens": "tokens", "thinking_tokens": "tokens",
	"wall_seconds": "seconds", "active_seconds": "seconds"}

func abComparison(ab *audit.ABReport) *ABComparison {
	out := &ABComparison{Paired: ab.Paired, Warnings: ab.Notes}
	for _, a := range ab.Arms {
		out.Arms = append(out.Arms, a.Name)
	}
	// Footnotes: each distinct warning once, with the metrics it concerns.
	var notes []string
	concerns := map[string][]string{}
	for _, m := range ab.Metrics {
		stat := func(arm string) ArmStat {
			s := m.Arms[arm]
			st := ArmStat{Arm: arm, N: s.N, Median: orNaN(s.Median), Lo: orNaN(s.Lo), Hi: orNaN(s.Hi), HasCI: s.Lo != nil && s.Hi != nil}
			for i := range ab.Runs {
				if r := &ab.Runs[i]; r.Arm == arm {
					if v, ok := r.Value(m.Name); ok {
						st.Runs = append(st.Runs, v)
					}
				}
			}
			return st
		}
		out.Metrics = append(out.Metrics, ABMetric{Name: m.Name, Unit: metricUnits[m.Name],
			Arms: [2]ArmStat{stat(m.Baseline), stat(m.Arm)}, P: orNaN(m.P), PHolm: orNaN(m.PHolm), Significant: m.Significant,
			Ratio: orNaN(m.Ratio), RatioLo: orNaN(m.RatioLo), RatioHi: orNaN(m.RatioHi), RatioNote: m.RatioNote})
		for _, w := range m.Warnings {
			if _, ok := concerns[w]; !ok {
				notes = append(notes, w)
			}
			if c := concerns[w]; len(c) == 0 || c[len(c)-1] != m.Name {
				concerns[w] = append(c, m.Name)
			}
		}
	}
	for _, w := range notes {
		out.Footnotes = append(out.Footnotes, strings.Join(concerns[w], ", ")+": "+w)
	}
	return out
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
