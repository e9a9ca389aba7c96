// Command genprices extracts the Claude price table that ccusage embeds in its binary and writes it
// as internal/pricing/claude.json (docs/decisions.md#cost-and-date-views-in-the-audit-issue-13).
//
//	go run ./internal/tools/genprices -ccusage node_modules/@ccusage/ccusage-linux-x64/bin/ccusage \
//	    -version 20.0.24 -date 2026-12-02 > internal/pricing/claude.json
//
// ccusage ships its offline pricing as raw-deflate JSON snapshots inside the executable: LiteLLM
// prices (compact keys i, o, cc, cr, ia, oa, cca, cra, ctx, fast) and a models.dev snapshot (rates
// per million tokens, long-context tiers, exactOnly). The command finds both, then builds what
// ccusage's offline lookup would use for the Claude family:
//
//   - primary: every LiteLLM key that contains "claude", then ccusage's built-in Claude rates for the
//     keys LiteLLM lacks, a missing cache write priced at input ×1.25 and a missing cache read at
//     input ×0.1, the fast multiplier from the entry or ccusage's fast-multiplier overrides, and the
//     long-context tier of the models.dev entry of the same id where the LiteLLM entry has none;
//   - fallback: every models.dev key that contains "claude" (consulted only when the primary table
//     has no match, with its exactOnly flag).
//
// It never runs in CI: the table it writes is committed.
package main

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/ldd-tools/tune/internal/pricing"
)

type price = pricing.Price

func main() {
	bin := flag.String("ccusage", "", "path of the ccusage executable (the @ccusage/ccusage-<os>-<arch> package's bin/ccusage)")
	version := flag.String("version", "", "ccusage version the executable is")
	date := flag.String("date", "", "extraction date (YYYY-MM-DD)")
	flag.Parse()
	if *bin == "" || *version == "" || *date == "" {
		fmt.Fprintln(os.Stderr, "usage: genprices -ccusage PATH -version V -date YYYY-MM-DD")
		os.Exit(2)
	}
	data, err := os.ReadFile(*bin)
	if err != nil {
		fail(err)
	}
	litellm, modelsDev := findSnapshots(data)
	if litellm == nil || modelsDev == nil {
		fail(fmt.Errorf("%s: embedded LiteLLM or models.dev snapshot not found", *bin))
	}
	fast := fastOverrides(data)
	t := pricing.File{
		Source: "ccusage " + *version + " executable (npm @ccusage/ccusage-linux-x64), embedded LiteLLM and models.dev snapshots " +
			"and built-in Claude rates, Claude family only; extracted by internal/tools/genprices",
		Version: *version, Date: *date,
		Note: "USD per token. cache_write is the 5-minute write; a 1-hour write costs input ×2 (input_above ×2 above the threshold). " +
			"*_above apply to the tokens of a kind above 200,000 in one request, or, with whole_request_threshold, to the whole request once its context exceeds it.",
		Models: map[string]price{}, Fallback: map[string]price{},
	}
	for k, v := range litellm {
		if !strings.Contains(strings.ToLower(k), "claude") {
			continue
		}
		var c struct {
			I, O                float64
			CC, CR, IA, OA, CCA *float64
			CRA                 *float64
			Fast                *float64
		}
		if err := json.Unmarshal(v, &c); err != nil {
			fail(fmt.Errorf("litellm %s: %w", k, err))
		}
		p := price{Input: c.I, Output: c.O, CacheWrite: c.I * 1.25, CacheRead: c.I * 0.1,
			InputAbove: c.IA, OutputAbove: c.OA, CacheWriteAbove: c.CCA, CacheReadAbove: c.CRA}
		if c.CC != nil {
			p.CacheWrite = *c.CC
		}
		if c.CR != nil {
			p.CacheRead = *c.CR
		}
		if c.Fast != nil {
			p.FastMultiplier = *c.Fast
		} else {
			p.FastMultiplier = fast.multiplier(k)
		}
		t.Models[k] = p
	}
	for k, p := range builtins {
		if _, ok := t.Models[k]; !ok {
			p.FastMultiplier = fast.multiplier(k)
			t.Models[k] = p
		}
	}
	md := map[string]price{}
	for k, v := range modelsDev {
		var m struct {
			ID   string
			Cost *struct {
				Input, Output         *float64
				CacheRead, CacheWrite *float64 `json:"-"`
				Tiers                 []struct {
					Input, Output *float64
					Tier          *struct {
						Type string
						Size uint64
					}
				}
			}
			ExactOnly bool `json:"exactOnly"`
		}
		if err := json.Unmarshal(v, &m); err != nil {
			fail(fmt.Errorf("models.dev %s: %w", k, err))
		}
		// The cache fields have underscores; read them apart.
		var raw struct {
			Cost struct {
				CacheRead  *float64 `json:"cache_read"`
				CacheWrite *float64 `json:"cache_write"`
				Tiers      []struct {
					CacheRead  *float64 `json:"cache_read"`
					CacheWrite *float64 `json:"cache_write"`
				}
			}
		}
		_ = json.Unmarshal(v, &raw)
		id := k
		if m.ID != "" {
			id = m.ID
		}
		if m.Cost == nil || m.Cost.Input == nil || m.Cost.Output == nil || (*m.Cost.Input == 0 && *m.Cost.Output == 0) {
			continue
		}
		in := *m.Cost.Input / 1e6
		p := price{Input: in, Output: *m.Cost.Output / 1e6, CacheWrite: in * 1.25, CacheRead: in * 0.1, FastMultiplier: 1, ExactOnly: m.ExactOnly}
		if raw.Cost.CacheWrite != nil {
			p.CacheWrite = *raw.Cost.CacheWrite / 1e6
		}
		if raw.Cost.CacheRead != nil {
			p.CacheRead = *raw.Cost.CacheRead / 1e6
		}
		// The lowest context tier, as ccusage keeps it (one band per model).
		best := -1
		for i, tier := range m.Cost.Tiers {
			if tier.Tier == nil || tier.Tier.Type != "context" || tier.Tier.Size == 0 {
				continue
			}
			if best < 0 || tier.Tier.Size < m.Cost.Tiers[best].Tier.Size {
				best = i
			}
		}
		if best >= 0 {
			tier := m.Cost.Tiers[best]
			p.WholeRequestThreshold = tier.Tier.Size
			p.InputAbove, p.OutputAbove = perToken(tier.Input), perToken(tier.Output)
			if best < len(raw.Cost.Tiers) {
				p.CacheWriteAbove, p.CacheReadAbove = perToken(raw.Cost.Tiers[best].CacheWrite), perToken(raw.Cost.Tiers[best].CacheRead)
			}
		}
		md[id] = p
	}
	// Long-context rates of the same id (date suffix removed) where LiteLLM publishes none.
	for k, p := range t.Models {
		if p.InputAbove != nil || p.OutputAbove != nil || p.CacheWriteAbove != nil || p.CacheReadAbove != nil {
			continue
		}
		src, ok := md[withoutDateSuffix(k)]
		if !ok || src.WholeRequestThreshold == 0 {
			continue
		}
		p.InputAbove, p.OutputAbove, p.CacheWriteAbove, p.CacheReadAbove = src.InputAbove, src.OutputAbove, src.CacheWriteAbove, src.CacheReadAbove
		p.WholeRequestThreshold = src.WholeRequestThreshold
		t.Models[k] = p
	}
	for k, p := range md {
		if strings.Contains(strings.ToLower(k), "claude") {
			t.Fallback[k] = p
		}
	}
	out, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		fail(err)
	}
	os.Stdout.Write(append(out, '\n'))
	fmt.Fprintf(os.Stderr, "genprices: %d primary and %d fallback Claude entries (of %d LiteLLM and %d models.dev keys)\n",
		len(t.Models), len(t.Fallback), len(litellm), len(modelsDev))
}

func perToken(perMillion *float64) *float64 {
	if perMillion == nil {
		return nil
	}
	v := *perMillion / 1e6
	return &v
}

// withoutDateSuffix strips -YYYYMMDD or -YYYY-MM-DD, as ccusage does before borrowing tier rates.
func withoutDateSuffix(m string) string {
	digits := func(s string) bool {
		for _, c := range s {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
	if n := len(m); n > 11 && m[n-11] == '-' && digits(m[n-10:n-6]) && m[n-6] == '-' && digits(m[n-5:n-3]) && m[n-3] == '-' && digits(m[n-2:]) {
		return m[:n-11]
	}
	if n := len(m); n > 9 && m[n-9] == '-' && digits(m[n-8:]) {
		return m[:n-9]
	}
	return m
}

// findSnapshots inflates every raw-deflate stream that decodes to a JSON object and keeps the two
// pricing snapshots: LiteLLM's (entries with "i" and "o") and models.dev's (entries with "cost").
func findSnapshots(data []byte) (litellm, modelsDev map[string]json.RawMessage) {
	r := flate.NewReader(bytes.NewReader(nil))
	head := make([]byte, 2)
	for i := 0; i < len(data)-2; i++ {
		// Try every offset, keeping only streams whose first bytes inflate to `{"`.
		if err := r.(flate.Resetter).Reset(bytes.NewReader(data[i:]), nil); err != nil {
			continue
		}
		if _, err := io.ReadFull(r, head); err != nil || head[0] != '{' || head[1] != '"' {
			continue
		}
		rest, err := io.ReadAll(r)
		if err != nil {
			continue
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(append(head, rest...), &m) != nil || len(m) < 50 {
			continue
		}
		for _, v := range m {
			var probe map[string]json.RawMessage
			if json.Unmarshal(v, &probe) != nil {
				break
			}
			if _, ok := probe["i"]; ok && litellm == nil {
				litellm = m
			} else if _, ok := probe["cost"]; ok && modelsDev == nil {
				modelsDev = m
			}
			break
		}
		if litellm != nil && modelsDev != nil {
			return
		}
	}
	return
}

// fastTable is ccusage's fast-multiplier-overrides.json, embedded in the executable as plain text.
type fastTable struct {
	Exact            map[string]float64 `json:"exact"`
	NormalizedPrefix map[string]float64 `json:"normalized_prefix"`
}

func fastOverrides(data []byte) fastTable {
	var f fastTable
	i := bytes.Index(data, []byte(`"normalized_prefix"`))
	if i < 0 {
		fail(fmt.Errorf("fast-multiplier overrides not found"))
	}
	start := bytes.LastIndex(data[:i], []byte(`"exact"`))
	start = bytes.LastIndexByte(data[:start], '{')
	end := bytes.Index(data[i:], []byte("}\n}")) + i + 3
	if err := json.Unmarshal(data[start:end], &f); err != nil {
		fail(fmt.Errorf("fast-multiplier overrides: %w", err))
	}
	return f
}

// multiplier is the override for a model: exact key, else a normalized_prefix base found in a
// '/'- or ':'-separated part of the name and followed by its end or '-'.
func (f fastTable) multiplier(model string) float64 {
	if v, ok := f.Exact[model]; ok {
		return v
	}
	norm := strings.NewReplacer(".", "-", "@", "-").Replace(model)
	bases := make([]string, 0, len(f.NormalizedPrefix))
	for b := range f.NormalizedPrefix {
		bases = append(bases, b)
	}
	sort.Strings(bases)
	for _, part := range strings.FieldsFunc(norm, func(r rune) bool { return r == '/' || r == ':' }) {
		for _, b := range bases {
			j := strings.LastIndex(part, b)
			if j < 0 {
				continue
			}
			if suffix := part[j:]; suffix == b || suffix[len(b)] == '-' {
				return f.NormalizedPrefix[b]
			}
		}
	}
	return 1
}

func ptr(v float64) *float64 { return &v }

// builtins are ccusage's last-resort Claude rates (used only for keys LiteLLM lacks).
var builtins = map[string]price{
	"claude-opus-4-5":           {Input: 5e-6, Output: 25e-6, CacheWrite: 6.25e-6, CacheRead: 0.5e-6},
	"claude-opus-4-6":           {Input: 5e-6, Output: 25e-6, CacheWrite: 6.25e-6, CacheRead: 0.5e-6},
	"claude-opus-4-7":           {Input: 5e-6, Output: 25e-6, CacheWrite: 6.25e-6, CacheRead: 0.5e-6},
	"claude-opus-4-8":           {Input: 5e-6, Output: 25e-6, CacheWrite: 6.25e-6, CacheRead: 0.5e-6},
	"claude-haiku-4-5":          {Input: 1e-6, Output: 5e-6, CacheWrite: 1.25e-6, CacheRead: 0.1e-6},
	"claude-opus-4":             {Input: 15e-6, Output: 75e-6, CacheWrite: 18.75e-6, CacheRead: 1.5e-6},
	"claude-sonnet-4-6":         {Input: 3e-6, Output: 15e-6, CacheWrite: 3.75e-6, CacheRead: 0.3e-6},
	"claude-sonnet-4":           {Input: 3e-6, Output: 15e-6, CacheWrite: 3.75e-6, CacheRead: 0.3e-6, InputAbove: ptr(6e-6), OutputAbove: ptr(22.5e-6), CacheWriteAbove: ptr(7.5e-6), CacheReadAbove: ptr(0.6e-6)},
	"claude-3-5-haiku":          {Input: 0.8e-6, Output: 4e-6, CacheWrite: 1.0e-6, CacheRead: 0.08e-6},
	"claude-3-5-haiku-20241022": {Input: 0.8e-6, Output: 4e-6, CacheWrite: 1.0e-6, CacheRead: 0.08e-6},
	"claude-3-opus":             {Input: 15e-6, Output: 75e-6, CacheWrite: 18.75e-6, CacheRead: 1.5e-6},
	"claude-3-sonnet":           {Input: 3e-6, Output: 15e-6, CacheWrite: 3.75e-6, CacheRead: 0.3e-6},
	"claude-3-haiku":            {Input: 0.25e-6, Output: 1.25e-6, CacheWrite: 0.3e-6, CacheRead: 0.03e-6},
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "genprices:", err)
	os.Exit(1)
}
