package report

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/plot/vg"
)

var (
	svgViewBox = regexp.MustCompile(`viewBox="0 0 ([\d.]+) ([\d.]+)"`)
	svgText    = regexp.MustCompile(`(?s)<text x="([-\d.]+)" y="[-\d.]+"[^>]*?style="([^"]*)">([^<]*)</text>`)
	svgSize    = regexp.MustCompile(`font-size:([\d.]+)px`)
)

// TestChartTextFits renders every chart (one of each kind, and every chart of the report goldens) and
// checks that each label fits inside the chart with room for a wider fallback font, and that every
// font-family names a generic fallback: a chart viewed without Liberation Sans still shows whole labels.
func TestChartTextFits(t *testing.T) {
	svgs := map[string]string{}
	for _, c := range sampleCharts() {
		svgs[c.Name] = string(renderChart(t, c.Chart, SVG))
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.svg"))
	if err != nil || len(files) < 8 {
		t.Fatalf("%d golden charts (%v): the glob is broken", len(files), err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		svgs[f] = string(b)
	}
	for name, svg := range svgs {
		vb := svgViewBox.FindStringSubmatch(svg)
		if vb == nil {
			t.Fatalf("%s: no viewBox", name)
		}
		width, _ := strconv.ParseFloat(vb[1], 64)
		texts := svgText.FindAllStringSubmatch(svg, -1)
		if len(texts) == 0 {
			t.Errorf("%s: no text", name)
		}
		for _, m := range texts {
			x, _ := strconv.ParseFloat(m[1], 64)
			style, label := m[2], unescapeSVG(m[3])
			if !strings.Contains(style, "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;") {
				t.Errorf("%s: %q has no generic font fallback: %s", name, label, style)
			}
			size, _ := strconv.ParseFloat(svgSize.FindStringSubmatch(style)[1], 64)
			w := float64(textStyle(vg.Length(size)).Width(label))
			// Whether a label grows to the right (left-aligned) or to the left (right-aligned), it must
			// stay inside the chart.
			if lo, hi := x-(fallbackSlack-1)*w, x+fallbackSlack*w; lo < -0.5 || hi > width+0.5 {
				t.Errorf("%s: %q spans %.1f–%.1f with a wider font, outside the chart's 0–%.0f", name, label, scalar.Round(lo, 1), scalar.Round(hi, 1), width)
			}
		}
	}
}

func unescapeSVG(s string) string {
	return strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&#34;", `"`, "&#39;", "'", "&quot;", `"`).Replace(s)
}
