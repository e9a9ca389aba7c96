// Package audit turns deduplicated transcript requests into the effort audit: where weighted spend,
// output and thinking go (overall and by session, model, effort, class or day), and the effort A/B
// comparison of runs (medians with distribution-free CIs, Mann–Whitney or paired tests, Holm, a
// bootstrap CI of the ratio of medians). It is pure: requests in, values and text out.
package audit

import (
	"sort"
	"time"

	"github.com/ldd-tools/tune/internal/pricing"
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

// BriefWeights are the relative prices of the effort-tiering design (docs/decisions.md#transcripts-and-prices): output ×5, cache
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

	// CostUSD is the cost in USD at ccusage 20.0.24's offline prices (see Price), nil when some
	// request's model has no price: then PricedCostUSD is the cost of the others and
	// UnpricedModels names the models (request counts). Cost1hPremiumUSD is what 1-hour cache writes
	// cost above the 5-minute price (included in the cost, which is TTL-aware).
	CostUSD          *float64       `json:"cost_usd"`
	CostByKindUSD    CostKinds      `json:"cost_by_kind_usd"` // of the priced requests
	PricedCostUSD    float64        `json:"priced_cost_usd"`
	Cost1hPremiumUSD float64        `json:"cost_1h_premium_usd"`
	UnpricedRequests int            `json:"unpriced_requests"`
	UnpricedModels   map[string]int `json:"unpriced_models,omitempty"`
	// RecordedCostRequests are the requests whose cost is their recorded costUSD (pricing.ModeAuto,
	// ModeDisplay); absent when none.
	RecordedCostRequests int `json:"recorded_cost_requests,omitempty"`

	sub   tokenSums        // the token sums outside the main loop, for SubSpend
	cost  pricing.SumParts // priced requests, by token kind
	think pricing.Sum      // the thinking part of cost.Output
	// thinkOut is Σ min(thinking, output tokens) per request: thinking as a part of output. An estimate
	// (text length / 4) often exceeds the partial output_tokens Claude Code recorded before 2.1.70; the
	// shares of output and of spend take thinking as the part, as its cost does (priced).
	thinkOut uint64
	nonMain  pricing.Sum // cost outside the main loop
	unsplit  pricing.Sum // recorded costs that cannot be split by token kind (Cost.Unsplit)
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

// Add counts one request and its cost (Price); call Settle before reading the spend and cost.
func (t *Totals) Add(r *transcript.Request, c Cost) { t.count(r, c, 1) }

// Remove takes out a request counted before with the same cost (a transcript.Sink retraction).
func (t *Totals) Remove(r *transcript.Request, c Cost) { t.count(r, c, -1) }

// count adds (sign 1) or subtracts (sign -1) a request. Unsigned sums subtract by adding the two's
// complement, which is exact as long as what is removed was added; costs are integer picodollars.
func (t *Totals) count(r *transcript.Request, c Cost, sign int) {
	if c.Known {
		t.cost.Add(c.Parts, sign)
		t.think.Add(c.Thinking, sign)
		t.unsplit.Add(c.Unsplit, sign)
		if r.Class != transcript.ClassMain {
			t.nonMain.Add(c.Total(), sign)
		}
		if c.Recorded {
			t.RecordedCostRequests += sign
		}
	} else {
		t.UnpricedRequests += sign
		if t.UnpricedModels == nil {
			t.UnpricedModels = map[string]int{}
		}
		t.UnpricedModels[c.Model] += sign
		if t.UnpricedModels[c.Model] == 0 {
			delete(t.UnpricedModels, c.Model)
		}
		if len(t.UnpricedModels) == 0 {
			t.UnpricedModels = nil
		}
	}
	n := uint64(sign) // 1 or 2^64-1
	t.Requests += sign
	t.InputTokens += n * r.InputTokens
	t.OutputTokens += n * r.OutputTokens
	t.CacheCreationInputTokens += n * r.CacheCreationTokens
	t.CacheCreation5m += n * r.CacheCreation5m
	t.CacheCreation1h += n * r.CacheCreation1h
	t.CacheReadInputTokens += n * r.CacheReadTokens
	t.ThinkingTokens += n * r.ThinkingTokens
	t.thinkOut += n * min(r.ThinkingTokens, r.OutputTokens)
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
	t.PricedCostUSD = t.cost.Total().Plus(t.unsplit).USD()
	t.Cost1hPremiumUSD = t.cost.Premium1h.USD()
	t.CostByKindUSD = CostKinds{Input: t.cost.Input.USD(), Output: t.cost.Output.USD(), CacheWrite: t.cost.CacheWrite.USD(),
		CacheRead: t.cost.CacheRead.USD(), Thinking: t.think.USD(), Unsplit: t.unsplit.USD()}
	t.CostUSD = nil
	if t.UnpricedRequests == 0 {
		v := t.PricedCostUSD
		t.CostUSD = &v
	}
}

// CostKinds split a cost in USD by token kind; Thinking is a part of Output.
type CostKinds struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheWrite float64 `json:"cache_write"`
	CacheRead  float64 `json:"cache_read"`
	Thinking   float64 `json:"thinking"`
	// Unsplit is recorded costUSD that cannot be split by kind (its model has no price); absent when 0.
	Unsplit float64 `json:"unsplit,omitempty"`
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

// Shares are the effort-tiering figures (docs/decisions.md#transcripts-and-prices) derived from Totals. Means are nil when there is no request to
// average over.
type Shares struct {
	// Cost splits the USD cost of the priced requests (the money: what the prices of each model say).
	Cost SpendShares `json:"cost"`
	// Spend and TTL split the token-weighted spend of the effort design (one set of ratios for every
	// model: BriefWeights, and TTLWeights with 1-hour cache writes ×2) — relative token volumes, not money.
	Spend SpendShares `json:"spend"`     // BriefWeights
	TTL   SpendShares `json:"spend_ttl"` // TTLWeights
	// OfTotalCost is the part of the whole audit's priced cost (1 for the whole audit).
	OfTotalCost float64 `json:"of_total_cost"`
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
		Thinking:   ratio(float64(t.thinkOut)*w.Output, total),
		NonMain:    ratio(sub, total),
	}
}

func costShares(t *Totals) SpendShares {
	c := &t.cost
	total := c.Total().Plus(t.unsplit).Float() // the kinds leave out the unsplit recorded cost
	return SpendShares{
		Input:      ratio(c.Input.Float(), total),
		Output:     ratio(c.Output.Float(), total),
		CacheRead:  ratio(c.CacheRead.Float(), total),
		CacheWrite: ratio(c.CacheWrite.Float(), total),
		Thinking:   ratio(t.think.Float(), total),
		NonMain:    ratio(t.nonMain.Float(), total),
	}
}

// SharesOf derives the shares of t; whole is the audit's total spend (for OfTotal) and wholeCost
// its priced cost in USD (for OfTotalCost).
func SharesOf(t *Totals, whole, wholeCost float64) Shares {
	s := Shares{
		Cost:               costShares(t),
		OfTotalCost:        ratio(t.PricedCostUSD, wholeCost),
		Spend:              spendShares(t, BriefWeights, t.Spend, t.SubSpend),
		TTL:                spendShares(t, TTLWeights, t.SpendTTL, t.SubSpendTTL),
		OfTotal:            ratio(t.Spend, whole),
		ThinkingOfOutput:   ratio(float64(t.thinkOut), float64(t.OutputTokens)),
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
	// Models breaks the row down by model (--breakdown), largest cost first.
	Models []Group `json:"models,omitempty"`
	// Start and End bound a 5-hour billing block (--by block).
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
}

// GroupBy names a breakdown.
type GroupBy string

// Breakdowns.
const (
	ByDay     GroupBy = "day"
	ByWeek    GroupBy = "week"
	ByMonth   GroupBy = "month"
	BySession GroupBy = "session"
	ByProject GroupBy = "project"
	ByModel   GroupBy = "model"
	ByEffort  GroupBy = "effort"
	ByClass   GroupBy = "class"
	ByBlock   GroupBy = "block"
)

// GroupBys lists the breakdowns, for flag validation and help.
var GroupBys = []GroupBy{ByDay, ByWeek, ByMonth, BySession, ByProject, ByModel, ByEffort, ByClass, ByBlock}

// GroupByNames are the GroupBys as the --by flag spells them.
func GroupByNames() []string {
	names := make([]string, len(GroupBys))
	for i, b := range GroupBys {
		names[i] = string(b)
	}
	return names
}

// chronological breakdowns keep time order rather than cost order.
func (by GroupBy) chronological() bool {
	return by == ByDay || by == ByWeek || by == ByMonth || by == ByBlock
}

// NoEffort is the effort group of requests that record none and have no label.
const NoEffort = "(none)"

// NoProject is the project group of files outside a projects/ folder.
const NoProject = "(none)"

// Day is the date of a request in loc (nil: UTC): the date of the line whose usage was kept, as
// ccusage assigns a request to a day (its --timezone, default the system's).
func Day(r *transcript.Request, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	return r.UsageTime.In(loc).Format(time.DateOnly)
}

// keyOf is KeyOf with weeks starting on weekStart.
func keyOf(r *transcript.Request, by GroupBy, loc *time.Location, weekStart time.Weekday) string {
	if loc == nil {
		loc = time.UTC
	}
	switch by {
	case BySession:
		return r.Session
	case ByProject:
		if r.Project == "" {
			return NoProject
		}
		return r.Project
	case ByModel:
		return ModelLabel(r)
	case ByEffort:
		if r.Effort == "" {
			return NoEffort
		}
		return r.Effort
	case ByClass:
		return r.Class.String()
	case ByDay:
		return Day(r, loc)
	case ByWeek:
		t := r.UsageTime.In(loc)
		y, m, d := t.Date()
		back := (int(t.Weekday()) - int(weekStart) + 7) % 7
		return time.Date(y, m, d-back, 0, 0, 0, 0, loc).Format(time.DateOnly)
	case ByMonth:
		return r.UsageTime.In(loc).Format("2006-01")
	}
	return ""
}

// Report is the spend audit of a set of requests.
type Report struct {
	Totals Totals  `json:"totals"`
	Shares Shares  `json:"shares"`
	By     GroupBy `json:"by,omitempty"`
	// Timezone is the zone of days, weeks, months and block labels.
	Timezone string  `json:"timezone,omitempty"`
	Groups   []Group `json:"groups"`
	// First and Last are the earliest and latest request lines.
	First time.Time `json:"first,omitzero"`
	Last  time.Time `json:"last,omitzero"`
	// Sessions counts the sessions with at least one of the requests counted: with a date range,
	// those that have requests in it (the files read hold more).
	Sessions int `json:"-"`
}

// Options say how an Aggregator breaks requests down and prices them.
type Options struct {
	By        GroupBy
	Location  *time.Location // days, weeks, months and block labels (nil: UTC)
	Prices    *pricing.Table // nil: pricing.Embedded()
	Breakdown bool           // per-model totals inside each group
	WeekStart time.Weekday   // the first day of a week (Sunday, the zero value, is ccusage's default)
	// Blocks, with By ByBlock, keeps the blocks whose start falls on its days (in its Location), as
	// ccusage's blocks report applies --since/--until: blocks are cut from every request, then
	// selected whole; the totals are those of the kept blocks. (Other views select requests by day:
	// DateRange, Filter.)
	Blocks DateRange
}

// Aggregator builds a Report one request at a time. It is a transcript.Sink: a scan streams its
// requests into it instead of holding them all, and retracts the few that a later copy changes.
type Aggregator struct {
	opt     Options
	rep     *Report
	index   map[string]int
	models  []map[string]int // per group: model → index in its Models
	partial bool
	// held are the requests of a block breakdown (a multiset: blocks are cut at Report, in time order).
	held map[transcript.Request]int
	// sessions counts the requests added of each session.
	sessions map[string]int
}

var _ transcript.Sink = (*Aggregator)(nil)

// NewAggregator starts a report; by may be "" for no breakdown.
func NewAggregator(by GroupBy) *Aggregator { return New(Options{By: by}) }

// New starts a report with opt.
func New(opt Options) *Aggregator {
	if opt.Prices == nil {
		opt.Prices = pricing.Embedded()
	}
	if opt.Location == nil {
		opt.Location = time.UTC
	}
	a := &Aggregator{opt: opt, rep: &Report{By: opt.By, Groups: []Group{}}, index: map[string]int{}, sessions: map[string]int{}}
	if opt.By != "" {
		a.rep.Timezone = opt.Location.String()
	}
	if opt.By == ByBlock {
		a.held = map[transcript.Request]int{}
	}
	return a
}

// Add counts one request.
func (a *Aggregator) Add(r *transcript.Request) {
	rep := a.rep
	c := Price(a.opt.Prices, r)
	rep.Totals.Add(r, c)
	a.sessions[r.Session]++
	if rep.First.IsZero() || r.First.Before(rep.First) {
		rep.First = r.First
	}
	if r.Last.After(rep.Last) {
		rep.Last = r.Last
	}
	a.partial = a.partial || VersionFamily(r.Version) == FamilyPartial
	if a.held != nil {
		a.held[*r]++
		return
	}
	if g := a.group(r); g != nil {
		g.Totals.Add(r, c)
		if m := a.model(g, r); m != nil {
			m.Totals.Add(r, c)
		}
	}
}

// Remove takes out a request added before. The span (First, Last) and the partial-output flag stay:
// a scan only retracts a request to add a version of it that spans at least as much and keeps its
// version.
func (a *Aggregator) Remove(r *transcript.Request) {
	c := Price(a.opt.Prices, r)
	a.rep.Totals.Remove(r, c)
	if a.sessions[r.Session]--; a.sessions[r.Session] <= 0 {
		delete(a.sessions, r.Session)
	}
	if a.held != nil {
		if a.held[*r]--; a.held[*r] <= 0 {
			delete(a.held, *r)
		}
		return
	}
	if g := a.group(r); g != nil {
		g.Totals.Remove(r, c)
		if m := a.model(g, r); m != nil {
			m.Totals.Remove(r, c)
		}
	}
}

func (a *Aggregator) group(r *transcript.Request) *Group {
	rep := a.rep
	if rep.By == "" {
		return nil
	}
	if rep.By == ByModel {
		return a.groupOf(a.opt.Prices.Name(ModelLabel(r))) // the name its alias gives it
	}
	return a.groupOf(keyOf(r, rep.By, a.opt.Location, a.opt.WeekStart))
}

func (a *Aggregator) groupOf(k string) *Group {
	rep := a.rep
	j, ok := a.index[k]
	if !ok {
		j = len(rep.Groups)
		a.index[k] = j
		rep.Groups = append(rep.Groups, Group{Key: k})
		a.models = append(a.models, nil)
	}
	return &rep.Groups[j]
}

// model is r's model row inside g (nil without Breakdown).
func (a *Aggregator) model(g *Group, r *transcript.Request) *Group {
	if !a.opt.Breakdown {
		return nil
	}
	gi := a.index[g.Key]
	if a.models[gi] == nil {
		a.models[gi] = map[string]int{}
	}
	k := a.opt.Prices.Name(ModelLabel(r))
	j, ok := a.models[gi][k]
	if !ok {
		j = len(g.Models)
		a.models[gi][k] = j
		g.Models = append(g.Models, Group{Key: k})
	}
	return &g.Models[j]
}

// BlockHours is the length of a billing block.
const BlockHours = 5

// blocks cuts the held requests into 5-hour billing blocks as ccusage does: in time order, a block
// starts at the UTC hour of its first request and takes the requests until one comes more than 5
// hours after the block's start or after the previous request.
func (a *Aggregator) blocks() {
	reqs := make([]transcript.Request, 0, len(a.held))
	for r, n := range a.held {
		for range n {
			reqs = append(reqs, r)
		}
	}
	sort.Slice(reqs, func(i, j int) bool { return requestLess(&reqs[i], &reqs[j]) })
	a.rep.Groups = a.rep.Groups[:0]
	a.models = a.models[:0]
	clear(a.index)
	const span = BlockHours * time.Hour
	var start, last time.Time
	var g *Group
	// With a block range, the totals and the span are those of the kept blocks.
	var kept *Totals
	var first, lastLine time.Time
	if !a.opt.Blocks.Open() {
		kept = &Totals{}
		clear(a.sessions) // the sessions of the kept blocks
		defer func() { a.rep.Totals, a.rep.First, a.rep.Last = *kept, first, lastLine }()
	}
	for i := range reqs {
		r := &reqs[i]
		t := r.UsageTime
		if g == nil || t.Sub(start) > span || t.Sub(last) > span {
			start = t.UTC().Truncate(time.Hour)
			key := start.In(a.opt.Location).Format("2006-01-02 15:04")
			g = a.groupOf(key)
			g.Start, g.End = start, start.Add(span)
		}
		last = t
		if !a.opt.Blocks.Open() && !a.opt.Blocks.containsDay(start.In(a.opt.Blocks.Location).Format(time.DateOnly)) {
			continue // the block is dropped whole; the group, left empty, is not reported
		}
		c := Price(a.opt.Prices, r)
		if kept != nil {
			kept.Add(r, c)
			a.sessions[r.Session]++
			if kept.Requests == 1 || r.First.Before(first) {
				first = r.First
			}
			if r.Last.After(lastLine) {
				lastLine = r.Last
			}
		}
		g.Totals.Add(r, c)
		if m := a.model(g, r); m != nil {
			m.Totals.Add(r, c)
		}
	}
}

// requestLess orders requests by the time of their kept line, then by what tells them apart, so
// that a multiset of requests comes out in one order.
func requestLess(x, y *transcript.Request) bool {
	if !x.UsageTime.Equal(y.UsageTime) {
		return x.UsageTime.Before(y.UsageTime)
	}
	if x.File != y.File {
		return x.File < y.File
	}
	if !x.First.Equal(y.First) {
		return x.First.Before(y.First)
	}
	if x.Model != y.Model {
		return x.Model < y.Model
	}
	return x.TotalTokens() < y.TotalTokens()
}

// Report derives the shares and orders the groups: by cost, largest first (days, weeks, months and
// blocks chronologically, classes in their fixed order), ties by weighted spend, then key. Groups
// left empty by retractions are dropped.
func (a *Aggregator) Report() *Report {
	rep := a.rep
	if a.held != nil {
		a.blocks()
	}
	rep.Totals.Settle()
	rep.Sessions = len(a.sessions)
	rep.Shares = SharesOf(&rep.Totals, rep.Totals.Spend, rep.Totals.PricedCostUSD)
	rep.Shares.OutputPartialVersion = a.partial
	groups := rep.Groups[:0]
	for _, g := range rep.Groups {
		if g.Totals.Requests > 0 {
			settle(&g, &rep.Totals)
			groups = append(groups, g)
		}
	}
	rep.Groups = groups
	sortGroups(rep.Groups, rep.By)
	clear(a.index) // positions changed: keep counting into the right groups after a Report
	models := make([]map[string]int, len(rep.Groups))
	for i, g := range rep.Groups {
		a.index[g.Key] = i
		if len(g.Models) > 0 {
			models[i] = map[string]int{}
			for j, m := range g.Models {
				models[i][m.Key] = j
			}
		}
	}
	a.models = models
	return rep
}

// settle derives a group's and its model rows' figures; empty model rows are dropped.
func settle(g *Group, whole *Totals) {
	g.Totals.Settle()
	g.Shares = SharesOf(&g.Totals, whole.Spend, whole.PricedCostUSD)
	if g.Models == nil {
		return
	}
	ms := g.Models[:0]
	for _, m := range g.Models {
		if m.Totals.Requests > 0 {
			m.Totals.Settle()
			m.Shares = SharesOf(&m.Totals, whole.Spend, whole.PricedCostUSD)
			ms = append(ms, m)
		}
	}
	g.Models = ms
	sortGroups(g.Models, ByModel)
}

func sortGroups(groups []Group, by GroupBy) {
	classOrder := map[string]int{}
	for c := transcript.ClassMain; c <= transcript.ClassSideQuestion; c++ {
		classOrder[c.String()] = int(c)
	}
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		switch {
		case by == ByBlock:
			return a.Start.Before(b.Start)
		case by.chronological():
			return a.Key < b.Key
		case by == ByClass:
			return classOrder[a.Key] < classOrder[b.Key]
		}
		if a.Totals.PricedCostUSD != b.Totals.PricedCostUSD {
			return a.Totals.PricedCostUSD > b.Totals.PricedCostUSD
		}
		if a.Totals.Spend != b.Totals.Spend {
			return a.Totals.Spend > b.Totals.Spend
		}
		return a.Key < b.Key
	})
}
