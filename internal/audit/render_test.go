package audit_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/transcript"
	"github.com/ldd-tools/tune/internal/view"
)

// The rendering of tune audit and tune audit ab lives in internal/view, which imports this package:
// these tests render through it from package audit_test, on the corpora and goldens of this package
// (export_test.go hands them the scan helpers).

// BenchmarkAudit is `tune audit --by session` on the 21 sample files (17 MB): discovery, scan and
// dedup, aggregation and the text report. MB/s is the figure to compare (make bench; benchstat).
func BenchmarkAudit(b *testing.B) {
	root := filepath.Join("..", "..", "testdata", "transcripts")
	files, err := transcript.Discover([]string{root})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(transcript.TotalSize(files))
	b.ReportAllocs()
	for b.Loop() {
		files, err := transcript.Discover([]string{root})
		if err != nil {
			b.Fatal(err)
		}
		res, err := transcript.Scan(files, transcript.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := view.AuditText(io.Discard, audit.Aggregate(res.Requests, audit.BySession), audit.InputOf(res)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBenchfmtReadsBack parses the benchfmt output with x/perf's own reader, groups results by their
// /effort= key as `benchstat -col /effort` does, and checks that benchstat's statistics on them equal
// the report's: the file carries every run and nothing else.
func TestBenchfmtReadsBack(t *testing.T) {
	arms := audit.EffortArms(t)
	// Runs laid out as ARM/TASK (--pair-by task): the task must not split the arm into one-run rows.
	for i := range arms {
		for j := range arms[i].Runs {
			arms[i].Runs[j].Task = string(rune('a' + j))
		}
	}
	rep, err := audit.CompareArms(arms, audit.ABOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := view.AuditAB(&b, rep, "benchfmt"); err != nil {
		t.Fatal(err)
	}
	samples := map[string]map[string][]float64{} // unit → effort → values
	r := benchfmt.NewReader(&b, "ab.txt")
	results := 0
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			results++
			name := string(rec.Name.Full())
			_, effort, ok := strings.Cut(name, "/effort=")
			if !ok || !strings.HasPrefix(name, "Audit/") || strings.Contains(effort, "/") || rec.Iters != 1 {
				t.Fatalf("result name %q", name)
			}
			for _, v := range rec.Values {
				if samples[v.Unit] == nil {
					samples[v.Unit] = map[string][]float64{}
				}
				samples[v.Unit][effort] = append(samples[v.Unit][effort], v.Value)
			}
		case *benchfmt.SyntaxError:
			t.Fatalf("benchfmt: %v", rec)
		}
	}
	if results != len(rep.Runs) {
		t.Fatalf("%d results for %d runs", results, len(rep.Runs))
	}
	thr := benchmath.DefaultThresholds
	for _, mr := range rep.Metrics {
		unit := audit.MetricUnit[mr.Name]
		x := benchmath.NewSample(samples[unit][mr.Baseline], &thr)
		y := benchmath.NewSample(samples[unit][mr.Arm], &thr)
		c := benchmath.AssumeNothing.Compare(x, y)
		if mr.P == nil || math.Abs(*mr.P-c.P) > 1e-9 {
			t.Errorf("%s: p %v, benchstat would say %v", mr.Name, mr.P, c.P)
		}
		if got := benchmath.AssumeNothing.Summary(y, 0.95).Center; *mr.Arms[mr.Arm].Median != got {
			t.Errorf("%s: median %v, benchstat %v", mr.Name, *mr.Arms[mr.Arm].Median, got)
		}
	}
}

// TestGoldenBreakdown: --by day --breakdown in New York on the synthetic corpus at a normal width —
// model rows under each day, the total row, dates of the zone.
func TestGoldenBreakdown(t *testing.T) {
	res := audit.Scan(t, transcript.Options{}, audit.SyntheticRoot)
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	rep := audit.AggregateWith(res.Requests, audit.Options{By: audit.ByDay, Location: loc, Breakdown: true})
	if err := view.AuditText(termtable.WithWidth(&b, 120), rep, audit.InputOf(res)); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "golden/fit/synthetic_by_day_breakdown_new_york.w120.txt", b.Bytes())
}

func goldenAudit(t *testing.T, name string, rep *audit.Report, in audit.Input) {
	t.Helper()
	var text, js bytes.Buffer
	if err := view.AuditText(&text, rep, in); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, name+".txt", text.Bytes())
	if err := view.AuditJSON(&js, rep, in); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, name+".json", js.Bytes())
}

func TestGoldenAudit(t *testing.T) {
	res := audit.Scan(t, transcript.Options{}, filepath.Join("..", "..", "testdata", "transcripts"))
	// Paths in warnings depend on the working directory only through this relative root.
	goldenAudit(t, "golden/audit_sample_by_session", audit.Aggregate(res.Requests, audit.BySession), audit.InputOf(res))
	res = audit.Scan(t, transcript.Options{}, audit.EffortDir)
	goldenAudit(t, "golden/audit_effort_by_effort", audit.Aggregate(res.Requests, audit.ByEffort), audit.InputOf(res))
	// Recorded costUSD (auto mode): recorded_cost_requests and the unsplit recorded cost of a model
	// without a price, in the totals and per model.
	rec := audit.Scan(t, transcript.Options{}, audit.RecordedRoot)
	goldenAudit(t, "golden/audit_recorded_by_model", audit.AggregateWith(rec.Requests, audit.Options{By: audit.ByModel}), audit.InputOf(rec))

	var csv, jsonl bytes.Buffer
	if err := audit.WriteRows(&csv, res.Requests[:5], "csv"); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "golden/rows.csv", csv.Bytes())
	if err := audit.WriteRows(&jsonl, res.Requests[:5], "jsonl"); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "golden/rows.jsonl", jsonl.Bytes())
	for _, line := range bytes.Split(bytes.TrimSpace(jsonl.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil || len(m) != len(audit.RowHeader) {
			t.Fatalf("jsonl row %s: %v", line, err)
		}
	}
}

// TestJSONTotalsKeys pins the keys the issue promises under "totals".
func TestJSONTotalsKeys(t *testing.T) {
	res := audit.Scan(t, transcript.Options{}, audit.SpotterDir)
	var b bytes.Buffer
	if err := view.AuditJSON(&b, audit.Aggregate(res.Requests, ""), audit.InputOf(res)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Totals  map[string]any `json:"totals"`
		Shares  map[string]any `json:"shares"`
		Groups  []any          `json:"groups"`
		Skipped map[string]int `json:"skipped"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"requests": 904, "input_tokens": 9165, "output_tokens": 195801,
		"cache_creation_input_tokens": 2079960, "cache_read_input_tokens": 77423878, "thinking_tokens": 15768}
	for k, v := range want {
		if doc.Totals[k] != v {
			t.Errorf("totals.%s = %v, want %v", k, doc.Totals[k], v)
		}
	}
	// The cost of these files in ccusage 20.0.24's daily report (testdata/ccusage/sample-daily-utc.json
	// without edge_cases.jsonl's $0.001779).
	if c, ok := doc.Totals["cost_usd"].(float64); !ok || !audit.SameCents(c, 51.742581) {
		t.Errorf("totals.cost_usd = %v, want $51.74", doc.Totals["cost_usd"])
	}
	if doc.Groups == nil || doc.Shares["spend"] == nil || len(doc.Skipped) != len(audit.SkipReasons) {
		t.Errorf("document shape: %s", b.String()[:200])
	}
}

func TestGoldenAB(t *testing.T) {
	rep, err := audit.CompareArms(audit.EffortArms(t), audit.ABOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range view.ABFormats {
		var b bytes.Buffer
		if err := view.AuditAB(&b, rep, f); err != nil {
			t.Fatal(err)
		}
		ext := map[string]string{"text": "txt", "markdown": "md", "json": "json", "csv": "csv", "benchfmt": "bench"}[f]
		testutil.Golden(t, "golden/ab_effort."+ext, b.Bytes())
	}
	a, b := audit.SplitSpotter(t)
	rep, err = audit.CompareArms([]audit.Arm{a, b}, audit.ABOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := view.AuditAB(&text, rep, "text"); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "golden/ab_spotter_split.txt", text.Bytes())
}

// TestAuditFitsTerminal renders the audit text, without a breakdown and with each of GroupBys, and the
// A/B table at each terminal width: no line may be wider (docs/decisions.md#table-width).
func TestAuditFitsTerminal(t *testing.T) {
	res := audit.Scan(t, transcript.Options{}, filepath.Join("..", "..", "testdata", "transcripts"))
	for _, by := range append([]audit.GroupBy{""}, audit.GroupBys...) {
		name := "golden/fit/audit_sample_by_" + string(by) + ".txt"
		if by == "" {
			name = "golden/fit/audit_sample.txt"
		}
		for _, w := range testutil.TermWidths {
			var b bytes.Buffer
			if err := view.AuditText(termtable.WithWidth(&b, w), audit.Aggregate(res.Requests, by), audit.InputOf(res)); err != nil {
				t.Fatal(err)
			}
			testutil.GoldenFit(t, name, w, b.Bytes())
		}
	}
	rep, err := audit.CompareArms(audit.EffortArms(t), audit.ABOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range testutil.TermWidths {
		var b bytes.Buffer
		if err := view.AuditAB(termtable.WithWidth(&b, w), rep, "text"); err != nil {
			t.Fatal(err)
		}
		testutil.GoldenFit(t, "golden/ab_effort.txt", w, b.Bytes())
	}
}
