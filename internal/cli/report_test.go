package cli

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/tools/genhistory"
	"github.com/ldd-tools/tune/internal/weights"
)

func TestReportFlags(t *testing.T) {
	var got *reportOptions
	f := &Factory{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Now: time.Now,
		Getenv: func(string) string { return "" }, ReportsDir: "rep", WeightsDir: "w", FixturesDir: "fx"}
	for _, c := range []struct {
		args                []string
		kind, proposal, out string
		paths, arms         []string
		json, mixed         bool
	}{
		{args: []string{"proposal"}, kind: "proposal", out: "rep"},
		{args: []string{"proposal", "p-0123456789ab", "--out", "x", "--json"},
			kind: "proposal", proposal: "p-0123456789ab", out: "x", json: true},
		{args: []string{"history", "--out", "h"}, kind: "history", out: "h"},
		{args: []string{"audit", "t1", "t2", "--arm", "high=a", "--arm", "xhigh=b", "--allow-mixed"}, kind: "audit", out: "rep",
			paths: []string{"t1", "t2"}, arms: []string{"high=a", "xhigh=b"}, mixed: true},
	} {
		got = nil
		cmd := newCmdReport(f, func(o *reportOptions) error { got = o; return nil })
		cmd.SetArgs(c.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if got.Kind != c.kind || got.Proposal != c.proposal || got.OutDir != c.out || got.JSON != c.json ||
			got.Env.WeightsDir != "w" || got.Env.FixturesDir != "fx" ||
			strings.Join(got.Paths, ",") != strings.Join(c.paths, ",") || strings.Join(got.Arms, ",") != strings.Join(c.arms, ",") ||
			got.AllowMixed != c.mixed {
			t.Errorf("%v: options %+v", c.args, *got)
		}
	}
}

// A proposal file alone: its steps become attempts, the stored screen numbers of the changed signal a
// screen row (phi, log-odds, z and min p recomputed from the counts), and parent → candidate the diff.
func TestProposalReportFromFile(t *testing.T) {
	p := storeTestProposal(t)
	p.ID = p.ComputeID()
	parent, err := weights.Load(testutil.ReferenceWeightsPath())
	if err != nil {
		t.Fatal(err)
	}
	in := app.ProposalReportOf(p, parent)
	if in.Window != nil || len(in.Replay) != 0 {
		t.Error("a proposal file has no window and no replay")
	}
	if len(in.Attempts) != 1 || in.Attempts[0].Change != "ambiguous +1" || in.Attempts[0].Decision != "accept" {
		t.Errorf("attempts %+v", in.Attempts)
	}
	if len(in.Screen) != 1 {
		t.Fatalf("screen %+v", in.Screen)
	}
	row := in.Screen[0]
	if row.Signal != "ambiguous" || !row.Chosen || row.A != 3 || row.FisherP != 0.0123 || row.HolmP != 0.0984 ||
		math.IsNaN(row.Phi) || row.Phi <= 0 || row.Z <= 0 || row.MinP <= 0 {
		t.Errorf("screen row %+v", row)
	}
	if len(in.Flagged) != len(p.Evidence) || in.Flagged[0].Title != p.Evidence[0].Title {
		t.Errorf("flagged %+v", in.Flagged)
	}
	files, err := report.RenderProposal(in)
	if err != nil {
		t.Fatal(err)
	}
	md := string(files[0].Data)
	for _, s := range []string{"| **ambiguous**          |   2 |   3 | +1 |", "## Window\n\n_Not recorded in the proposal._", "**Decision: accept** — ambiguous +1 (v0001"} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q:\n%s", s, md)
		}
	}
}

func TestReportErrors(t *testing.T) {
	wd, fd := storeTestDirs(t)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"report"}, ExitUsage, "which report?"},
		{[]string{"report", "audits"}, ExitUsage, `unknown report "audits"`},
		{[]string{"report", "proposal", "a", "b"}, ExitUsage, "tune report proposal [PROPOSAL]: want at most one proposal (default the newest)"},
		{[]string{"report", "proposal"}, ExitError, "no proposal in " + filepath.Join(wd, "proposals")},
		{[]string{"report", "proposal", "p-000000000000"}, ExitError, "p-000000000000.json: no such file"},
	} {
		code, _, errOut := storeRun(t, wd, fd, nil, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errOut, c.code, c.msg)
		}
	}
}

// TestReportExcerpts keeps docs/report-excerpts.md (the README's report excerpts) and its charts in step
// with the code: it runs the commands on the bundled weights and fixtures and on generated trace
// histories (docs/synthetic-histories.md), cuts a few sections out of each report and compares them with
// the committed files (-update rewrites them).
func TestReportExcerpts(t *testing.T) {
	var proposalMD, historyMD, auditMD []byte
	var charts = map[string][]byte{}
	t.Run("generate", func(t *testing.T) {
		dir := t.TempDir()
		if err := copyDir(filepath.Join(repoRoot(), "weights"), filepath.Join(dir, "weights")); err != nil {
			t.Fatal(err)
		}
		if err := copyDir(filepath.Join(repoRoot(), "fixtures"), filepath.Join(dir, "fixtures")); err != nil {
			t.Fatal(err)
		}
		w, err := weights.Load(filepath.Join(dir, "weights", "v0001.toml"))
		if err != nil {
			t.Fatal(err)
		}
		phase3, _ := genhistory.Phase3Gate(1, &w)
		edge, _ := genhistory.BucketEdge(1, &w)
		// Paths in the reports are as given on the command line: run from the directory, with relative paths.
		t.Chdir(dir)
		for name, h := range map[string]*genhistory.History{"api.trace.log": phase3, "web.trace.log": edge} {
			if err := os.WriteFile(name, h.Render(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		run := func(args ...string) string {
			t.Helper()
			code, out, errOut := storeRun(t, "weights", "fixtures", nil, append([]string{"--reports-dir", "reports"}, args...)...)
			if code != 0 {
				t.Fatalf("tune %v: exit %d\n%s", args, code, errOut)
			}
			return out
		}
		run("propose", "api.trace.log")
		paths := strings.Fields(run("report", "proposal"))
		run("apply")
		run("propose", "web.trace.log") // a bucket-edge change that the replay reverts
		run("rollback")
		paths = append(paths, strings.Fields(run("report", "history"))...)
		// The audit: two labelled arms of three bundled spotter sessions each.
		transcripts := filepath.Join(repoRoot(), "testdata", "transcripts", "spotter", "test", "fixtures", "transcripts")
		for arm, sessions := range map[string][]string{
			"high":  {"4d5611e5-241a-462a-8d15-5122611a9569", "ae4a77f8-aedd-4bc1-888f-c94edc91af04", "8463c716-a2ea-4c14-9efa-87158ebd9f20"},
			"xhigh": {"258c7280-ae70-4798-800f-63464d01a85d", "fa812bfe-b295-4cca-9c2f-fdf01028cb46", "6c2214d7-b87e-4432-8e41-22ba294ea584"},
		} {
			for _, s := range sessions {
				src := filepath.Join(transcripts, s)
				if data, err := os.ReadFile(src + ".jsonl"); err == nil {
					if err := os.MkdirAll(filepath.Join("arms", arm), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join("arms", arm, s+".jsonl"), data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if err := copyDir(src, filepath.Join("arms", arm, s)); err != nil {
					t.Fatal(err)
				}
			}
		}
		paths = append(paths, strings.Fields(run("report", "audit", "--arm", "high=arms/high", "--arm", "xhigh=arms/xhigh"))...)
		if pngDir := os.Getenv("TUNE_CHARTS_DIR"); pngDir != "" { // make charts: these charts as PNG too
			s, err := store.Open("weights", nil)
			if err != nil {
				t.Fatal(err)
			}
			in, err := app.HistoryReportOf(s)
			if err != nil {
				t.Fatal(err)
			}
			writePNGs(t, pngDir, "excerpt-history-", report.HistoryCharts(in))
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			base := filepath.Base(p)
			switch {
			case strings.HasPrefix(base, "proposal-") && strings.HasSuffix(base, ".md"):
				proposalMD = data
			case strings.HasPrefix(base, "history-") && strings.HasSuffix(base, ".md"):
				historyMD = data
			case strings.HasSuffix(base, "-loss.svg") && strings.HasPrefix(base, "history-"):
				charts["history-loss.svg"] = data
			case strings.HasPrefix(base, "proposal-") && strings.HasSuffix(base, "-decision.svg"):
				charts["proposal-decision.svg"] = data
			case strings.HasSuffix(base, "-weights.svg"):
				charts["history-weights.svg"] = data
			case strings.HasPrefix(base, "audit-") && strings.HasSuffix(base, ".md"):
				auditMD = data
			case strings.HasPrefix(base, "audit-") && strings.HasSuffix(base, "-spend.svg"):
				charts["audit-spend.svg"] = data
			case strings.HasPrefix(base, "audit-") && strings.HasSuffix(base, "-ab.svg"):
				charts["audit-ab.svg"] = data
			}
		}
	})
	if proposalMD == nil || historyMD == nil || auditMD == nil || len(charts) != 5 {
		t.Fatalf("reports missing: proposal %t, history %t, audit %t, charts %d", proposalMD != nil, historyMD != nil, auditMD != nil, len(charts))
	}
	var doc strings.Builder
	doc.WriteString(`# EVAL report excerpts

Cut from reports that ` + "`go test ./internal/cli -run TestReportExcerpts -update`" + ` writes from the bundled
weights (v0001) and fixtures and two generated trace histories (` + "`internal/tools/genhistory`" + `, cases
phase3-gate and bucket-edge, seed 1): propose on the first, apply, propose on the second (reverted),
rollback; and from the bundled spotter transcripts, six sessions split into two labelled arms (an A/B
of labels, not of real effort levels: it shows the form, not a finding). Full reports: ` + "`tune report proposal`, `tune report history`, `tune report audit`" + `.

## Proposal report

`)
	doc.WriteString(excerpt(proposalMD, "Flagged tasks", "Attempts", "Guardrails"))
	doc.WriteString("## History report\n\n")
	doc.WriteString(excerpt(historyMD, "Suite loss by generation", "Every attempt and action", "Weight trajectory"))
	doc.WriteString("## Audit report\n\n")
	doc.WriteString(excerpt(auditMD, "Spend", "Thinking by class and effort", "A/B"))
	testutil.Golden(t, "../../../docs/report-excerpts.md", []byte(doc.String()))
	for name, data := range charts {
		testutil.Golden(t, "../../../docs/report-excerpts/"+name, data)
	}
}

// excerpt keeps a report's head and the named sections, demotes its headings by two levels for embedding,
// and points chart links at docs/report-excerpts/.
func excerpt(md []byte, sections ...string) string {
	parts := strings.Split(string(md), "\n## ")
	var b strings.Builder
	b.WriteString("#" + "#" + strings.TrimRight(parts[0], "\n") + "\n\n")
	for _, p := range parts[1:] {
		title, _, _ := strings.Cut(p, "\n")
		for _, s := range sections {
			if title == s || strings.HasPrefix(title, s+":") {
				b.WriteString("#### " + strings.TrimRight(p, "\n") + "\n\n")
			}
		}
	}
	out := chartLink.ReplaceAllString(b.String(), "](report-excerpts/$1-$2.svg)")
	return out
}

var chartLink = regexp.MustCompile(`\]\((proposal|history|audit)-[A-Za-z0-9_-]+?-(loss|weights|spend|ab|decision)\.svg\)`)

func writePNGs(t *testing.T, dir, prefix string, charts []report.NamedChart) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range charts {
		var b bytes.Buffer
		if err := c.Chart.Render(&b, report.PNG); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, prefix+c.Name+".png"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
