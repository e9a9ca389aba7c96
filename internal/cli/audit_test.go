package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

func testFactory() (*Factory, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	f := &Factory{
		IO:     &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut},
		Now:    func() time.Time { return time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC) },
		Getenv: func(string) string { return "" },
	}
	return f, out, errOut
}

func runCmd(cmd *cobra.Command, args ...string) error {
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	return cmd.Execute()
}

// flagCase is one command line: the options it parses to (formatted), or the usage error it gets.
type flagCase struct {
	args    []string
	want    string // formatted options, or the usage error
	isUsage bool
}

// checkFlagCases runs each case through the command's runF hook and checks the formatted options or
// the usage error.
func checkFlagCases[T any](t *testing.T, build func(*Factory, func(*T) error) *cobra.Command, format func(*T) string, cases []flagCase) {
	t.Helper()
	for _, c := range cases {
		f, _, _ := testFactory()
		var got *T
		err := runCmd(build(f, func(o *T) error { got = o; return nil }), c.args...)
		if c.isUsage {
			var fe *FlagError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v: error %v, want usage error %q", c.args, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		if s := format(got); s != c.want {
			t.Errorf("%v: %s, want %s", c.args, s, c.want)
		}
	}
}

func TestAuditFlags(t *testing.T) {
	checkFlagCases(t, newCmdAudit, func(o *auditOptions) string {
		return fmt.Sprintf("%v by=%s format=%s ccusage=%s label=%s since=%s until=%s", o.Paths, o.By, o.Format, o.CCUsage, o.Label, o.Since, o.Until)
	}, []flagCase{
		{[]string{"a", "b"}, "[a b] by= format=text ccusage= label= since= until=", false},
		{[]string{"--json", "--by", "day"}, "[] by=day format=json ccusage= label= since= until=", false},
		{[]string{"--format", "jsonl", "--ccusage", "session", "--label", "high"}, "[] by= format=jsonl ccusage=session label=high since= until=", false},
		{[]string{"--by", "fortnight"}, "--by \"fortnight\"", true},
		{[]string{"--by", "day", "--format", "csv"}, "--by day and --format csv conflict", true},
		{[]string{"--by", "day", "--format", "parquet", "--out", "x.parquet"}, "--by day and --format parquet conflict", true},
		{[]string{"--breakdown"}, "add --by", true},
		{[]string{"--since", "2026-2-1"}, "--since \"2026-2-1\" is not a date (want YYYY-MM-DD or YYYYMMDD)", true},
		// ccusage's compact dates, read as the dashed ones
		{[]string{"--since", "20260211", "--until", "2026-02-12"}, "[] by= format=text ccusage= label= since=2026-02-11 until=2026-02-12", false},
		{[]string{"--since", "20261311"}, "--since \"20261311\" is not a date", true},
		{[]string{"--since", "2026-02-02", "--until", "2026-02-01"}, "is after --until", true},
		{[]string{"--timezone", "Mars/Olympus"}, "--timezone \"Mars/Olympus\"", true},
		{[]string{"--format", "xml"}, "--format \"xml\"", true},
		{[]string{"--json", "--format", "csv"}, "--json and --format csv conflict", true},
		{[]string{"--ccusage", "yearly"}, "--ccusage \"yearly\"", true},
		{[]string{"--max-line-bytes", "-1"}, "--max-line-bytes -1: want a number of bytes of at least 1", true},
	})
}

func TestAuditABFlags(t *testing.T) {
	checkFlagCases(t, newCmdAuditAB, func(o *auditABOptions) string {
		return fmt.Sprintf("%v effort=%v paired=%v/%s", o.Arms, o.ByEffort, o.Paired, o.PairBy)
	}, []flagCase{
		{[]string{"--arm", "low=a", "--arm", "high=b", "--arm", "low=c"}, "[{low [a c]} {high [b]}] effort=false paired=false/order", false},
		{[]string{"--by-effort", "x", "--paired", "--pair-by", "task"}, "[] effort=true paired=true/task", false},
		{[]string{}, "give the arms", true},
		{[]string{"--arm", "a=x"}, "need at least two arms", true},
		{[]string{"--arm", "a=x", "--arm", "a=y"}, "need at least two arms", true},
		{[]string{"--arm", "=x", "--arm", "b=y"}, "want NAME=PATH", true},
		{[]string{"--arm", "a=x", "--by-effort"}, "exclusive", true},
		{[]string{"--arm", "a=x", "--arm", "b=y", "z"}, "is extra", true},
		{[]string{"--arm", "a=x", "--arm", "b=y", "--baseline", "c"}, "--baseline \"c\"", true},
		{[]string{"--by-effort", "--alpha", "1.5"}, "--alpha", true},
		{[]string{"--by-effort", "--confidence", "0"}, "--confidence", true},
		// NaN compares false with everything: a range check written as x <= 0 || x >= 1 let it through
		{[]string{"--by-effort", "--alpha", "NaN"}, "--alpha NaN: want a level between 0 and 1", true},
		{[]string{"--by-effort", "--max-line-bytes", "0"}, "--max-line-bytes 0: want a number of bytes of at least 1", true},
		{[]string{"--by-effort", "--confidence", "NaN"}, "--confidence NaN: want a level between 0 and 1", true},
		{[]string{"--by-effort", "--json", "--format", "csv"}, "conflict", true},
		{[]string{"--by-effort", "--pair-by", "task"}, "--pair-by task needs --paired", true},
	})
}

// TestAuditReportHonoursReportsDir: tune audit --report without --out writes into the --reports-dir as
// the command runs. The options used to copy the directory when the command tree was built, before
// the flags were parsed, so --reports-dir (and a project's reports/) was ignored for ./reports.
func TestAuditReportHonoursReportsDir(t *testing.T) {
	transcripts, err := filepath.Abs("../../testdata/transcripts/spotter/test/fixtures/transcripts")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	dir := filepath.Join(t.TempDir(), "elsewhere")
	f, _, errOut := testFactory()
	if code := Run(f, []string{"audit", "--report", "--reports-dir", dir, transcripts}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "audit-96b4f26dac2e.md")); err != nil {
		t.Errorf("the report is not in the --reports-dir: %v\n%s", err, errOut)
	}
	if _, err := os.Stat("reports"); err == nil {
		t.Errorf("the report went to ./reports")
	}
}
