package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/ldd-tools/tune/internal/textfmt"
)

// AuditReport is what the transcript audit measured: where weighted spend goes, where thinking happens
// (by class and effort) and, when two arms were compared, the A/B table with per-run values. It holds only
// numbers and labels (classes, efforts, arm and metric names); transcript text never reaches it.
type AuditReport struct {
	Files, Sessions int
	Totals          TokenTotals
	// Skipped counts skipped lines or records by reason.
	Skipped map[string]int
	// Spend is the share of weighted spend per token kind (input ×1, output ×5, cache read ×0.1, cache
	// write ×1.25), with the TTL-aware variant (1h cache writes ×2).
	Spend []SpendShare
	// Figures are the headline numbers of the effort-tiering table (docs/decisions.md#transcripts-and-prices): output share, thinking share, main-loop share of
	// thinking, mean thinking per request main vs subagent, mean cached context per main-loop request.
	Figures []Figure
	// Notes are caveats on the numbers (estimated thinking, versions that record partial output …).
	Notes []string
	// Thinking is one row per (class, effort) group.
	Thinking []ThinkingGroup
	AB       *ABComparison
	// Effort is the effort conformance section (nil: not checked).
	Effort *EffortSection
}

// TokenTotals are the deduplicated token totals (the same as ccusage's on the same files).
type TokenTotals struct {
	Requests                                         int
	Input, Output, CacheWrite, CacheRead, Thinking   int64
	ThinkingExactRequests, ThinkingEstimatedRequests int // how the thinking tokens are known
	// CostUSD is the cost of the priced requests; UnpricedRequests have a model without a price (the
	// cost is then a lower bound). Cost1hPremiumUSD is what 1-hour cache writes cost above the
	// 5-minute price. Prices names the price table.
	CostUSD          float64
	UnpricedRequests int
	Cost1hPremiumUSD float64
	Prices           string
}

// SpendShare is one token kind's cost and its shares: of the cost (money), and of weighted spend (the
// effort design's token weights), in [0,1].
type SpendShare struct {
	Kind          string // input | output | cache write | cache read
	CostUSD       float64
	ShareOfCost   float64
	Share         float64
	ShareTTLAware float64
}

// Figure is one headline number. Share figures are in [0,1]; token figures are counts.
type Figure struct {
	Name  string
	Value float64
	Share bool
}

// ThinkingGroup is thinking by class (main, subagent, compaction, side-question) and effort.
type ThinkingGroup struct {
	Class, Effort    string
	Requests         int
	Output, Thinking int64
	// ShareOfThinking is this group's part of all thinking tokens, in [0,1].
	ShareOfThinking float64
	// Estimated is true when some of the group's thinking tokens are estimated rather than recorded.
	Estimated bool
}

// ABComparison is the effort A/B: runs are sessions, arms are effort levels or labelled directories. Each
// metric row compares one arm with the baseline (Arms[0]); with three arms there are two rows per metric.
type ABComparison struct {
	Arms    []string // Arms[0] is the baseline
	Paired  bool
	Metrics []ABMetric
	// Warnings are loud flags (e.g. arms mixing Claude Code versions with different output-token semantics).
	Warnings  []string
	Footnotes []string // minimum-sample notes and the like
}

// ABMetric is one metric compared between the baseline and one arm.
type ABMetric struct {
	Name        string     // requests | output_tokens | thinking_tokens | wall_seconds | active_seconds …
	Unit        string     // for the chart axis: requests, tokens, seconds
	Arms        [2]ArmStat // the baseline, then the compared arm
	P, PHolm    float64    // NaN when no test could run
	Significant bool
	// Ratio is the ratio of medians (arm over baseline) with its seeded bootstrap CI; NaN when undefined.
	Ratio, RatioLo, RatioHi float64
	RatioNote               string // why the ratio has no CI ("too few runs (n=3)"), or ""
}

// ArmStat is one arm's value of a metric: the median with its distribution-free CI, and every run.
type ArmStat struct {
	Arm            string
	N              int
	Median, Lo, Hi float64
	HasCI          bool // false when n is too small for a CI at this confidence
	Runs           []float64
}

// AuditBase is the file stem of an audit report: audit-<first 12 hex of the input's sha256>.
func AuditBase(in AuditReport) string { return "audit-" + inputHash(in) }

// RenderAudit renders the audit report: audit-<hash>.md, audit-<hash>-spend.svg (spend shares) and, with an
// A/B comparison, audit-<hash>-ab.svg (every run per arm, one panel per metric).
func RenderAudit(in AuditReport) ([]File, error) {
	r := &renderSet{base: AuditBase(in)}
	w := &r.md
	red := &redactions{}
	fmt.Fprintf(w, "# EVAL: transcript audit\n\n")
	fmt.Fprintf(w, "%s %s · %s %s · %s deduplicated %s.",
		fmtInt(int64(in.Files)), textfmt.Form(in.Files, "transcript file", "transcript files"),
		fmtInt(int64(in.Sessions)), textfmt.Form(in.Sessions, "session", "sessions"),
		fmtInt(int64(in.Totals.Requests)), textfmt.Form(in.Totals.Requests, "request", "requests"))
	if skipped := skippedSummary(in.Skipped, red); skipped != "" {
		fmt.Fprintf(w, " Skipped: %s.", skipped)
	}
	fmt.Fprintf(w, " No transcript text is quoted in this report.\n\n")

	if err := auditTotals(w, in.Totals); err != nil {
		return nil, err
	}
	if err := auditSpend(r, in.Spend, red); err != nil {
		return nil, err
	}
	if err := auditFigures(w, in.Figures, red); err != nil {
		return nil, err
	}
	for _, n := range in.Notes {
		fmt.Fprintf(w, "- %s\n", red.safe(n))
	}
	if len(in.Notes) > 0 {
		fmt.Fprintln(w)
	}
	if err := auditThinking(w, in.Thinking, red); err != nil {
		return nil, err
	}
	if in.Effort != nil {
		if err := auditEffort(w, in.Effort, red); err != nil {
			return nil, err
		}
	}
	if in.AB != nil {
		if err := auditAB(r, in.AB, red); err != nil {
			return nil, err
		}
	}
	red.footnote(w)
	return r.files(), nil
}

// WriteAudit renders the audit report and writes it under dir; it returns the written paths (Markdown
// first).
func WriteAudit(dir string, in AuditReport) ([]string, error) {
	files, err := RenderAudit(in)
	if err != nil {
		return nil, err
	}
	return WriteFiles(dir, files)
}

// skippedSummary lists skip reasons in sorted order (never map order).
func skippedSummary(skipped map[string]int, red *redactions) string {
	reasons := make([]string, 0, len(skipped))
	for k, n := range skipped {
		if n > 0 {
			reasons = append(reasons, k)
		}
	}
	sort.Strings(reasons)
	parts := make([]string, len(reasons))
	for i, k := range reasons {
		parts[i] = fmt.Sprintf("%s %s", fmtInt(int64(skipped[k])), red.safe(k))
	}
	return strings.Join(parts, ", ")
}

func auditTotals(w io.Writer, t TokenTotals) error {
	fmt.Fprintf(w, "## Token totals\n\n")
	thinking := fmtInt(t.Thinking)
	if t.ThinkingEstimatedRequests > 0 {
		thinking += " (partly estimated)"
	}
	rows := [][]string{
		{"input", fmtInt(t.Input)},
		{"output (includes thinking)", fmtInt(t.Output)},
		{"cache write", fmtInt(t.CacheWrite)},
		{"cache read", fmtInt(t.CacheRead)},
		{"thinking", thinking},
	}
	if err := WriteTable(w, []Column{Text("tokens"), Num("total")}, rows); err != nil {
		return err
	}
	cost := fmtUSD(t.CostUSD)
	if t.UnpricedRequests > 0 {
		cost = fmt.Sprintf("at least %s (%s %s of a model without a price left out)", cost, fmtInt(int64(t.UnpricedRequests)),
			textfmt.Form(t.UnpricedRequests, "request", "requests"))
	}
	fmt.Fprintf(w, "\nCost: %s at %s; TTL-aware: 1-hour cache writes at 2× the input price, %s above the 5-minute price.\n",
		cost, t.Prices, fmtUSD(t.Cost1hPremiumUSD))
	fmt.Fprintf(w, "\nThinking tokens: recorded exactly on %s %s, estimated from thinking text on %s, unknown on the rest.\n\n",
		fmtInt(int64(t.ThinkingExactRequests)), textfmt.Form(t.ThinkingExactRequests, "request", "requests"), fmtInt(int64(t.ThinkingEstimatedRequests)))
	return nil
}

// fmtUSD formats dollars to the cent.
func fmtUSD(v float64) string { return "$" + strconv.FormatFloat(v, 'f', 2, 64) }

func auditSpendChart(spend []SpendShare) BarChart {
	chart := BarChart{Title: "Cost by token kind (USD)", ValueLabel: "USD", Groups: []BarGroup{{Name: "cost"}}}
	for _, s := range spend {
		chart.Categories = append(chart.Categories, s.Kind)
		chart.Groups[0].Values = append(chart.Groups[0].Values, s.CostUSD)
	}
	return chart
}

func auditSpend(r *renderSet, spend []SpendShare, red *redactions) error {
	w := &r.md
	if !section(w, "Spend", len(spend), "No requests.") {
		return nil
	}
	fmt.Fprintf(w, "Cost in USD at each model's prices, by token kind, and its share; then the shares of weighted spend, the effort design's token weights for every model (input ×1, output ×5, cache read ×0.1, cache write ×1.25; the TTL-aware variant prices 1-hour cache writes ×2), which measure token volume, not money.\n\n")
	rows := make([][]string, len(spend))
	for i, s := range spend {
		rows[i] = []string{red.safe(s.Kind), fmtUSD(s.CostUSD), fmtPct(s.ShareOfCost), fmtPct(s.Share), fmtPct(s.ShareTTLAware)}
	}
	if err := tableBlock(w, []Column{Text("token kind"), Num("cost"), Num("share of cost"), Num("share of weighted spend"), Num("TTL-aware")}, rows); err != nil {
		return err
	}
	return r.chart("spend", "cost in USD by token kind", auditSpendChart(spend))
}

func auditFigures(w io.Writer, figures []Figure, red *redactions) error {
	if len(figures) == 0 {
		return nil
	}
	fmt.Fprintf(w, "## Key figures\n\n")
	rows := make([][]string, len(figures))
	for i, f := range figures {
		v := fmtNum(f.Value)
		if f.Share {
			v = fmtPct(f.Value)
		}
		rows[i] = []string{red.safe(f.Name), v}
	}
	return tableBlock(w, []Column{Text("figure"), Num("value")}, rows)
}

func auditThinking(w io.Writer, groups []ThinkingGroup, red *redactions) error {
	if !section(w, "Thinking by class and effort", len(groups), "No requests.") {
		return nil
	}
	rows := make([][]string, len(groups))
	estimated := false
	for i, g := range groups {
		effort := g.Effort
		if effort == "" {
			effort = "(not recorded)"
		}
		mean := "–"
		if g.Requests > 0 {
			mean = fmtNum(float64(int64(float64(g.Thinking)/float64(g.Requests)*10+0.5)) / 10)
		}
		thinking := fmtInt(g.Thinking)
		if g.Estimated {
			thinking += " \\*"
			estimated = true
		}
		rows[i] = []string{red.safe(g.Class), red.safe(effort), fmtInt(int64(g.Requests)), fmtInt(g.Output), thinking,
			fmtPct(g.ShareOfThinking), mean}
	}
	cols := []Column{Text("class"), Text("effort"), Num("requests"), Num("output tokens"), Num("thinking tokens"),
		Num("share of all thinking"), Num("mean thinking per request")}
	if err := WriteTable(w, cols, rows); err != nil {
		return err
	}
	if estimated {
		fmt.Fprintf(w, "\n\\* includes thinking estimated from stored thinking text (a rough lower bound).\n")
	}
	fmt.Fprintln(w)
	return nil
}

// abVerdict is benchstat's convention: "~" when the difference is not significant after Holm, else the
// direction and size of the change of the medians.
func abVerdict(m ABMetric) string {
	if !m.Significant {
		return "~"
	}
	if m.Arms[0].Median != 0 {
		change := (m.Arms[1].Median/m.Arms[0].Median - 1) * 100
		return fmt.Sprintf("%s%s%%", signOf(change), strconv.FormatFloat(math.Abs(change), 'f', 1, 64))
	}
	return "significant"
}

func signOf(v float64) string {
	if v < 0 {
		return "−"
	}
	return "+"
}

func armCell(a ArmStat) string {
	if a.N == 0 {
		return "– (n=0)"
	}
	s := fmtNum(a.Median)
	if a.HasCI {
		s += " [" + fmtNum(a.Lo) + ", " + fmtNum(a.Hi) + "]"
	} else {
		s += " [n too small]"
	}
	return s + " (n=" + strconv.Itoa(a.N) + ")"
}

func ratioCell(m ABMetric) string {
	if m.Ratio != m.Ratio { // NaN
		return "–"
	}
	s := "×" + fmtFloat(m.Ratio)
	switch {
	case m.RatioNote != "":
		s += " [" + m.RatioNote + "]"
	case m.RatioLo == m.RatioLo && m.RatioHi == m.RatioHi:
		s += " [" + fmtFloat(m.RatioLo) + ", " + fmtFloat(m.RatioHi) + "]"
	}
	return s
}

// auditABChart has one panel per metric and one column per arm in every panel (with three arms, the
// baseline appears once, not once per comparison).
func auditABChart(ab *ABComparison) DistributionChart {
	arms := make([]string, len(ab.Arms))
	for i, a := range ab.Arms {
		arms[i] = Redact(a)
	}
	chart := DistributionChart{Title: "Runs per arm: " + strings.Join(arms, " vs ")}
	panelOf := map[string]int{}
	seen := map[string]bool{}
	for _, m := range ab.Metrics {
		i, ok := panelOf[m.Name]
		if !ok {
			i = len(chart.Panels)
			panelOf[m.Name] = i
			chart.Panels = append(chart.Panels, DistributionPanel{Title: Redact(m.Name), ValueLabel: Redact(m.Unit) + " per run"})
		}
		for _, a := range m.Arms {
			if key := m.Name + "\x00" + a.Arm; !seen[key] {
				seen[key] = true
				chart.Panels[i].Samples = append(chart.Panels[i].Samples,
					Sample{Name: fmt.Sprintf("%s\nn=%d", Redact(a.Arm), len(a.Runs)), Values: a.Runs})
			}
		}
	}
	return chart
}

func auditAB(r *renderSet, ab *ABComparison, red *redactions) error {
	w := &r.md
	if len(ab.Arms) < 2 {
		fmt.Fprintf(w, "## A/B\n\n_Fewer than two arms: nothing to compare._\n\n")
		return nil
	}
	arms := make([]string, len(ab.Arms))
	for i, a := range ab.Arms {
		arms[i] = red.safe(a)
	}
	fmt.Fprintf(w, "## A/B: %s\n\n", strings.Join(arms, " vs "))
	for _, warn := range ab.Warnings {
		fmt.Fprintf(w, "> **Warning:** %s\n\n", red.safe(warn))
	}
	test := "Mann–Whitney U (exact for small samples)"
	if ab.Paired {
		test = "exact paired test"
	}
	two := len(ab.Arms) == 2
	other := "each arm"
	if two {
		other = arms[1]
	}
	fmt.Fprintf(w, "Runs are sessions. Medians with a distribution-free 95 %% CI; p from %s, Holm-adjusted across metrics; ratio is %s over %s with a seeded bootstrap 95 %% CI. \"~\" means no significant difference.\n\n",
		test, other, arms[0])
	armCol := "arm median [95% CI]"
	if two {
		armCol = arms[1] + " median [95% CI]"
	}
	cols := []Column{Text("metric"), Num(arms[0] + " median [95% CI]"), Num(armCol), Num("ratio [95% CI]"), Num("p"), Num("p (Holm)"), Num("verdict")}
	rows := make([][]string, len(ab.Metrics))
	for i, m := range ab.Metrics {
		name := red.safe(m.Name)
		if !two {
			name += ": " + red.safe(m.Arms[1].Arm)
		}
		rows[i] = []string{name, armCell(m.Arms[0]), armCell(m.Arms[1]), ratioCell(m), fmtP(m.P), fmtP(m.PHolm), abVerdict(m)}
	}
	if err := tableBlock(w, cols, rows); err != nil {
		return err
	}
	for _, f := range ab.Footnotes {
		fmt.Fprintf(w, "- %s\n", red.safe(f))
	}
	if len(ab.Footnotes) > 0 {
		fmt.Fprintln(w)
	}
	if !abHasRuns(ab) {
		return nil
	}
	return r.chart("ab", "every run per arm, one panel per metric", auditABChart(ab))
}

func abHasRuns(ab *ABComparison) bool {
	for _, m := range ab.Metrics {
		for _, a := range m.Arms {
			if len(a.Runs) > 0 {
				return true
			}
		}
	}
	return false
}
