package cli

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/weights"
)

func TestReportFlags(t *testing.T) {
	var got *reportOptions
	f := &Factory{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Now: time.Now,
		Getenv: func(string) string { return "" }, ReportsDir: "rep", WeightsDir: "w", FixturesDir: "fx"}
	for _, c := range []struct {
		args                []string
		kind, proposal, out string
		logs                []string
		json                bool
	}{
		{args: []string{"proposal"}, kind: "proposal", out: "rep"},
		{args: []string{"proposal", "p-0123456789ab", "--out", "x", "--logs", "a.log", "--logs", "b.log", "--json"},
			kind: "proposal", proposal: "p-0123456789ab", out: "x", logs: []string{"a.log", "b.log"}, json: true},
		{args: []string{"history", "--out", "h"}, kind: "history", out: "h"},
	} {
		got = nil
		cmd := newCmdReport(f, func(o *reportOptions) error { got = o; return nil })
		cmd.SetArgs(c.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if got.Kind != c.kind || got.Proposal != c.proposal || got.OutDir != c.out || got.JSON != c.json ||
			strings.Join(got.Logs, ",") != strings.Join(c.logs, ",") || got.WeightsDir != "w" || got.FixturesDir != "fx" {
			t.Errorf("%v: options %+v", c.args, *got)
		}
	}
}

// A proposal file alone: its steps become attempts, the stored screen numbers of the changed signal a
// screen row (phi, log-odds, z and min p recomputed from the counts), and parent → candidate the diff.
func TestProposalReportFromFile(t *testing.T) {
	p := storeTestProposal(t)
	p.ID = p.ComputeID()
	parent, err := weights.Load(filepath.Join(repoRoot(), "weights", "v0001.toml"))
	if err != nil {
		t.Fatal(err)
	}
	in := proposalReportFromFile(p, parent)
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
		{[]string{"report", "proposal", "a", "b"}, ExitUsage, "accepts at most 1 arg"},
		{[]string{"report", "proposal"}, ExitError, "no proposal in " + filepath.Join(wd, "proposals")},
		{[]string{"report", "proposal", "p-000000000000"}, ExitError, "p-000000000000.json: no such file"},
	} {
		code, _, errOut := storeRun(t, wd, fd, nil, c.args...)
		if code != c.code || !strings.Contains(errOut, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errOut, c.code, c.msg)
		}
	}
}
