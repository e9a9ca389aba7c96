package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/testutil"
)

// sampleCharts is one chart of each kind with realistic data: loss by attempt with every mark style, a
// grouped bar chart of per-scenario losses with long names, and per-arm run distributions (one arm under
// and one over the box threshold).
func sampleCharts() []NamedChart {
	return []NamedChart{
		{"line", LineChart{
			Title:  "Suite loss by attempt",
			XLabel: "attempt (log order)", YLabel: "suite loss (mean per scenario)",
			Lines: []LineSeries{{Name: "active weights", Points: []XY{{1, 0.667}, {2, 0.667}, {3, 0.444}, {4, 0.444}, {5, 0.333}, {6, 0.444}}, Step: true}},
			Marks: []MarkSeries{
				{Name: "accepted", Style: MarkAccepted, Points: []XY{{3, 0.444}, {5, 0.333}}},
				{Name: "halved", Style: MarkHalved, Points: []XY{{4, 0.389}}},
				{Name: "reverted", Style: MarkReverted, Points: []XY{{1, 0.778}, {2, 0.889}}},
				{Name: "rolled back", Style: MarkRolledBack, Points: []XY{{6, 0.444}}},
			},
			YFromZero: true,
		}},
		{"bar", BarChart{
			Title: "Loss per scenario, v3 → candidate", ValueLabel: "scenario loss",
			Categories: []string{"bugfix-single-file-typo", "greenfield-multi-component-service", "ambiguous-refactor-across-layers", "contract-rule-hit-api"},
			Groups: []BarGroup{
				{Name: "before (v3)", Values: []float64{0, 4, 2, 1}},
				{Name: "after (candidate)", Values: []float64{0, 2, 0, 1}},
			},
		}},
		{"distribution", DistributionChart{
			Title: "Runs per arm",
			Panels: []DistributionPanel{
				{Title: "output tokens", ValueLabel: "tokens per run", Samples: []Sample{
					{Name: "high", Values: []float64{12000, 15500, 9800, 20100, 13300, 17750}},
					{Name: "medium", Values: []float64{8000, 9100, 7600}},
				}},
				{Title: "wall time", ValueLabel: "seconds per run", Samples: []Sample{
					{Name: "high", Values: []float64{410, 388, 530, 460, 602, 395}},
					{Name: "medium", Values: []float64{300, 356, 280}},
				}},
			},
		}},
	}
}

func renderChart(t *testing.T, c Chart, f Format) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := c.Render(&b, f); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestChartsGoldenAndDeterministic(t *testing.T) {
	for _, nc := range sampleCharts() {
		t.Run(nc.Name, func(t *testing.T) {
			first := renderChart(t, nc.Chart, SVG)
			second := renderChart(t, nc.Chart, SVG)
			if !bytes.Equal(first, second) {
				t.Fatal("two renders of the same chart differ")
			}
			if !bytes.HasPrefix(first, []byte("<?xml")) || !bytes.Contains(first, []byte("</svg>")) {
				t.Fatalf("not an SVG document: %.80q", first)
			}
			testutil.Golden(t, "charts/"+nc.Name+".svg", first)
		})
	}
}

func TestChartsShowLabelsAndLegend(t *testing.T) {
	for _, nc := range sampleCharts() {
		svg := string(renderChart(t, nc.Chart, SVG))
		var want []string
		switch c := nc.Chart.(type) {
		case LineChart:
			want = []string{c.Title, c.XLabel, c.YLabel, "accepted", "halved", "reverted", "rolled back", "active weights"}
		case BarChart:
			want = append([]string{c.Title, c.ValueLabel}, c.Categories...)
			for _, g := range c.Groups {
				want = append(want, g.Name)
			}
		case DistributionChart:
			want = []string{c.Title, "one run", "median", "middle 50% (n ≥ 5)", "high", "medium"}
			for _, p := range c.Panels {
				want = append(want, p.Title, p.ValueLabel)
			}
		}
		for _, s := range want {
			if !strings.Contains(svg, ">"+xmlEscape(s)+"<") {
				t.Errorf("%s chart: text %q not drawn", nc.Name, s)
			}
		}
	}
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func TestChartErrors(t *testing.T) {
	for name, c := range map[string]Chart{
		"empty line":         LineChart{},
		"empty bar":          BarChart{},
		"bar length":         BarChart{Categories: []string{"a", "b"}, Groups: []BarGroup{{Name: "x", Values: []float64{1}}}},
		"empty distribution": DistributionChart{Panels: []DistributionPanel{{Samples: []Sample{{Name: "a"}}}}},
	} {
		if err := c.Render(&bytes.Buffer{}, SVG); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := (LineChart{Lines: []LineSeries{{Name: "a", Points: []XY{{1, 1}}}}}).Render(&bytes.Buffer{}, "gif"); err == nil {
		t.Error("unknown format accepted")
	}
}

// TestChartsPNG writes every sample chart, and every chart of the report goldens, as PNG under
// $TUNE_CHARTS_DIR for a human to look at (make charts). Without the variable it does nothing.
func TestChartsPNG(t *testing.T) {
	dir := os.Getenv("TUNE_CHARTS_DIR")
	if dir == "" {
		t.Skip("set TUNE_CHARTS_DIR to write PNG charts (make charts)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	charts := sampleCharts()
	charts = append(charts, reportCharts()...)
	for _, nc := range charts {
		path := filepath.Join(dir, nc.Name+".png")
		if err := os.WriteFile(path, renderChart(t, nc.Chart, PNG), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("wrote", path)
	}
}
