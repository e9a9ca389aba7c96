// Package audit turns deduplicated transcript requests into the effort audit: where weighted spend,
// output and thinking go (overall and by session, model, effort, class or day), and the effort A/B
// comparison of runs (medians with distribution-free CIs, Mann–Whitney or paired tests, Holm, a
// bootstrap CI of the ratio of medians). It is pure: requests in, values and text out.
package audit

import (
	"sort"
	"time"

	"github.com/ldd-tools/tune/internal/transcript"
)

// Weights are token prices relative to one uncached input token.
type Weights struct {
	Input        float64 `json:"input"`
	Output       float64 `json:"output"`
	CacheRead    float64 `json:"cache_read"`
	CacheWrite5m float64 `json:"cache_write_5m"`
	CacheWrite1h float64 `json:"cache_write_1h"`
}

// BriefWeights are the relative prices of the effort-tiering design (seed 002 §3): output ×5, cache
// read ×0.1, cache write ×1.25 whatever its TTL.
var BriefWeights = Weights{Input: 1, Output: 5, CacheRead: 0.1, CacheWrite5m: 1.25, CacheWrite1h: 1.25}

// TTLWeights are BriefWeights with one-hour cache writes at ×2, Anthropic's price for them.
var TTLWeights = Weights{Input: 1, Output: 5, CacheRead: 0.1, CacheWrite5m: 1.25, CacheWrite1h: 2}

// Totals are summed token counts. The first six JSON keys are the ones ccusage users compare.
// Every count is an integer, so that a request can be taken out again exactly (Remove); the weighted
// spend is derived from the token sums (Settle), the same whatever the order of the requests.
type Totals struct {
	Requests                 int    `json:"requests"`
	InputTokens              uint64 `json:"input_tokens"`
	OutputTokens             uint64 `json:"output_tokens"`
	CacheCreationInputTokens uint64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     uint64 `json:"cache_read_input_tokens"`
	ThinkingTokens           uint64 `json:"thinking_tokens"` // exact + estimated
	CacheCreation5m          uint64 `json:"cache_creation_5m_input_tokens"`
	CacheCreation1h          uint64 `json:"cache_creation_1h_input_tokens"`
	ThinkingExactTokens      uint64 `json:"thinking_tokens_exact"`
	ThinkingEstimatedTokens  uint64 `json:"thinking_tokens_estimated"`
	// Requests by how their thinking is known: exact (usage.output_tokens_details), estimated (from
	// thinking text, chars/4) or unknown (no usable thinking block).
	ThinkingExactRequests     int `json:"thinking_exact_requests"`
	ThinkingEstimatedRequests int `json:"thinking_estimated_requests"`
	ThinkingUnknownRequests   int `json:"thinking_unknown_requests"`
	ThinkingBlocks            int `json:"thinking_blocks"`
	MainRequests              int `json:"main_requests"`
	SubRequests               int `json:"sub_requests"` // subagent, compaction and side-question
	// SyntheticRequests are the "<synthetic>" error replies Claude Code writes without calling the API;
	// they count as requests (as in ccusage) but not in the per-request means.
	SyntheticMainRequests int    `json:"synthetic_main_requests"`
	SyntheticSubRequests  int    `json:"synthetic_sub_requests"`
	MainThinkingTokens    uint64 `json:"main_thinking_tokens"`
	SubThinkingTokens     uint64 `json:"sub_thinking_tokens"`
	MainContextTokens     uint64 `json:"main_context_tokens"` // Σ cache read + cache write + input, main loop
	// Weighted spend in input-token units (BriefWeights, TTLWeights), overall and outside the main loop,
	// as of the last Settle.
	Spend       float64 `json:"weighted_spend"`
	SpendTTL    float64 `json:"weighted_spend_ttl"`
	SubSpend    float64 `json:"sub_weighted_spend"`
	SubSpendTTL float64 `json:"sub_weighted_spend_ttl"`

	sub tokenSums // the token sums outside the main loop, for SubSpend
}

// SyntheticModel is the model name of the error replies Claude Code writes itself (no API call).
const SyntheticModel = "<synthetic>"

// tokenSums are the token kinds that weighted spend prices.
type tokenSums struct {
	input, output, cacheRead, cacheWrite5m, cacheWrite1h uint64
}

func (s tokenSums) spend(w Weights) float64 {
	return float64(s.input)*w.Input + float64(s.output)*w.Output + float64(s.cacheRead)*w.CacheRead +
		float64(s.cacheWrite5m)*w.CacheWrite5m + float64(s.cacheWrite1h)*w.CacheWrite1h
}

// Add counts one request; call Settle before reading the spend.
func (t *Totals) Add(r *transcript.Request) { t.count(r, 1) }

// Remove takes out a request counted before (a transcript.Sink retraction).
func (t *Totals) Remove(r *transcript.Request) { t.count(r, -1) }

// count adds (sign 1) or subtracts (sign -1) a request. Unsigned sums subtract by adding the two's
// complement, which is exact as long as what is removed was added.
func (t *Totals) count(r *transcript.Request, sign int) {
	n := uint64(sign) // 1 or 2^64-1
	t.Requests += sign
	t.InputTokens += n * r.InputTokens
	t.OutputTokens += n * r.OutputTokens
	t.CacheCreationInputTokens += n * r.CacheCreationTokens
	t.CacheCreation5m += n * r.CacheCreation5m
	t.CacheCreation1h += n * r.CacheCreation1h
	t.CacheReadInputTokens += n * r.CacheReadTokens
	t.ThinkingTokens += n * r.ThinkingTokens
	t.ThinkingBlocks += sign * r.ThinkingBlocks
	switch r.ThinkingSrc {
	case transcript.ThinkingExact:
		t.ThinkingExactRequests += sign
		t.ThinkingExactTokens += n * r.ThinkingTokens
	case transcript.ThinkingEstimated:
		t.ThinkingEstimatedRequests += sign
		t.ThinkingEstimatedTokens += n * r.ThinkingTokens
	default:
		t.ThinkingUnknownRequests += sign
	}
	synthetic := 0
	if r.Model == SyntheticModel {
		synthetic = sign
	}
	if r.Class == transcript.ClassMain {
		t.MainRequests += sign
		t.SyntheticMainRequests += synthetic
		t.MainThinkingTokens += n * r.ThinkingTokens
		t.MainContextTokens += n * (r.CacheReadTokens + r.CacheCreationTokens + r.InputTokens)
	} else {
		t.SubRequests += sign
		t.SyntheticSubRequests += synthetic
		t.SubThinkingTokens += n * r.ThinkingTokens
		t.sub.input += n * r.InputTokens
		t.sub.output += n * r.OutputTokens
		t.sub.cacheRead += n * r.CacheReadTokens
		t.sub.cacheWrite5m += n * r.CacheCreation5m
		t.sub.cacheWrite1h += n * r.CacheCreation1h
	}
}

// Settle derives the weighted spend from the token sums.
func (t *Totals) Settle() {
	all := tokenSums{t.InputTokens, t.OutputTokens, t.CacheReadInputTokens, t.CacheCreation5m, t.CacheCreation1h}
	t.Spend, t.SpendTTL = all.spend(BriefWeights), all.spend(TTLWeights)
	t.SubSpend, t.SubSpendTTL = t.sub.spend(BriefWeights), t.sub.spend(TTLWeights)
}

// Spend is a request's weighted spend in input-token units.
func Spend(r *transcript.Request, w Weights) float64 {
	return float64(r.InputTokens)*w.Input + float64(r.OutputTokens)*w.Output +
		float64(r.CacheReadTokens)*w.CacheRead +
		float64(r.CacheCreation5m)*w.CacheWrite5m + float64(r.CacheCreation1h)*w.CacheWrite1h
}

// SpendShares split weighted spend by token kind. Thinking is a part of output.
type SpendShares struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"`
	Thinking   float64 `json:"thinking"`
	NonMain    float64 `json:"non_main"` // subagents, compaction and side questions
}

// Shares are the seed-002 §3 figures derived from Totals. Means are nil when there is no request to
// average over.
type Shares struct {
	Spend SpendShares `json:"spend"`     // BriefWeights
	TTL   SpendShares `json:"spend_ttl"` // TTLWeights
	// OfTotal is the part of the whole audit's weighted spend (1 for the whole audit).
	OfTotal float64 `json:"of_total_spend"`
	// OutputOfTokens and ThinkingOfOutput are plain token ratios.
	ThinkingOfOutput float64 `json:"thinking_of_output"`
	// ThinkingInMain is the part of all thinking tokens spent in the main loop.
	ThinkingInMain       *float64 `json:"thinking_in_main"`
	MeanThinkingMain     *float64 `json:"mean_thinking_main"`
	MeanThinkingSub      *float64 `json:"mean_thinking_sub"`
	MeanContextMain      *float64 `json:"mean_context_main"`
	ThinkingEstimated    bool     `json:"thinking_estimated"`     // some thinking is estimated from text
	ThinkingIncomplete   bool     `json:"thinking_incomplete"`    // some requests' thinking is unknown
	OutputPartialVersion bool     `json:"output_partial_version"` // set by the caller (see PartialOutput)
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func mean(sum uint64, n int) *float64 {
	if n == 0 {
		return nil
	}
	v := float64(sum) / float64(n)
	return &v
}

func spendShares(t *Totals, w Weights, total, sub float64) SpendShares {
	cacheWrite := float64(t.CacheCreation5m)*w.CacheWrite5m + float64(t.CacheCreation1h)*w.CacheWrite1h
	return SpendShares{
		Input:      ratio(float64(t.InputTokens)*w.Input, total),
		Output:     ratio(float64(t.OutputTokens)*w.Output, total),
		CacheRead:  ratio(float64(t.CacheReadInputTokens)*w.CacheRead, total),
		CacheWrite: ratio(cacheWrite, total),
		Thinking:   ratio(float64(t.ThinkingTokens)*w.Output, total),
		NonMain:    ratio(sub, total),
	}
}

// SharesOf derives the shares of t; whole is the audit's total spend (for OfTotal).
func SharesOf(t *Totals, whole float64) Shares {
	s := Shares{
		Spend:              spendShares(t, BriefWeights, t.Spend, t.SubSpend),
		TTL:                spendShares(t, TTLWeights, t.SpendTTL, t.SubSpendTTL),
		OfTotal:            ratio(t.Spend, whole),
		ThinkingOfOutput:   ratio(float64(t.ThinkingTokens), float64(t.OutputTokens)),
		MeanThinkingMain:   mean(t.MainThinkingTokens, t.MainRequests-t.SyntheticMainRequests),
		MeanThinkingSub:    mean(t.SubThinkingTokens, t.SubRequests-t.SyntheticSubRequests),
		MeanContextMain:    mean(t.MainContextTokens, t.MainRequests-t.SyntheticMainRequests),
		ThinkingEstimated:  t.ThinkingEstimatedRequests > 0,
		ThinkingIncomplete: t.ThinkingUnknownRequests > 0,
	}
	if t.ThinkingTokens > 0 {
		v := float64(t.MainThinkingTokens) / float64(t.ThinkingTokens)
		s.ThinkingInMain = &v
	}
	return s
}

// Group is one row of a breakdown.
type Group struct {
	Key    string `json:"key"`
	Totals Totals `json:"totals"`
	Shares Shares `json:"shares"`
}

// GroupBy names a breakdown.
type GroupBy string

// Breakdowns.
const (
	BySession GroupBy = "session"
	ByModel   GroupBy = "model"
	ByEffort  GroupBy = "effort"
	ByClass   GroupBy = "class"
	ByDay     GroupBy = "day"
)

// GroupBys lists the breakdowns, for flag validation and help.
var GroupBys = []GroupBy{BySession, ByModel, ByEffort, ByClass, ByDay}

// NoEffort is the effort group of requests that record none and have no label.
const NoEffort = "(none)"

// KeyOf returns the group key of a request. Days are UTC dates of the line whose usage was kept,
// as ccusage buckets them with -z UTC.
func KeyOf(r *transcript.Request, by GroupBy) string {
	switch by {
	case BySession:
		return r.Session
	case ByModel:
		return r.Model
	case ByEffort:
		if r.Effort == "" {
			return NoEffort
		}
		return r.Effort
	case ByClass:
		return r.Class.String()
	case ByDay:
		return r.UsageTime.UTC().Format("2006-01-02")
	}
	return ""
}

// Report is the spend audit of a set of requests.
type Report struct {
	Totals Totals  `json:"totals"`
	Shares Shares  `json:"shares"`
	By     GroupBy `json:"by,omitempty"`
	Groups []Group `json:"groups"`
	// First and Last are the earliest and latest request lines.
	First time.Time `json:"first,omitzero"`
	Last  time.Time `json:"last,omitzero"`
}

// Aggregate builds the report of reqs; by may be "" for no breakdown (see Aggregator).
func Aggregate(reqs []transcript.Request, by GroupBy) *Report {
	a := NewAggregator(by)
	for i := range reqs {
		a.Add(&reqs[i])
	}
	return a.Report()
}

// Aggregator builds a Report one request at a time. It is a transcript.Sink: a scan streams its
// requests into it instead of holding them all, and retracts the few that a later copy changes.
type Aggregator struct {
	rep     *Report
	index   map[string]int
	partial bool
}

var _ transcript.Sink = (*Aggregator)(nil)

// NewAggregator starts a report; by may be "" for no breakdown.
func NewAggregator(by GroupBy) *Aggregator {
	return &Aggregator{rep: &Report{By: by, Groups: []Group{}}, index: map[string]int{}}
}

// Add counts one request.
func (a *Aggregator) Add(r *transcript.Request) {
	rep := a.rep
	rep.Totals.Add(r)
	if rep.First.IsZero() || r.First.Before(rep.First) {
		rep.First = r.First
	}
	if r.Last.After(rep.Last) {
		rep.Last = r.Last
	}
	a.partial = a.partial || VersionFamily(r.Version) == FamilyPartial
	if g := a.group(r); g != nil {
		g.Totals.Add(r)
	}
}

// Remove takes out a request added before. The span (First, Last) and the partial-output flag stay:
// a scan only retracts a request to add a version of it that spans at least as much and keeps its
// version.
func (a *Aggregator) Remove(r *transcript.Request) {
	a.rep.Totals.Remove(r)
	if g := a.group(r); g != nil {
		g.Totals.Remove(r)
	}
}

func (a *Aggregator) group(r *transcript.Request) *Group {
	rep := a.rep
	if rep.By == "" {
		return nil
	}
	k := KeyOf(r, rep.By)
	j, ok := a.index[k]
	if !ok {
		j = len(rep.Groups)
		a.index[k] = j
		rep.Groups = append(rep.Groups, Group{Key: k})
	}
	return &rep.Groups[j]
}

// Report derives the shares and orders the groups: by weighted spend, largest first (days
// chronologically, classes in their fixed order), ties by key. Groups left empty by retractions are
// dropped.
func (a *Aggregator) Report() *Report {
	rep := a.rep
	rep.Totals.Settle()
	rep.Shares = SharesOf(&rep.Totals, rep.Totals.Spend)
	rep.Shares.OutputPartialVersion = a.partial
	groups := rep.Groups[:0]
	for _, g := range rep.Groups {
		if g.Totals.Requests > 0 {
			g.Totals.Settle()
			g.Shares = SharesOf(&g.Totals, rep.Totals.Spend)
			groups = append(groups, g)
		}
	}
	rep.Groups = groups
	classOrder := map[string]int{}
	for c := transcript.ClassMain; c <= transcript.ClassSideQuestion; c++ {
		classOrder[c.String()] = int(c)
	}
	by := rep.By
	sort.SliceStable(rep.Groups, func(i, j int) bool {
		a, b := rep.Groups[i], rep.Groups[j]
		switch by {
		case ByDay:
			return a.Key < b.Key
		case ByClass:
			return classOrder[a.Key] < classOrder[b.Key]
		}
		if a.Totals.Spend != b.Totals.Spend {
			return a.Totals.Spend > b.Totals.Spend
		}
		return a.Key < b.Key
	})
	clear(a.index) // positions changed: keep counting into the right groups after a Report
	for i, g := range rep.Groups {
		a.index[g.Key] = i
	}
	return rep
}
