package app

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/exitcode"
	"github.com/ldd-tools/tune/internal/transcript"
)

// The synthetic transcripts of the effort design (testdata/effort-demo) and the labelled effort runs
// of the audit tests.
var (
	demoTranscripts = filepath.Join("..", "..", "testdata", "effort-demo", "transcripts")
	demoRepo        = filepath.Join("..", "..", "testdata", "effort-demo", "repo")
	effortRuns      = filepath.Join("..", "audit", "testdata", "effort")
)

func noEnv() Env { return Env{Getenv: func(string) string { return "" }} }

// TestScanOptionsMatchCCUsageReports: --ccusage session turns off the /btw rule and agent_progress
// copies (ccusage 20.0.24's session report applies neither); daily keeps both.
func TestScanOptionsMatchCCUsageReports(t *testing.T) {
	d, s := ScanOptions("daily", ""), ScanOptions("session", "")
	if !d.CCUsage || !d.MaxTotal || d.NoProgress || d.ReplaySameTime || d.TieSpeed {
		t.Errorf("daily: %+v", d)
	}
	if !s.CCUsage || !s.MaxTotal || !s.NoProgress || !s.ReplaySameTime || !s.TieSpeed {
		t.Errorf("session: %+v", s)
	}
	for _, m := range CCUsageModes { // every mode --ccusage accepts has its rules
		if !ScanOptions(m, "").CCUsage {
			t.Errorf("--ccusage %s reads lines as tune does", m)
		}
	}
}

// TestAuditOutputsAgree: the aggregate, the csv rows and the Parquet export of one set of transcripts
// count the same requests, with or without a date range, and the hooks see exactly one scan (no
// progress for a small input).
func TestAuditOutputsAgree(t *testing.T) {
	for _, dates := range [][2]string{{"", ""}, {"2026-09-28", "2026-09-28"}, {"2000-01-01", "2000-01-02"}} {
		base := AuditOptions{Paths: []string{demoTranscripts}, Location: time.UTC, Since: dates[0], Until: dates[1]}
		var scans int
		hooks := ScanHooks{
			Progress: func(done, total int64) { t.Errorf("progress %d/%d for a small input", done, total) },
			Scanned:  func(*transcript.Result) { scans++ },
		}
		text := base
		text.Format = "text"
		agg, err := Audit(noEnv(), text, nil, hooks)
		if err != nil {
			t.Fatal(err)
		}
		if scans != 1 {
			t.Errorf("%v: %d scans reported, want 1", dates, scans)
		}
		n := agg.Report.Totals.Requests
		if dates[0] != "2000-01-01" && n == 0 {
			t.Fatalf("no request in %s", demoTranscripts)
		}
		if dates[0] == "2000-01-01" && n != 0 {
			t.Errorf("%v: %d requests outside the transcripts' dates", dates, n)
		}

		csv := base
		csv.Format = "csv"
		var rows bytes.Buffer
		if _, err := Audit(noEnv(), csv, &rows, ScanHooks{}); err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(rows.String(), "\n") - 1; lines != n {
			t.Errorf("%v: %d csv rows, aggregate %d requests", dates, lines, n)
		}

		pq := base
		pq.Format, pq.Out = "parquet", filepath.Join(t.TempDir(), "requests.parquet")
		res, err := Audit(noEnv(), pq, nil, ScanHooks{})
		if err != nil {
			t.Fatal(err)
		}
		if res.ParquetRows != int64(n) {
			t.Errorf("%v: %d parquet rows, aggregate %d requests", dates, res.ParquetRows, n)
		}
		if _, err := os.Stat(pq.Out); err != nil {
			t.Errorf("%v: parquet file: %v", dates, err)
		}
	}
}

// TestAuditReportIsTheReportAuditReport: tune audit --report and tune report audit write the same
// files for the same transcripts (one aggregate, one converter).
func TestAuditReportIsTheReportAuditReport(t *testing.T) {
	dir1, dir2 := t.TempDir(), t.TempDir()
	res, err := Audit(noEnv(), AuditOptions{Paths: []string{demoTranscripts}, Format: "json", Location: time.UTC, By: audit.GroupBy("session"),
		Report: true, ReportDir: dir1}, nil, ScanHooks{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ReportAudit(noEnv(), ReportAuditOptions{Paths: []string{demoTranscripts}, OutDir: dir2}, ScanHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ReportFiles) == 0 || len(res.ReportFiles) != len(rep.Files) {
		t.Fatalf("audit --report wrote %v, report audit %v", res.ReportFiles, rep.Files)
	}
	for i := range rep.Files {
		a, _ := os.ReadFile(res.ReportFiles[i])
		b, _ := os.ReadFile(rep.Files[i])
		if filepath.Base(res.ReportFiles[i]) != filepath.Base(rep.Files[i]) || !bytes.Equal(a, b) {
			t.Errorf("%s and %s differ", res.ReportFiles[i], rep.Files[i])
		}
	}
}

// TestAuditRefusesAPathWithoutRecords: a PATH whose files hold no Claude Code record is an error that
// names it, not an audit of zero requests; the result still says where it looked.
func TestAuditRefusesAPathWithoutRecords(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.jsonl"), []byte("{\"no\":\"timestamp\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Audit(noEnv(), AuditOptions{Paths: []string{dir}, Format: "text", Location: time.UTC}, nil, ScanHooks{})
	if err == nil || !strings.Contains(err.Error(), dir+": no Claude Code transcript record") || !strings.Contains(err.Error(), "in 1 file") {
		t.Errorf("error %v", err)
	}
	if res == nil || res.NoTranscripts {
		t.Errorf("result %+v", res)
	}
}

// TestAuditABByEffort: runs recording no effort are counted and left out; an unknown baseline is a
// usage error; labelled arms keep their order with the baseline first.
func TestAuditABByEffort(t *testing.T) {
	cmp := audit.ABOptions{PairBy: "order", Alpha: 0.05, Confidence: 0.95}
	var scans int
	res, err := AuditAB(noEnv(), AuditABOptions{ByEffort: true, Paths: []string{effortRuns}, ABOptions: cmp},
		ScanHooks{Scanned: func(*transcript.Result) { scans++ }})
	if err != nil {
		t.Fatal(err)
	}
	if res.NoEffort != 1 || res.Runs != 13 || scans != 1 {
		t.Errorf("left out %d of %d runs in %d scans, want 1 of 13 in 1", res.NoEffort, res.Runs, scans)
	}
	if len(res.Report.Arms) != 2 || res.Report.Arms[0].Name != "high" {
		t.Errorf("arms %+v", res.Report.Arms)
	}

	_, err = AuditAB(noEnv(), AuditABOptions{ByEffort: true, Paths: []string{effortRuns}, Baseline: "low", ABOptions: cmp}, ScanHooks{})
	var fe *exitcode.FlagError
	if !errors.As(err, &fe) {
		t.Errorf("unknown baseline: %v, want a usage error", err)
	}

	res, err = AuditAB(noEnv(), AuditABOptions{Arms: []Arm{{"a", []string{effortRuns}}, {"b", []string{demoTranscripts}}}, Baseline: "b", ABOptions: cmp},
		ScanHooks{Scanned: func(*transcript.Result) { scans++ }})
	if err != nil {
		t.Fatal(err)
	}
	if scans != 3 || res.Report.Arms[0].Name != "b" || res.Report.Arms[1].Name != "a" {
		t.Errorf("%d scans, arms %+v", scans, res.Report.Arms)
	}

	_, err = AuditAB(noEnv(), AuditABOptions{Arms: []Arm{{"a", []string{effortRuns}}, {"b", []string{t.TempDir()}}}, ABOptions: cmp}, ScanHooks{})
	if err == nil || !strings.Contains(err.Error(), "arm b: no transcript") {
		t.Errorf("empty arm: %v", err)
	}
}

// TestEffortSeparatesCensusAndTranscriptWarnings: the census's warnings (named under the repository)
// and the transcripts' come apart, and both are in the report; --census-only reads no transcripts.
func TestEffortSeparatesCensusAndTranscriptWarnings(t *testing.T) {
	only, err := Effort(noEnv(), EffortOptions{Repo: demoRepo, CensusOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(only.Report.Pins) == 0 || only.Roots != nil || only.ObservedWarnings != nil {
		t.Errorf("census only: %d pins, roots %v, observed warnings %v", len(only.Report.Pins), only.Roots, only.ObservedWarnings)
	}
	res, err := Effort(noEnv(), EffortOptions{Repo: demoRepo, Paths: []string{demoTranscripts}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(res.Report.Warnings), len(res.CensusWarnings)+len(res.ObservedWarnings); got != want {
		t.Errorf("%d warnings in the report, %d census + %d observed", got, len(res.CensusWarnings), len(res.ObservedWarnings))
	}
	if len(res.CensusWarnings) != len(only.CensusWarnings) || res.NoTranscripts {
		t.Errorf("census warnings %v vs %v, no transcripts %v", res.CensusWarnings, only.CensusWarnings, res.NoTranscripts)
	}
	empty, err := Effort(noEnv(), EffortOptions{Paths: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if !empty.NoTranscripts {
		t.Error("an empty folder: NoTranscripts not set")
	}
}

// TestZone: --timezone beats $TZ, a leading ":" in $TZ is dropped, and the error names where the bad
// zone came from.
func TestZone(t *testing.T) {
	env := func(tz string) func(string) string {
		return func(k string) string {
			if k == "TZ" {
				return tz
			}
			return ""
		}
	}
	for _, c := range []struct{ flag, tz, want string }{
		{"UTC", "Europe/Paris", "UTC"},
		{"", ":Europe/Paris", "Europe/Paris"},
		{"", "", "Local"},
		{"Mars/Olympus", "UTC", `--timezone "Mars/Olympus": not a time zone`},
		{"", "Mars/Olympus", `TZ="Mars/Olympus": not a time zone (set --timezone)`},
	} {
		loc, err := Zone(c.flag, env(c.tz))
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = loc.String()
		}
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("Zone(%q, TZ=%q) = %s, want %s", c.flag, c.tz, got, c.want)
		}
	}
}
