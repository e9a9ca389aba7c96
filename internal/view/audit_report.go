package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/textfmt"
	"github.com/ldd-tools/tune/internal/transcript"
)

// jsonReport is the --json document of `tune audit`.
type jsonReport struct {
	Totals   audit.Totals             `json:"totals"`
	Shares   audit.Shares             `json:"shares"`
	By       audit.GroupBy            `json:"by,omitempty"`
	Groups   []audit.Group            `json:"groups"`
	Skipped  map[string]int           `json:"skipped"`
	Lines    transcript.LineCounts    `json:"lines"`
	Files    int                      `json:"files"`
	Bytes    int64                    `json:"bytes"`
	Sessions int                      `json:"sessions"`
	Prices   string                   `json:"prices"`
	Weights  map[string]audit.Weights `json:"weights"`
	Warnings []transcript.Warning     `json:"warnings"`
	// Unreadable names the files left out because they could not be read.
	Unreadable []transcript.FileError `json:"unreadable_files"`
}

// AuditJSON writes the audit report as one JSON document.
func AuditJSON(w io.Writer, rep *audit.Report, in audit.Input) error {
	doc := jsonReport{
		Totals: rep.Totals, Shares: rep.Shares, By: rep.By, Groups: rep.Groups,
		Skipped: audit.SkippedCounts(in.Skipped), Lines: in.Lines, Files: in.Files, Bytes: in.Bytes, Sessions: in.Sessions, Prices: in.Prices,
		Weights:  map[string]audit.Weights{"spend": audit.BriefWeights, "spend_ttl": audit.TTLWeights},
		Warnings: in.Warnings,
	}
	if doc.Warnings == nil {
		doc.Warnings = []transcript.Warning{}
	}
	doc.Unreadable = in.Unreadable
	if doc.Unreadable == nil {
		doc.Unreadable = []transcript.FileError{}
	}
	if doc.Prices == "" {
		doc.Prices = priceLine
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// commas formats n with thousands separators.
var commas = textfmt.ThousandsUint

func pct(f float64) string { return fmt.Sprintf("%.1f %%", 100*f) }

func pctOrDash(f *float64) string {
	if f == nil {
		return "–"
	}
	return pct(*f)
}

func tokensOrDash(f *float64) string {
	if f == nil {
		return "–"
	}
	return commas(uint64(*f + 0.5))
}

// megabytes formats a size for humans.
func megabytes(n int64) string {
	if n < 1e6 {
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// newASCIITable returns a table with ASCII borders that fits the width w carries. Column 0 (the label,
// shrinkable) is left-aligned, the rest right-aligned.
func newASCIITable(w io.Writer, headers ...string) *termtable.Table {
	return termtable.New(w, headers...).AlignRight().Shrink(headers[0])
}

func appendRows(t *termtable.Table, rows [][]string) error {
	for _, r := range rows {
		if err := t.Append(r...); err != nil {
			return err
		}
	}
	return nil
}

// usd formats a cost for humans: cents, with thousands separators.
func usd(v float64) string {
	if v < 0 { // not a cost tune sums, but never a wrapped uint64 (the audit review)
		return "-" + usd(-v)
	}
	if v > 0 && v < 0.005 {
		return "<$0.01"
	}
	cents := uint64(v*100 + 0.5)
	return fmt.Sprintf("$%s.%02d", commas(cents/100), cents%100)
}

// costCell is a group's cost, marked when some of its requests have no price (their cost is
// unknown, so the sum is a lower bound).
func costCell(t *audit.Totals, mark string) string {
	if t.CostUSD == nil {
		return "≥ " + usd(t.PricedCostUSD) + mark
	}
	return usd(*t.CostUSD)
}

// priceLine names the prices when the caller does not (Input.Prices).
const priceLine = "ccusage 20.0.24 offline prices"

// costLine is the cost sentence of the header.
func costLine(t *audit.Totals, pricesFrom string) string {
	var b strings.Builder
	b.WriteString("cost: " + costCell(t, ""))
	fmt.Fprintf(&b, " at %s; TTL-aware: 1h cache writes at 2× the input price, %s above the 5-minute price", pricesFrom, usd(t.Cost1hPremiumUSD))
	if t.UnpricedRequests > 0 {
		var names []string
		for m := range t.UnpricedModels {
			names = append(names, m)
		}
		sort.Strings(names)
		fmt.Fprintf(&b, "; unknown for %s of models without a price (%s)", textfmt.PluralGrouped(t.UnpricedRequests, "request"), strings.Join(names, ", "))
	}
	if t.RecordedCostRequests > 0 {
		fmt.Fprintf(&b, "; %s at the costUSD recorded in the transcript", textfmt.PluralGrouped(t.RecordedCostRequests, "request"))
	}
	return b.String()
}

// AuditText writes the audit's cost and effort-tiering tables (docs/decisions.md#transcripts-and-prices), the token totals and, with a breakdown, one row
// per group with a total row.
func AuditText(w io.Writer, rep *audit.Report, in audit.Input) error {
	var b bytes.Buffer
	tw := termtable.WithWidth(&b, termtable.WidthOf(w)) // tables fit the width w carries
	t := &rep.Totals
	fmt.Fprintf(&b, "%s in %s, %s (%s)", textfmt.PluralGrouped(t.Requests, "request"), textfmt.PluralGrouped(in.Sessions, "session"), textfmt.PluralGrouped(in.Files, "file"), megabytes(in.Bytes))
	if !rep.First.IsZero() {
		fmt.Fprintf(&b, ", %s to %s UTC", rep.First.UTC().Format("2006-01-02 15:04"), rep.Last.UTC().Format("2006-01-02 15:04"))
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "tokens: input %s, output %s, cache write %s (5m %s, 1h %s), cache read %s, thinking %s\n",
		commas(t.InputTokens), commas(t.OutputTokens), commas(t.CacheCreationInputTokens), commas(t.CacheCreation5m),
		commas(t.CacheCreation1h), commas(t.CacheReadInputTokens), commas(t.ThinkingTokens))
	pricesFrom := in.Prices
	if pricesFrom == "" {
		pricesFrom = priceLine
	}
	b.WriteString(costLine(t, pricesFrom) + "\n\n")

	var notes footnotes
	outNote, thinkNote := "", ""
	if rep.Shares.OutputPartialVersion {
		outNote = notes.add("Claude Code before 2.1.70 records streaming snapshots of output_tokens: output is a lower bound.")
	}
	if n := thinkingNote(t); n != "" {
		thinkNote = notes.add(n)
	}
	s := &rep.Shares
	// One line, wrapped to the width by Fill below (a line break in it would cut the sentence twice).
	b.WriteString("Share of cost (USD at each model's prices), and of weighted spend (the effort design's token weights for every " +
		"model: input ×1, output ×5, cache read ×0.1, cache write ×1.25; TTL-aware: 1h cache writes ×2)\n")
	tbl := newASCIITable(tw, "Item", "Cost", "Weighted", "Weighted TTL-aware")
	rows := [][]string{
		{"Cache reads (context re-read per request)", pct(s.Cost.CacheRead), pct(s.Spend.CacheRead), pct(s.TTL.CacheRead)},
		{"Cache writes", pct(s.Cost.CacheWrite), pct(s.Spend.CacheWrite), pct(s.TTL.CacheWrite)},
		{"Uncached input", pct(s.Cost.Input), pct(s.Spend.Input), pct(s.TTL.Input)},
		{"All output tokens" + outNote, pct(s.Cost.Output), pct(s.Spend.Output), pct(s.TTL.Output)},
		{"Thinking (part of output)" + thinkNote, pct(s.Cost.Thinking), pct(s.Spend.Thinking), pct(s.TTL.Thinking)},
		{"Outside the main loop (subagents, compaction, /btw)", pct(s.Cost.NonMain), pct(s.Spend.NonMain), pct(s.TTL.NonMain)},
		{"Total", costCell(t, ""), commas(uint64(t.Spend+0.5)) + " units", commas(uint64(t.SpendTTL+0.5)) + " units"},
	}
	if err := appendRows(tbl, rows); err != nil {
		return err
	}
	if err := tbl.Render(); err != nil {
		return err
	}
	b.WriteString("\n")
	tbl = newASCIITable(tw, "Item", "Value")
	rows = [][]string{
		{"Thinking located in the main loop" + thinkNote, pctOrDash(s.ThinkingInMain) + " of thinking"},
		{"Mean thinking per request: main loop / outside" + thinkNote, tokensOrDash(s.MeanThinkingMain) + " / " + tokensOrDash(s.MeanThinkingSub) + " tokens"},
		{"Mean cached context per main-loop request", tokensOrDash(s.MeanContextMain) + " tokens"},
		{"Requests: main loop / outside", commas(uint64(t.MainRequests)) + " / " + commas(uint64(t.SubRequests))},
	}
	if err := appendRows(tbl, rows); err != nil {
		return err
	}
	if err := tbl.Render(); err != nil {
		return err
	}
	if rep.By != "" {
		b.WriteString("\n")
		if err := writeGroups(tw, rep, thinkNote, &notes); err != nil {
			return err
		}
	}
	notes.write(&b)
	// Skipped lines are reported once, on stderr, by the caller.
	// The tables fit already; the prose lines are wrapped to the same width.
	_, err := io.WriteString(w, termtable.Fill(string(trimTrailingSpaces(b.Bytes())), termtable.WidthOf(w)))
	return err
}

// groupHeader names the key column of a breakdown.
func groupHeader(rep *audit.Report) string {
	switch rep.By {
	case audit.ByDay, audit.ByMonth:
		return fmt.Sprintf("%s (%s)", rep.By, rep.Timezone)
	case audit.ByWeek:
		return fmt.Sprintf("week (%s)", rep.Timezone)
	case audit.ByBlock:
		return fmt.Sprintf("block (%s)", rep.Timezone)
	}
	return string(rep.By)
}

func groupRow(key string, t *audit.Totals, sh *audit.Shares, unknown string) []string {
	return []string{
		key,
		commas(uint64(t.Requests)),
		commas(t.InputTokens),
		commas(t.OutputTokens),
		commas(t.CacheCreationInputTokens),
		commas(t.CacheReadInputTokens),
		costCell(t, unknown),
		pct(sh.OfTotalCost),
		pct(sh.Cost.Thinking),
		pct(sh.Cost.NonMain),
		tokensOrDash(sh.MeanThinkingMain) + " / " + tokensOrDash(sh.MeanThinkingSub),
	}
}

// writeGroups writes one row per group (with its model rows under --breakdown) and a total row: absolute
// tokens and cost, the group's share of the cost, and the parts of its cost spent on thinking and
// outside the main loop.
func writeGroups(b io.Writer, rep *audit.Report, thinkNote string, notes *footnotes) error {
	unknown := ""
	if rep.Totals.UnpricedRequests > 0 {
		unknown = notes.add("≥: some requests of the row have a model without a price; their cost is unknown and left out.")
	}
	tbl := newASCIITable(b, groupHeader(rep), "requests", "input", "output", "cache write", "cache read", "cost", "of cost",
		"thinking"+thinkNote, "outside main", "thinking/req main / outside").
		Optional("thinking/req main / outside", "outside main", "thinking"+thinkNote, "input", "cache write", "output", "requests")
	// The group is the row's point; session ids and project paths are long and still tell apart cut.
	if rep.By != audit.BySession && rep.By != audit.ByProject {
		tbl.Key(groupHeader(rep))
	}
	for _, g := range rep.Groups {
		key := g.Key
		if rep.By == audit.ByModel {
			key = ShortModel(key)
		}
		if err := tbl.Append(groupRow(key, &g.Totals, &g.Shares, unknown)...); err != nil {
			return err
		}
		for _, m := range g.Models {
			if err := tbl.Append(groupRow("· "+ShortModel(m.Key), &m.Totals, &m.Shares, unknown)...); err != nil {
				return err
			}
		}
	}
	if err := tbl.Append(groupRow("Total", &rep.Totals, &rep.Shares, unknown)...); err != nil {
		return err
	}
	return tbl.Render()
}

// thinkingNote explains how the thinking figures are known, or "" when all are exact.
func thinkingNote(t *audit.Totals) string {
	if t.ThinkingEstimatedRequests == 0 && t.ThinkingUnknownRequests == 0 {
		return ""
	}
	return fmt.Sprintf("thinking tokens: exact (usage.output_tokens_details) for %s requests, estimated from thinking text "+
		"(characters/4, a summary of the real thinking) for %s, unknown for %s (no thinking text) — estimated figures are lower bounds.",
		commas(uint64(t.ThinkingExactRequests)), commas(uint64(t.ThinkingEstimatedRequests)), commas(uint64(t.ThinkingUnknownRequests)))
}

// footnotes numbers notes with superscripts, benchstat style.
type footnotes []string

var superscripts = []string{"¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"}

func (f *footnotes) add(note string) string {
	for i, n := range *f {
		if n == note {
			return " " + superscripts[i]
		}
	}
	*f = append(*f, note)
	i := len(*f) - 1
	if i >= len(superscripts) {
		return " (" + strconv.Itoa(i+1) + ")"
	}
	return " " + superscripts[i]
}

func (f footnotes) write(b *bytes.Buffer) {
	if len(f) == 0 {
		return
	}
	b.WriteString("\n")
	for i, n := range f {
		mark := "(" + strconv.Itoa(i+1) + ")"
		if i < len(superscripts) {
			mark = superscripts[i]
		}
		fmt.Fprintf(b, "%s %s\n", mark, n)
	}
}

// trimTrailingSpaces removes spaces at line ends (tablewriter pads the last column).
func trimTrailingSpaces(b []byte) []byte {
	lines := bytes.Split(b, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimRight(l, " ")
	}
	return bytes.Join(lines, []byte("\n"))
}
