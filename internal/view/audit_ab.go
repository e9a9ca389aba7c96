package view

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/termtable"
)

// ABFormats lists the output formats of tune audit ab's comparison.
var ABFormats = []string{"text", "markdown", "json", "csv", "benchfmt"}

// AuditAB writes tune audit ab's comparison in one of ABFormats.
func AuditAB(w io.Writer, rep *audit.ABReport, format string) error {
	switch format {
	case "text", "":
		return writeABTable(w, rep, false)
	case "markdown":
		return writeABTable(w, rep, true)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	case "csv":
		return writeABCSV(w, rep)
	case "benchfmt":
		return writeBenchfmt(w, rep)
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(ABFormats, ", "))
}

// number formats a median: integers with thousands separators, others with one decimal.
func number(f *float64) string {
	if f == nil {
		return "–"
	}
	v := *f
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		if v < 0 {
			return "-" + commas(uint64(-v))
		}
		return commas(uint64(v))
	}
	whole, frac := math.Modf(math.Round(math.Abs(v)*10) / 10)
	sign := ""
	if v < 0 {
		sign = "-"
	}
	return sign + commas(uint64(whole)) + strconv.FormatFloat(frac, 'f', 1, 64)[1:]
}

// rangePct is benchstat's "± x%": the larger distance from the median to a CI bound, relative to the
// median; "∞" without a CI, "?" when the median is 0.
func rangePct(s audit.ArmStat) string {
	if s.Median == nil {
		return ""
	}
	if s.Lo == nil || s.Hi == nil {
		return "± ∞"
	}
	c := *s.Median
	if c == 0 {
		return "± ?"
	}
	d := math.Max(*s.Hi/c-1, 1-*s.Lo/c)
	return fmt.Sprintf("± %.0f%%", 100*d)
}

// delta is benchstat's "vs base": "–" when there was nothing to test (no data in an arm), "~" when not
// significant, else the change of the medians ("?" when the baseline median is 0).
func delta(mr *audit.MetricResult) string {
	if mr.P == nil || math.IsNaN(*mr.P) {
		return "–" // not "~", which reads as a finding (the audit review)
	}
	if !mr.Significant {
		return "~"
	}
	b, a := mr.Arms[mr.Baseline].Median, mr.Arms[mr.Arm].Median
	if b == nil || a == nil || *b == 0 {
		return "?"
	}
	return fmt.Sprintf("%+.2f%%", 100*(*a-*b)/(*b))
}

// zeroBaseline says whether some median of the report is 0, where delta and rangePct show "?".
func zeroBaseline(rep *audit.ABReport) bool {
	for _, mr := range rep.Metrics {
		for _, s := range mr.Arms {
			if s.Median != nil && *s.Median == 0 {
				return true
			}
		}
	}
	return false
}

func pValue(p *float64) string {
	if p == nil {
		return "–"
	}
	return strconv.FormatFloat(*p, 'f', 3, 64)
}

func ratioCell(mr *audit.MetricResult) string {
	if mr.Ratio == nil {
		return "–"
	}
	if mr.RatioNote != "" {
		return fmt.Sprintf("%.2f [%s]", *mr.Ratio, mr.RatioNote)
	}
	lo, hi := "?", "?"
	if mr.RatioLo != nil {
		lo = strconv.FormatFloat(*mr.RatioLo, 'f', 2, 64)
	}
	if mr.RatioHi != nil {
		hi = strconv.FormatFloat(*mr.RatioHi, 'f', 2, 64)
	}
	return fmt.Sprintf("%.2f [%s, %s]", *mr.Ratio, lo, hi)
}

func sizes(mr *audit.MetricResult) string {
	n1, n2 := mr.Arms[mr.Baseline].N, mr.Arms[mr.Arm].N
	if n1 == n2 {
		return fmt.Sprintf("n=%d", n1)
	}
	return fmt.Sprintf("n=%d+%d", n1, n2)
}

func testName(rep *audit.ABReport) string {
	if rep.Paired {
		return fmt.Sprintf("paired by %s: Wilcoxon signed-rank test (exact for n ≤ 50)", rep.PairBy)
	}
	return "unpaired: Mann–Whitney U test (exact for small samples)"
}

// header describes the arms, the test and the adjustment.
func abHeader(b *bytes.Buffer, rep *audit.ABReport, markdown bool) {
	bullet := ""
	if markdown {
		bullet = "- "
	}
	fmt.Fprintf(b, "%sA/B of %d arms, baseline %s; %s; α = %v after Holm over %d tests; %v%% CIs (medians: distribution-free; ratio of medians: bootstrap, %d resamples, seeded from the data)\n",
		bullet, len(rep.Arms), rep.Arms[0].Name, testName(rep), rep.Alpha, rep.Tests(), 100*rep.Confidence, rep.Resamples)
	for _, a := range rep.Arms {
		fmt.Fprintf(b, "%s%s: %d runs, Claude Code %s (%s), effort from %s\n", bullet, a.Name, a.Runs,
			orUnknown(strings.Join(a.Versions, ", ")), audit.JoinFamilies(a.Families), strings.Join(a.EffortSources, ", "))
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(b, "%s%s\n", bullet, n)
	}
	b.WriteString("\n")
}

func orUnknown(s string) string {
	if s == "" {
		return "version unknown"
	}
	return s
}

// writeABTable writes one benchstat-style table per compared arm: per metric, each arm's median
// ± CI, the change ("~" when not significant after Holm), p and Holm-adjusted p, the sample sizes
// and the ratio of medians with its bootstrap CI. Warnings are numbered footnotes.
func writeABTable(w io.Writer, rep *audit.ABReport, markdown bool) error {
	var b bytes.Buffer
	abHeader(&b, rep, markdown)
	var notes footnotes
	for start := 0; start < len(rep.Metrics); start += len(audit.Metrics) {
		block := rep.Metrics[start:min(start+len(audit.Metrics), len(rep.Metrics))]
		base, arm := block[0].Baseline, block[0].Arm
		style := termtable.Grid
		if markdown {
			style = termtable.Markdown
		}
		ci := arm + "/" + base + " [CI]"
		tbl := termtable.NewStyled(termtable.WithWidth(&b, termtable.WidthOf(w)), style,
			termtable.Columns("metric", base+" (median)", arm+" (median)", "vs "+base, "p", "p (Holm)", "n", ci)...).
			AlignRight().AlignHeaders(termtable.Center).Optional("p", "n", ci)
		for i := range block {
			mr := &block[i]
			name := mr.Name
			for _, warn := range mr.Warnings {
				name += notes.add(warn)
			}
			if mr.Name == "thinking_tokens" && estimatedThinking(rep) {
				name += notes.add("thinking tokens are partly estimated from thinking text (characters/4) or unknown: lower bounds.")
			}
			bs, as := mr.Arms[base], mr.Arms[arm]
			if err := tbl.Append(name,
				strings.TrimSpace(number(bs.Median)+" "+rangePct(bs)),
				strings.TrimSpace(number(as.Median)+" "+rangePct(as)),
				delta(mr), pValue(mr.P), pValue(mr.PHolm), sizes(mr), ratioCell(mr)); err != nil {
				return err
			}
		}
		if err := tbl.Render(); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	b.WriteString(`"~": no difference detected at this sample size (Holm-adjusted p > α); it does not mean "no difference".` + "\n")
	if zeroBaseline(rep) {
		b.WriteString(`"?": the median is 0, so no change or range relative to it can be given; the test still compares the runs.` + "\n")
	}
	if markdown {
		for i, n := range notes {
			mark := strconv.Itoa(i + 1)
			if i < len(superscripts) {
				mark = superscripts[i]
			}
			fmt.Fprintf(&b, "\n%s %s\n", mark, n)
		}
	} else {
		notes.write(&b)
	}
	out := string(trimTrailingSpaces(b.Bytes()))
	if !markdown { // the tables fit already; the prose lines are wrapped to the same width
		out = termtable.Fill(out, termtable.WidthOf(w))
	}
	_, err := io.WriteString(w, out)
	return err
}

func estimatedThinking(rep *audit.ABReport) bool {
	for _, r := range rep.Runs {
		if r.ThinkingEstimated {
			return true
		}
	}
	return false
}

// writeABCSV writes one row per metric and compared arm.
func writeABCSV(w io.Writer, rep *audit.ABReport) error {
	cw := csv.NewWriter(w)
	header := []string{"metric", "baseline", "arm", "baseline_n", "baseline_median", "baseline_lo", "baseline_hi",
		"arm_n", "arm_median", "arm_lo", "arm_hi", "test", "p", "p_holm", "significant", "ratio", "ratio_lo", "ratio_hi", "warnings"}
	if err := cw.Write(header); err != nil {
		return err
	}
	f := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	for _, mr := range rep.Metrics {
		bs, as := mr.Arms[mr.Baseline], mr.Arms[mr.Arm]
		rec := []string{mr.Name, mr.Baseline, mr.Arm,
			strconv.Itoa(bs.N), f(bs.Median), f(bs.Lo), f(bs.Hi),
			strconv.Itoa(as.N), f(as.Median), f(as.Lo), f(as.Hi),
			mr.Test, f(mr.P), f(mr.PHolm), strconv.FormatBool(mr.Significant), f(mr.Ratio), f(mr.RatioLo), f(mr.RatioHi),
			strings.Join(mr.Warnings, "; ")}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// nameValue makes a string safe as a benchmark name key or value (no spaces, '/' or '=').
func nameValue(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '/', '=', '\n':
			return '_'
		}
		return r
	}, s)
}

// writeBenchfmt writes one Go benchmark result per run, named BenchmarkAudit/effort=ARM, with one
// value per metric, preceded by unit metadata. Neither the session nor the task is part of the name:
// benchstat makes every distinct name its own row, so with /task=T (the ARM/TASK layout of
// --pair-by task) it compared one run per task and never the arms. Runs of an arm are repeated
// samples of one benchmark, so `benchstat -col /effort FILE` compares the arms with its own median
// CIs and Mann–Whitney tests. Each result is preceded by a comment naming its session and task
// (benchstat ignores such lines).
func writeBenchfmt(w io.Writer, rep *audit.ABReport) error {
	var b bytes.Buffer
	b.WriteString("# tune audit ab: one result per run (a session); compare with: benchstat -col /effort FILE\n")
	for _, m := range audit.Metrics {
		fmt.Fprintf(&b, "Unit %s better=lower\n", audit.MetricUnit[m])
	}
	for _, r := range rep.Runs {
		name := "BenchmarkAudit/effort=" + nameValue(r.Arm)
		fmt.Fprintf(&b, "# session %s", r.Session)
		if r.Task != "" {
			fmt.Fprintf(&b, " task %s", r.Task)
		}
		fmt.Fprintf(&b, "\n%s 1", name)
		for _, m := range audit.Metrics {
			v, ok := r.Value(m)
			if !ok {
				continue
			}
			fmt.Fprintf(&b, " %s %s", strconv.FormatFloat(v, 'f', -1, 64), audit.MetricUnit[m])
		}
		b.WriteString("\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}
