package report

// The proposal report's decision chart: the flagged tasks' raw scores under the parent and under the
// candidate against the bucket edges, so that a reviewer sees at a glance which tasks the change lifts
// out of the low side (L0/L1) and by how much. It lives apart from proposal.go, whose evidence sections
// other work changes; proposal.go only calls proposalDecision.

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ldd-tools/tune/internal/weights"
)

// TaskScore is a flagged task's raw score under the parent and under the candidate.
type TaskScore struct {
	Title             string // redacted before it is drawn
	Parent, Candidate float64
}

// proposalDecision writes the decision chart, when the report has scores to draw.
func proposalDecision(r *renderSet, in ProposalReport) error {
	c, ok := decisionChart(in)
	if !ok {
		return nil
	}
	fmt.Fprintf(&r.md, "The flagged tasks' raw scores under %s and under the candidate, against the bucket edges (a score up to an edge gets the level below it; the shaded band is the low side, L0/L1):\n\n", weights.VersionName(in.Parent))
	return r.chart("decision", "flagged tasks' scores under the parent and the candidate", c)
}

// decisionChart is drawn when the proposal keeps a change: with nothing kept, "the candidate" is the
// parent again (the reverted attempts are in the Attempts table).
func decisionChart(in ProposalReport) (ScoreChart, bool) {
	if !keepsChange(in) {
		return ScoreChart{}, false
	}
	c := ScoreChart{
		Title:     fmt.Sprintf("Flagged tasks: %s → candidate", weights.VersionName(in.Parent)),
		FromName:  "under " + weights.VersionName(in.Parent),
		ToName:    "under the candidate",
		Tasks:     in.Decisive,
		FromEdges: edgesOf(in.Before),
		ToEdges:   edgesOf(in.After),
	}
	return c, len(c.Tasks) > 0
}

func edgesOf(w weights.Weights) []float64 {
	out := make([]float64, len(w.Buckets.Edges))
	for i, e := range w.Buckets.Edges {
		out[i] = e.Float()
	}
	return out
}

// ScoreChart draws one row per task: its score before (a ring) and after (a dot) joined by an arrow
// line, over vertical bucket edges with the levels named between them and the low side shaded.
type ScoreChart struct {
	Title            string
	FromName, ToName string
	Tasks            []TaskScore
	// FromEdges and ToEdges are the inclusive upper edges of L0..L3 before and after (the same unless
	// the change moves an edge; then both are drawn, the old ones lighter).
	FromEdges, ToEdges []float64
}

// Render implements Chart.
func (sc ScoreChart) Render(w io.Writer, f Format) error {
	n := len(sc.Tasks)
	if n == 0 || len(sc.ToEdges) == 0 {
		return errNoData
	}
	p := newPlot("raw score (points)", "")
	names := make([]string, n)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, e := range append(append([]float64{}, sc.FromEdges...), sc.ToEdges...) {
		lo, hi = math.Min(lo, e), math.Max(hi, e)
	}
	var from, to plotter.XYs
	for i, t := range sc.Tasks {
		y := float64(n - 1 - i) // the first task on top, as in the table
		names[n-1-i] = shorten(Redact(t.Title), maxCategoryRunes)
		from = append(from, plotter.XY{X: t.Parent, Y: y})
		to = append(to, plotter.XY{X: t.Candidate, Y: y})
		lo, hi = math.Min(lo, math.Min(t.Parent, t.Candidate)), math.Max(hi, math.Max(t.Parent, t.Candidate))
	}
	lo, hi = math.Floor(lo)-1, math.Ceil(hi)+1
	top := float64(n) - 0.3

	// The low side: everything up to the L1 edge of the candidate.
	low, err := plotter.NewPolygon(plotter.XYs{{X: lo, Y: -0.6}, {X: sc.ToEdges[weights.L1], Y: -0.6}, {X: sc.ToEdges[weights.L1], Y: top}, {X: lo, Y: top}})
	if err != nil {
		return err
	}
	low.Color, low.LineStyle.Width = color.NRGBA{R: 0xD5, G: 0x5E, B: 0x00, A: 0x22}, 0
	p.Add(low, plotter.NewGrid())

	var legend legendEntries
	if !slices.Equal(sc.FromEdges, sc.ToEdges) {
		if _, err := addEdges(p, sc.FromEdges, -0.6, top, color.Gray{Y: 0xBB}); err != nil {
			return err
		}
	}
	edge, err := addEdges(p, sc.ToEdges, -0.6, top, color.Gray{Y: 0x55})
	if err != nil {
		return err
	}
	// The level names between the edges, above the rows.
	var levels plotter.XYLabels
	bounds := append(append([]float64{lo}, sc.ToEdges...), hi)
	for k := 0; k+1 < len(bounds); k++ {
		if bounds[k+1] <= bounds[k] {
			continue
		}
		levels.XYs = append(levels.XYs, plotter.XY{X: (bounds[k] + bounds[k+1]) / 2, Y: top})
		levels.Labels = append(levels.Labels, weights.Level(k).String())
	}
	lab, err := plotter.NewLabels(levels)
	if err != nil {
		return err
	}
	for k := range lab.TextStyle {
		lab.TextStyle[k].Font = sans(9)
		lab.TextStyle[k].XAlign, lab.TextStyle[k].YAlign = draw.XCenter, draw.YBottom
	}
	p.Add(lab)

	for i := range sc.Tasks {
		seg, err := plotter.NewLine(plotter.XYs{from[i], to[i]})
		if err != nil {
			return err
		}
		seg.Color, seg.Width = seriesColor(0), vg.Points(1.5)
		p.Add(seg)
	}
	before, err := plotter.NewScatter(from)
	if err != nil {
		return err
	}
	before.GlyphStyle = draw.GlyphStyle{Color: seriesColor(0), Radius: vg.Points(3.5), Shape: draw.RingGlyph{}}
	after, err := plotter.NewScatter(to)
	if err != nil {
		return err
	}
	after.GlyphStyle = draw.GlyphStyle{Color: seriesColor(0), Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
	p.Add(before, after)
	legend.add(sc.FromName, before)
	legend.add(sc.ToName, after)
	legend.add("bucket edge", edge)
	legend.add("low side (L0/L1)", low)

	p.NominalY(names...)
	p.X.Min, p.X.Max = lo, hi
	p.X.Tick.Marker = plot.TickerFunc(integerTicks)
	p.Y.Min, p.Y.Max = -0.6, top+0.6
	widest := vg.Length(0)
	for _, nm := range names {
		widest = max(widest, textStyle(9).Width(nm))
	}
	room := vg.Length(fallbackSlack-1) * widest
	height := max(vg.Length(n)*vg.Points(22)+1.4*vg.Inch, 2.2*vg.Inch)
	return compose(w, f, chartWidth, height, sc.Title, legend, func(c draw.Canvas) { p.Draw(draw.Crop(c, room, 0, 0, 0)) })
}

// addEdges draws a dashed vertical line at each edge, from y0 to y1, and returns the last (for the
// legend).
func addEdges(p *plot.Plot, edges []float64, y0, y1 float64, c color.Color) (*plotter.Line, error) {
	var last *plotter.Line
	for _, e := range edges {
		l, err := plotter.NewLine(plotter.XYs{{X: e, Y: y0}, {X: e, Y: y1}})
		if err != nil {
			return nil, err
		}
		l.Color, l.Width, l.Dashes = c, vg.Points(1), []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		last = l
	}
	return last, nil
}
