package view

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/effort"
	"github.com/ldd-tools/tune/internal/transcript"
)

func TestDrawProgress(t *testing.T) {
	var b bytes.Buffer
	drawProgress(&b, 500e6, 1000e6, 1500*time.Millisecond)
	if got := b.String(); !strings.Contains(got, "[===============               ]  50% 500/1000 MB 1.5s") {
		t.Errorf("progress line %q", got)
	}
	p := &Progress{W: &b}
	b.Reset()
	p.Clear()
	if b.Len() != 0 {
		t.Errorf("clear without a bar wrote %q", b.String())
	}
	p.Update(1, 2)
	p.Clear()
	if got := b.String(); !strings.HasSuffix(got, "\r\033[K") || !strings.Contains(got, " 50% ") {
		t.Errorf("update then clear: %q", got)
	}
}

// TestScanAndEffortWarnings: the skipped lines are summed in one line with a sample per line up to
// ten; census files are named under the repository, transcript files as they are.
func TestScanAndEffortWarnings(t *testing.T) {
	res := &transcript.Result{Skipped: map[string]int{transcript.ReasonTruncated: 11, transcript.ReasonNotObject: 1}}
	res.Lines.Lines = 100
	for i := range 12 {
		res.Warnings = append(res.Warnings, transcript.Warning{File: "a.jsonl", Line: i + 1, Reason: "r"})
	}
	var b bytes.Buffer
	ScanWarnings(&b, res)
	want := "tune: warning: skipped 12 of 100 lines (1 not-object, 11 truncated)\n"
	if got := b.String(); !strings.HasPrefix(got, "tune: warning: skipped 12 of 100 lines (") ||
		!strings.Contains(got, "tune: warning: a.jsonl:10: r\n") || strings.Contains(got, "a.jsonl:11:") ||
		!strings.HasSuffix(got, "tune: warning: … (2 more in --json \"warnings\")\n") {
		t.Errorf("got\n%s\nwant a summary like %q, ten samples and a count of the rest", got, want)
	}
	b.Reset()
	EffortWarnings(&b, "repo", []effort.Warning{{File: "agents/x.md", Line: 3, Reason: "bad"}, {File: "settings.json", Reason: "odd"}})
	EffortWarnings(&b, "", []effort.Warning{{File: "t.jsonl", Line: 7, Reason: "cut"}})
	if got, want := b.String(), "tune: warning: repo/agents/x.md:3: bad\ntune: warning: repo/settings.json: odd\ntune: warning: t.jsonl:7: cut\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A metric with nothing to test (no data in an arm) shows "–", not "~", which reads as a finding; a
// median of 0 shows "?" and the legend says what it means (the audit review).
func TestABCellsSayWhatTheyMean(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	arms := func(b, a float64) map[string]audit.ArmStat {
		return map[string]audit.ArmStat{"low": {N: 6, Median: f(b), Lo: f(b), Hi: f(b + 1)}, "high": {N: 6, Median: f(a), Lo: f(a), Hi: f(a + 1)}}
	}
	rep := &audit.ABReport{Arms: []audit.ArmInfo{{Name: "low"}, {Name: "high"}}, Alpha: 0.05, Confidence: 0.95}
	for _, name := range audit.Metrics {
		mr := audit.MetricResult{Name: name, Baseline: "low", Arm: "high", Arms: arms(300, 600), Test: "mann-whitney", P: f(0.002), PHolm: f(0.008), Significant: true}
		switch name {
		case "output_tokens":
			mr.Arms = arms(0, 600)
		case "active_seconds":
			mr = audit.MetricResult{Name: name, Baseline: "low", Arm: "high", Arms: map[string]audit.ArmStat{"low": {}, "high": {}}, Test: "none"}
		}
		rep.Metrics = append(rep.Metrics, mr)
	}
	var b strings.Builder
	if err := AuditAB(&b, rep, "text"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`"?": the median is 0`, "Holm over 4 tests"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	row := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "active_seconds") {
			row = l
		}
	}
	if !strings.Contains(row, "–") || strings.Contains(row, "~") {
		t.Errorf("the row of a metric with no data is %q: want \"–\", never \"~\" (no difference)", row)
	}
}
