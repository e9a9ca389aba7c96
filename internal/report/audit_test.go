package report

import (
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/testutil"
)

func TestAuditGolden(t *testing.T) {
	in := sampleAudit()
	files, err := RenderAudit(in)
	if err != nil {
		t.Fatal(err)
	}
	base := AuditBase(in)
	want := []string{base + ".md", base + "-spend.svg", base + "-ab.svg"}
	if len(files) != len(want) {
		t.Fatalf("got %d files, want %v", len(files), want)
	}
	for i, f := range files {
		if f.Name != want[i] {
			t.Errorf("file %d is %s, want %s", i, f.Name, want[i])
		}
		testutil.Golden(t, "audit/"+strings.Replace(f.Name, base, "audit", 1), f.Data)
	}
	md := string(files[0].Data)
	for _, s := range []string{
		"Skipped: 2 malformed, 1 truncated.", // sorted reasons, zero counts left out
		"| output_tokens   | 8,550 [n too small] (n=4)",
		"+68.4% |",    // significant: direction and size
		"|       ~ |", // not significant
		"| cache read  | $33.59 |        64.9 % |                  68.3 % |",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q", s)
		}
	}
}

func TestAuditWithoutAB(t *testing.T) {
	in := sampleAudit()
	in.AB = nil
	files, err := RenderAudit(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || strings.Contains(string(files[0].Data), "## A/B") {
		t.Errorf("without an A/B comparison there is no A/B section and no A/B chart")
	}
}

// TestAuditLabelsAreRedacted: arm names come from directory names, which can hold anything.
func TestAuditLabelsAreRedacted(t *testing.T) {
	in := sampleAudit()
	in.AB.Arms[1] = "high-token=abc123"
	files, err := RenderAudit(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(files[0].Data), "abc123") {
		t.Error("a secret in an arm name reached the report")
	}
}

// Three arms: one row per metric and compared arm, named; the chart has each arm once per panel.
func TestAuditThreeArms(t *testing.T) {
	in := sampleAudit()
	low := ArmStat{Arm: "low", N: 3, Median: 5000, Runs: []float64{4000, 5000, 6100}}
	extra := in.AB.Metrics[0]
	extra.Arms = [2]ArmStat{in.AB.Metrics[0].Arms[0], low}
	in.AB.Arms = []string{"medium", "high", "low"}
	in.AB.Metrics = append(in.AB.Metrics, extra)
	files, err := RenderAudit(in)
	if err != nil {
		t.Fatal(err)
	}
	md := string(files[0].Data)
	for _, s := range []string{"| output_tokens: high ", "| output_tokens: low ", " arm median [95% CI] ", "ratio is each arm over medium"} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	chart := auditABChart(in.AB)
	if got := len(chart.Panels[0].Samples); got != 3 {
		t.Errorf("output_tokens panel has %d arms, want 3 (medium once)", got)
	}
	in.AB.Arms = in.AB.Arms[:1]
	if _, err := RenderAudit(in); err != nil {
		t.Errorf("one arm: %v", err)
	}
}
