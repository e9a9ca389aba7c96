// Package pricing prices Claude API usage in USD as ccusage 20.0.24 does offline: an embedded,
// versioned table of per-token prices (claude.json, extracted from the ccusage executable by
// internal/tools/genprices), ccusage's model-name matching and its cost formula (1-hour cache
// writes at twice the input price, long-context tiers above 200,000 tokens, fast mode multiplier).
// Costs are integer picodollars, so sums are exact and independent of order, and a cost added can
// be taken out again. See docs/decisions.md#cost-and-date-views-in-the-audit-issue-13.
//
// The package is pure: readers in, values out.
package pricing

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/bits"
	"sort"
	"strings"
	"sync"
)

//go:embed claude.json
var embedded []byte

// Pico is an amount of money in picodollars (1e-12 USD): one request's cost or one of its parts, at
// most MaxPart each. Sums of many requests are a Sum.
type Pico int64

// USD converts to dollars.
func (p Pico) USD() float64 { return float64(p) / 1e12 }

// MaxPart bounds one token kind's cost of one request: 2^60 picodollars, about $1.15 million. The
// embedded table's dearest rate ($75 per million tokens) at the most tokens a request may carry
// (10^10, transcript.MaxTokens) is $750,000, so only a --pricing rate above $115 per million tokens
// meets the bound, and a request's parts together stay inside int64 (5 × 2^60 < 2^63). Before the
// bound, one such request, or thirteen at the embedded price, wrapped the int64 sums into a negative
// total (the audit review, docs/decisions.md#costs-past-int64).
const MaxPart Pico = 1 << 60

// times is n tokens at rate, at most MaxPart.
func times(n uint64, rate Pico) Pico {
	if rate <= 0 {
		return 0
	}
	if n > uint64(MaxPart/rate) {
		return MaxPart
	}
	return Pico(n) * rate
}

// FromUSD is usd in picodollars, rounded, within ±MaxPart (NaN is 0): a recorded cost is read from
// the transcript, and a float past int64 converts to anything.
func FromUSD(usd float64) Pico { return Round(usd * 1e12) }

// Round is v picodollars rounded to a whole number within ±MaxPart (NaN is 0).
func Round(v float64) Pico {
	v = math.Round(v)
	switch {
	case math.IsNaN(v):
		return 0
	case v >= float64(MaxPart):
		return MaxPart
	case v <= -float64(MaxPart):
		return -MaxPart
	}
	return Pico(v)
}

// Sum is an exact 128-bit sum of Pico amounts: costs added and taken out again in any order give the
// same sum, and no corpus reaches its bound (int64 picodollars end at $9.2 million).
type Sum struct {
	hi int64
	lo uint64
}

// Add adds p to s, sign 1 or -1.
func (s *Sum) Add(p Pico, sign int) {
	v := int64(p) * int64(sign) // |p| ≤ 5 × MaxPart: no overflow
	var carry uint64
	s.lo, carry = bits.Add64(s.lo, uint64(v), 0)
	s.hi += int64(carry) + v>>63 // v>>63 is v's sign extended into the high word
}

// Plus is s + t.
func (s Sum) Plus(t Sum) Sum {
	lo, carry := bits.Add64(s.lo, t.lo, 0)
	return Sum{hi: s.hi + t.hi + int64(carry), lo: lo}
}

// Float is s in picodollars, as a float64.
func (s Sum) Float() float64 {
	if s.hi < 0 { // negated first: −1·2^64 + (2^64 − 3) would round to 0
		lo, carry := bits.Add64(^s.lo, 1, 0)
		return -(float64(^s.hi+int64(carry))*0x1p64 + float64(lo))
	}
	return float64(s.hi)*0x1p64 + float64(s.lo)
}

// USD converts to dollars.
func (s Sum) USD() float64 { return s.Float() / 1e12 }

// SumParts sums Parts by kind (Sum).
type SumParts struct {
	Input, Output, CacheWrite, CacheRead, Premium1h Sum
}

// Add adds q to p, sign 1 or -1.
func (p *SumParts) Add(q Parts, sign int) {
	p.Input.Add(q.Input, sign)
	p.Output.Add(q.Output, sign)
	p.CacheWrite.Add(q.CacheWrite, sign)
	p.CacheRead.Add(q.CacheRead, sign)
	p.Premium1h.Add(q.Premium1h, sign)
}

// Total is the sum of the kinds (Premium1h is a part of CacheWrite).
func (p SumParts) Total() Sum {
	return p.Input.Plus(p.Output).Plus(p.CacheWrite).Plus(p.CacheRead)
}

// longContext is the token count above which the *_above rates apply to a token kind of one request
// (LiteLLM's "_above_200k_tokens" fields).
const longContext = 200_000

// Price is one model's per-token prices in USD, as stored in the table's JSON.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheWrite float64 `json:"cache_write"` // 5-minute cache write
	CacheRead  float64 `json:"cache_read"`
	// Long-context rates (nil: the base rate applies to all tokens).
	InputAbove      *float64 `json:"input_above,omitempty"`
	OutputAbove     *float64 `json:"output_above,omitempty"`
	CacheWriteAbove *float64 `json:"cache_write_above,omitempty"`
	CacheReadAbove  *float64 `json:"cache_read_above,omitempty"`
	// WholeRequestThreshold, when set, switches the whole request to the *_above rates once its
	// context (input + cache read + cache writes) exceeds it; otherwise each kind's tokens above
	// 200,000 are billed at its *_above rate.
	WholeRequestThreshold uint64 `json:"whole_request_threshold,omitempty"`
	// FastMultiplier multiplies the cost of requests made in fast mode (usage.speed "fast"); 0 is 1.
	FastMultiplier float64 `json:"fast_multiplier,omitempty"`
	// ExactOnly entries price only a request that names them exactly (a separately priced tier).
	ExactOnly bool `json:"exact_only,omitempty"`
}

// Usage is what one request is billed for.
type Usage struct {
	Input, Output, CacheWrite5m, CacheWrite1h, CacheRead uint64
	Fast                                                 bool
}

// Tokens is the total of all kinds.
func (u Usage) Tokens() uint64 {
	return u.Input + u.Output + u.CacheWrite5m + u.CacheWrite1h + u.CacheRead
}

func picoAbove(base float64, above *float64) Pico {
	if above == nil {
		return FromUSD(base)
	}
	return FromUSD(*above)
}

// tiered prices n tokens at base, and those above 200,000 at above when the model has such a rate.
func tiered(n uint64, base float64, above *float64) Pico {
	if above != nil && n > longContext {
		return min(longContext*FromUSD(base)+times(n-longContext, FromUSD(*above)), MaxPart)
	}
	return times(n, FromUSD(base))
}

// Parts is the cost of one request by token kind. CacheWrite includes Premium1h: what the 1-hour
// cache writes cost above the 5-minute price.
type Parts struct {
	Input, Output, CacheWrite, CacheRead, Premium1h Pico
}

// Total is the request's cost.
func (p Parts) Total() Pico { return p.Input + p.Output + p.CacheWrite + p.CacheRead }

// Cost is the price of u (see Parts).
func (p *Price) Cost(u Usage) Pico { return p.Parts(u).Total() }

// Parts prices u with ccusage's formula: a 1-hour cache write costs twice the input price (twice the
// long-context input price above the threshold), and fast mode multiplies the whole.
func (p *Price) Parts(u Usage) Parts {
	in1h := 2 * FromUSD(p.Input)
	var in1hAbove *float64
	if p.InputAbove != nil {
		v := 2 * *p.InputAbove
		in1hAbove = &v
	}
	var c Parts
	var w1h, w1hAt5m Pico
	if t := p.WholeRequestThreshold; t > 0 {
		long := u.Input+u.CacheRead+u.CacheWrite5m+u.CacheWrite1h > t
		rate := func(base float64, above *float64) Pico {
			if long {
				return picoAbove(base, above)
			}
			return FromUSD(base)
		}
		r1h := in1h
		if long && in1hAbove != nil {
			r1h = FromUSD(*in1hAbove)
		}
		c.Input = times(u.Input, rate(p.Input, p.InputAbove))
		c.Output = times(u.Output, rate(p.Output, p.OutputAbove))
		c.CacheRead = times(u.CacheRead, rate(p.CacheRead, p.CacheReadAbove))
		w1h = times(u.CacheWrite1h, r1h)
		w1hAt5m = times(u.CacheWrite1h, rate(p.CacheWrite, p.CacheWriteAbove))
		c.CacheWrite = min(times(u.CacheWrite5m, rate(p.CacheWrite, p.CacheWriteAbove))+w1h, MaxPart)
	} else {
		c.Input = tiered(u.Input, p.Input, p.InputAbove)
		c.Output = tiered(u.Output, p.Output, p.OutputAbove)
		c.CacheRead = tiered(u.CacheRead, p.CacheRead, p.CacheReadAbove)
		if in1hAbove != nil && u.CacheWrite1h > longContext {
			w1h = min(longContext*in1h+times(u.CacheWrite1h-longContext, FromUSD(*in1hAbove)), MaxPart)
		} else {
			w1h = times(u.CacheWrite1h, in1h)
		}
		w1hAt5m = tiered(u.CacheWrite1h, p.CacheWrite, p.CacheWriteAbove)
		c.CacheWrite = min(tiered(u.CacheWrite5m, p.CacheWrite, p.CacheWriteAbove)+w1h, MaxPart)
	}
	c.Premium1h = w1h - w1hAt5m
	if u.Fast && p.FastMultiplier > 0 && p.FastMultiplier != 1 {
		m := func(v Pico) Pico { return Round(float64(v) * p.FastMultiplier) }
		c = Parts{m(c.Input), m(c.Output), m(c.CacheWrite), m(c.CacheRead), m(c.Premium1h)}
	}
	return c
}

// Table is a price table with ccusage's lookup. It is safe for concurrent use.
type Table struct {
	// Source, Version and Extracted say where the prices come from.
	Source    string
	Version   string
	Extracted string

	primary  map[string]Price
	fallback map[string]Price
	// exactOnly indexes the fallback's exact-only ids by their separator-normalised spelling; ""
	// marks a spelling two ids share (it names neither).
	exactOnly map[string]string

	// mode is where a request's cost comes from (Mode); "" is ModeAuto.
	mode Mode
	// aliases rename models and price the ones the table lacks (WithAliases).
	aliases map[string]string

	mu    sync.Mutex
	cache map[string]*Price
}

// Describe says where the prices of t come from, for the audit's text output and report: the
// ccusage table and, when a --pricing file overrode it, that file.
func (t *Table) Describe(override string) string {
	s := fmt.Sprintf("ccusage %s offline prices (table extracted %s)", t.Version, t.Extracted)
	if override != "" {
		s += ", overridden by " + override
	}
	if n := len(t.aliases); n > 0 {
		s += fmt.Sprintf(", %d model alias", n)
		if n > 1 {
			s += "es"
		}
		s += " from " + AliasesEnv
	}
	switch t.Mode() {
	case ModeCalculate:
		s += ", recorded costUSD ignored (--cost-mode calculate)"
	case ModeDisplay:
		s = "the costUSD recorded in the transcripts only (--cost-mode display: a request without one counts $0)"
	}
	return s
}

// Mode says where a request's cost comes from, as ccusage's --mode does
// (docs/decisions.md#cost-and-date-views-in-the-audit-issue-13). The transcripts of Claude Code ≈1.0.x
// record a costUSD on each assistant line; later versions do not.
type Mode string

// Cost modes.
const (
	// ModeAuto uses a request's recorded costUSD when its line has one (even 0), else its price from
	// the table: ccusage's default.
	ModeAuto Mode = "auto"
	// ModeCalculate always prices the tokens, ignoring recorded costs.
	ModeCalculate Mode = "calculate"
	// ModeDisplay uses only recorded costs: a request without one costs 0, and no price is looked up.
	ModeDisplay Mode = "display"
)

// Modes lists the cost modes, the default first.
var Modes = []Mode{ModeAuto, ModeCalculate, ModeDisplay}

// ParseMode reads a cost mode ("" is ModeAuto).
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return ModeAuto, nil
	}
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("%q: want auto, calculate or display", s)
}

// Mode is the table's cost mode.
func (t *Table) Mode() Mode {
	if t.mode == "" {
		return ModeAuto
	}
	return t.mode
}

// WithMode returns t with cost mode m (t itself is unchanged).
func (t *Table) WithMode(m Mode) *Table {
	out := t.clone()
	out.mode = m
	return out
}

// clone copies t's prices and settings (the maps are shared: a table never changes them) with an
// empty lookup cache.
func (t *Table) clone() *Table {
	return &Table{Source: t.Source, Version: t.Version, Extracted: t.Extracted, primary: t.primary, fallback: t.fallback,
		exactOnly: t.exactOnly, mode: t.mode, aliases: t.aliases, cache: map[string]*Price{}}
}

// File is the JSON form of a table (claude.json, or a --pricing file).
type File struct {
	Source   string           `json:"source"`
	Version  string           `json:"ccusage_version"`
	Date     string           `json:"extracted"`
	Note     string           `json:"note,omitempty"`
	Models   map[string]Price `json:"models"`
	Fallback map[string]Price `json:"fallback,omitempty"`
}

var (
	embeddedOnce  sync.Once
	embeddedTable *Table
)

// Embedded returns the table built into tune (shared; do not Override it).
func Embedded() *Table {
	embeddedOnce.Do(func() {
		t, err := parse(embedded, "claude.json")
		if err != nil {
			panic(err) // the embedded table is tested
		}
		embeddedTable = t
	})
	return embeddedTable
}

func parse(b []byte, name string) (*Table, error) {
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(f.Models) == 0 {
		return nil, fmt.Errorf("%s: no \"models\" object (want {\"models\": {\"MODEL\": {\"input\": USD per token, ...}}})", name)
	}
	for m, p := range f.Models {
		if m == "" {
			return nil, fmt.Errorf("%s: a model with an empty name", name)
		}
		if err := p.check(); err != nil {
			return nil, fmt.Errorf("%s: model %q: %w", name, m, err)
		}
	}
	t := &Table{Source: f.Source, Version: f.Version, Extracted: f.Date, primary: f.Models, fallback: f.Fallback}
	t.index()
	return t, nil
}

func (p *Price) check() error {
	for _, v := range []*float64{&p.Input, &p.Output, &p.CacheWrite, &p.CacheRead, p.InputAbove, p.OutputAbove, p.CacheWriteAbove, p.CacheReadAbove} {
		// $1,000 per million tokens is far above any model's price; a request's part past MaxPart is held
		// there, and sums are 128-bit (docs/decisions.md#costs-past-int64).
		if v != nil && (math.IsNaN(*v) || *v < 0 || *v > 1e-3) {
			return fmt.Errorf("price %v is not a USD amount per token (0 to 0.001)", *v)
		}
	}
	if p.FastMultiplier < 0 || p.FastMultiplier > 100 {
		return fmt.Errorf("fast_multiplier %v out of range", p.FastMultiplier)
	}
	return nil
}

func (t *Table) index() {
	t.exactOnly = map[string]string{}
	for id, p := range t.fallback {
		if !p.ExactOnly {
			continue
		}
		n := normalized(id)
		if prev, ok := t.exactOnly[n]; ok && prev != id {
			t.exactOnly[n] = ""
		} else {
			t.exactOnly[n] = id
		}
	}
	t.cache = map[string]*Price{}
}

// Override reads a --pricing file (the JSON form of claude.json; only "models" is required) and
// returns a table in which its models replace or add to t's. The file's prices are whole entries:
// a model named there takes no field from t.
func (t *Table) Override(r io.Reader, name string) (*Table, error) {
	b, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	o, err := parse(b, name)
	if err != nil {
		return nil, err
	}
	out := &Table{Source: t.Source + "; overridden by " + name, Version: t.Version, Extracted: t.Extracted,
		primary: map[string]Price{}, fallback: map[string]Price{}, mode: t.mode, aliases: t.aliases}
	for k, v := range t.primary {
		out.primary[k] = v
	}
	for k, v := range o.primary {
		out.primary[k] = v
	}
	for k, v := range t.fallback {
		out.fallback[k] = v
	}
	for k, v := range o.fallback {
		out.fallback[k] = v
	}
	out.index()
	return out, nil
}

// Models lists the table's primary model ids, sorted.
func (t *Table) Models() []string {
	out := make([]string, 0, len(t.primary))
	for k := range t.primary {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Lookup finds the price of a model as ccusage 20.0.24 does: the exact id; else the longest table
// id that contains the name or is contained in it at word boundaries (not splitting a version
// number; '.', '@' and '-' read alike), unless the name is a spelling of a separately priced tier
// that only an exact request may use; else the same in the fallback table; else, when the model
// has an alias (WithAliases), the same for the alias. ok is false when nothing matches: the cost is
// then unknown.
func (t *Table) Lookup(model string) (Price, bool) {
	t.mu.Lock()
	p, hit := t.cache[model]
	t.mu.Unlock()
	if !hit {
		p = t.lookup(model)
		t.mu.Lock()
		t.cache[model] = p
		t.mu.Unlock()
	}
	if p == nil {
		return Price{}, false
	}
	return *p, true
}

func (t *Table) lookup(model string) *Price {
	// A model's own price wins over its alias's (ccusage's rule: the alias only renames it then).
	if p := t.lookupName(model); p != nil || len(t.aliases) == 0 {
		return p
	}
	if a := t.Name(model); a != model {
		return t.lookupName(a)
	}
	return nil
}

func (t *Table) lookupName(model string) *Price {
	if model == "" {
		return nil
	}
	if p, ok := t.primary[model]; ok {
		return &p
	}
	if !t.isExactOnly(model) {
		if p := fuzzy(t.primary, model, nil); p != nil {
			return p
		}
	}
	if p, ok := t.fallback[model]; ok {
		return &p
	}
	if id, ok := t.exactOnly[normalized(model)]; ok {
		if id == "" {
			return nil
		}
		p := t.fallback[id]
		return &p
	}
	return fuzzy(t.fallback, model, func(p Price) bool { return p.ExactOnly })
}

func (t *Table) isExactOnly(model string) bool {
	if p, ok := t.fallback[model]; ok && p.ExactOnly {
		return true
	}
	_, ok := t.exactOnly[normalized(model)]
	return ok
}

// fuzzy returns the entry of the longest matching id (ties: the alphabetically first), skipping
// entries skip rejects.
func fuzzy(entries map[string]Price, model string, skip func(Price) bool) *Price {
	norm := normalized(model)
	best := ""
	found := false
	for id, p := range entries {
		if skip != nil && skip(p) {
			continue
		}
		if !keyMatches(id, model, norm) {
			continue
		}
		if !found || len(id) > len(best) || (len(id) == len(best) && id < best) {
			best, found = id, true
		}
	}
	if !found {
		return nil
	}
	p := entries[best]
	return &p
}

// normalized reads '.' and '@' as '-' (claude-opus-4.6 and claude-opus-4-6 name one model).
func normalized(s string) string {
	if !strings.ContainsAny(s, ".@") {
		return s
	}
	return strings.NewReplacer(".", "-", "@", "-").Replace(s)
}

func keyMatches(id, model, normModel string) bool {
	if containsKey(model, id) || containsKey(id, model) {
		return true
	}
	n := normalized(id)
	return containsKey(normModel, n) || containsKey(n, normModel)
}

func isBoundary(c byte) bool {
	return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9')
}

// containsKey reports whether key occurs in value between non-alphanumeric bytes, and is not
// followed by a further version number (claude-opus-4 is not in claude-opus-4-6, but is in
// claude-opus-4-20250514: eight digits are a date).
func containsKey(value, key string) bool {
	if key == "" {
		return false
	}
	for from := 0; ; {
		i := strings.Index(value[from:], key)
		if i < 0 {
			return false
		}
		i += from
		from = i + 1
		if i > 0 && !isBoundary(value[i-1]) {
			continue
		}
		if suffixAllows(key, value[i+len(key):]) {
			return true
		}
	}
}

func suffixAllows(key, suffix string) bool {
	if suffix == "" {
		return true
	}
	if !isBoundary(suffix[0]) {
		return false
	}
	last := key[len(key)-1]
	if last < '0' || last > '9' || (suffix[0] != '-' && suffix[0] != '.') {
		return true
	}
	rest := suffix[1:]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 {
		return true
	}
	return n == 8 && (n == len(rest) || isBoundary(rest[n]))
}
