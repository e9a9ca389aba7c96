package report

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Format is a chart output format: SVG for reports (it diffs as text in a pull request), PNG for looking at.
type Format string

const (
	SVG Format = "svg"
	PNG Format = "png"
)

// Chart is something Render can draw: a LineChart, a BarChart or a DistributionChart.
type Chart interface {
	// Render draws the chart to w. The same chart gives the same bytes (gonum/plot is deterministic).
	Render(w io.Writer, f Format) error
}

// XY is one data point.
type XY struct{ X, Y float64 }

// MarkStyle says what a marker means; each has one glyph and one colour in every chart, so the legend of
// one report reads the same as the next.
type MarkStyle int

const (
	MarkAccepted   MarkStyle = iota // filled green circle
	MarkHalved                      // orange triangle
	MarkReverted                    // red cross
	MarkRolledBack                  // purple square
	MarkNeutral                     // grey ring
)

// LineChart is lines with point markers (one colour and dash pattern per line) plus marker-only series
// whose glyph says what happened at that point (accepted, reverted …). X ticks are integers: generations,
// versions and attempts are counted, not measured.
type LineChart struct {
	Title, XLabel, YLabel string
	Lines                 []LineSeries
	Marks                 []MarkSeries
	// YFromZero pins the value axis at 0, so that a loss of 0.2 does not look like a loss of 2.
	YFromZero bool
	// YIntegers labels whole numbers only on the value axis (weights are counted in points: no 2.5).
	YIntegers bool
	// XTickLabel, when set, names the X ticks (weights versions: "v0003" rather than 3).
	XTickLabel func(x float64) string
}

// LineSeries is one named line. Step draws it as a staircase (the value holds until the next point), which
// is how a weight behaves between versions.
type LineSeries struct {
	Name   string
	Points []XY
	Step   bool
	// Lo and Hi, when they have one value per point, draw an interval (an error bar) at each point.
	Lo, Hi []float64
}

// MarkSeries is a named set of markers drawn without a line.
type MarkSeries struct {
	Name   string
	Style  MarkStyle
	Points []XY
}

// BarChart is a grouped horizontal bar chart: one row per category, one bar per group in each row. Bars
// are horizontal so that long category names (scenario names) sit on the axis without overlapping.
type BarChart struct {
	Title, ValueLabel string
	Categories        []string
	Groups            []BarGroup
	// Percent prints values (shares in [0,1]) as percentages.
	Percent bool
}

// BarGroup is one series of a BarChart: one value per category.
type BarGroup struct {
	Name   string
	Values []float64
}

// DistributionChart shows, per panel (one metric each), every run of every arm as a point, with the median
// as a bar and, from five runs up, the interquartile box — a strip chart that stays honest for small n.
type DistributionChart struct {
	Title  string
	Panels []DistributionPanel
}

// DistributionPanel is one metric: its title, its unit label and one sample per arm.
type DistributionPanel struct {
	Title, ValueLabel string
	Samples           []Sample
}

// Sample is the per-run values of one arm.
type Sample struct {
	Name   string
	Values []float64
}

// Axis labels longer than these are cut with an ellipsis so that they never run into each other or eat
// the data area; the report's tables carry the full names.
const (
	maxCategoryRunes = 40 // bar chart rows (one per line, so they can be long)
	maxArmRunes      = 14 // distribution chart columns, two to four per panel
)

func shorten(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max-1]) + "…"
}

// minBoxN is the smallest sample drawn with an interquartile box; below it a box suggests a spread that
// three or four points cannot show.
const minBoxN = 5

// --- styling shared by every chart

// palette is Okabe–Ito's colour-blind-safe set (black last), so lines stay distinguishable for everyone.
var palette = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xff}, // blue
	{0xE6, 0x9F, 0x00, 0xff}, // orange
	{0x00, 0x9E, 0x73, 0xff}, // bluish green
	{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	{0xF0, 0xE4, 0x42, 0xff}, // yellow
	{0x00, 0x00, 0x00, 0xff}, // black
}

var dashes = [][]vg.Length{nil, {vg.Points(5), vg.Points(3)}, {vg.Points(1.5), vg.Points(2)}}

func seriesColor(i int) color.RGBA { return palette[i%len(palette)] }

// seriesDashes alternates solid and dashed lines, so that two lines on the same values stay visible as
// one dashed over one solid.
func seriesDashes(i int) []vg.Length {
	return dashes[(i+i/len(palette))%len(dashes)]
}

var (
	green  = color.RGBA{0x00, 0x9E, 0x73, 0xff}
	orange = color.RGBA{0xE6, 0x9F, 0x00, 0xff}
	red    = color.RGBA{0xC0, 0x1C, 0x1C, 0xff}
	purple = color.RGBA{0x88, 0x44, 0xAA, 0xff}
	grey   = color.RGBA{0x77, 0x77, 0x77, 0xff}
)

func markGlyph(s MarkStyle) draw.GlyphStyle {
	r := vg.Points(4)
	switch s {
	case MarkAccepted:
		return draw.GlyphStyle{Color: green, Radius: r, Shape: draw.CircleGlyph{}}
	case MarkHalved:
		return draw.GlyphStyle{Color: orange, Radius: r + 1, Shape: draw.TriangleGlyph{}}
	case MarkReverted:
		return draw.GlyphStyle{Color: red, Radius: r + 1, Shape: draw.CrossGlyph{}}
	case MarkRolledBack:
		return draw.GlyphStyle{Color: purple, Radius: r, Shape: draw.BoxGlyph{}}
	}
	return draw.GlyphStyle{Color: grey, Radius: r, Shape: draw.RingGlyph{}}
}

// sans is the chart font: Liberation Sans (bundled with gonum/plot) reads better at small sizes than the
// default serif.
func sans(size vg.Length) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
}

func textStyle(size vg.Length) text.Style {
	return text.Style{Color: color.Black, Font: sans(size), Handler: plot.DefaultTextHandler}
}

// newPlot returns a plot with sans fonts, labelled axes and no title (the canvas draws the title, so a
// multi-panel chart and a single plot look alike).
func newPlot(xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = sans(11)
		ax.Tick.Label.Font = sans(9)
	}
	p.Title.TextStyle.Font = sans(11)
	p.Legend.TextStyle.Font = sans(10)
	return p
}

func newLegend() *plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font = sans(10)
	l.Top, l.Left = true, true
	l.Padding = vg.Points(3)
	return &l
}

// legendEntries is a legend with its entry count (plot.Legend does not expose it).
type legendEntries struct {
	*plot.Legend
	n int
}

func (l *legendEntries) add(name string, thumbs ...plot.Thumbnailer) {
	if l.Legend == nil {
		l.Legend = newLegend()
	}
	l.Add(name, thumbs...)
	l.n++
}

// compose draws a chart: white background, the title centred on top, the legend in a column on the right
// (outside the data area, so it never hides a point), and the body in the rest.
func compose(w io.Writer, f Format, width, height vg.Length, title string, legend legendEntries, body func(draw.Canvas)) error {
	if f != SVG && f != PNG {
		return fmt.Errorf("chart format %q: want svg or png", f)
	}
	cw, err := draw.NewFormattedCanvas(width, height, string(f))
	if err != nil {
		return err
	}
	c := draw.New(cw)
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	pad := vg.Points(8)
	c = draw.Crop(c, pad, -pad, pad, -pad)
	if title != "" {
		sty := textStyle(13)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		c.FillText(sty, vg.Point{X: c.Center().X, Y: c.Max.Y}, title)
		c = draw.Crop(c, 0, 0, 0, -(sty.Rectangle(title).Size().Y + vg.Points(6)))
	}
	if legend.n > 0 {
		// The legend column leaves room for a wider fallback font (its text starts on the left).
		lw := legend.Rectangle(c).Size().X*vg.Length(fallbackSlack) + vg.Points(16)
		legend.Draw(draw.Crop(c, c.Size().X-lw+vg.Points(12), 0, 0, -vg.Points(10)))
		c = draw.Crop(c, 0, -lw, 0, 0)
	}
	body(c)
	if f != SVG {
		_, err = cw.WriteTo(w)
		return err
	}
	var b bytes.Buffer
	if _, err := cw.WriteTo(&b); err != nil {
		return err
	}
	_, err = w.Write(bytes.ReplaceAll(b.Bytes(), []byte(svgFamily), []byte(svgFamilyFallback)))
	return err
}

// fallbackSlack is how much wider than Liberation Sans a viewer's fallback sans-serif may set a label
// (DejaVu Sans, the widest common default, runs about 10 % wider on these labels): the layout leaves
// that room where a label grows into the edge of the chart.
const fallbackSlack = 1.15

// gonum's SVG backend names the font it measured with and nothing else; without Liberation Sans a
// viewer falls back to its default serif, wider, and labels overflow their room. The fallback list
// names the fonts metric-compatible with Liberation Sans first (Arial, Helvetica), then any sans-serif.
// The backend has no option for it, so the written family is replaced.
const (
	svgFamily         = "font-family:Liberation Sans;"
	svgFamilyFallback = "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"
)

// integerTicks labels whole numbers only, at most about ten of them.
func integerTicks(min, max float64) []plot.Tick {
	lo, hi := math.Ceil(min), math.Floor(max)
	if lo == 0 {
		lo = 0 // math.Ceil(-0.5) is -0, which would be labelled "-0"
	}
	if hi < lo {
		return nil
	}
	step := math.Max(1, math.Ceil((hi-lo+1)/10))
	var ticks []plot.Tick
	for v := lo; v <= hi; v++ {
		label := ""
		if math.Mod(v-lo, step) == 0 {
			label = strconv.FormatFloat(v, 'f', 0, 64)
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
	}
	return ticks
}

// numberTicks are gonum's default ticks with compact labels: 25000 rather than "25000.00", and 50k / 1.5M
// for large counts (one unit for the whole axis: 0, 8k, 16k — never 8000 next to 16k).
func numberTicks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	top := 0.0
	for _, t := range ticks {
		if t.Label != "" {
			top = math.Max(top, math.Abs(t.Value))
		}
	}
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = compactNumber(ticks[i].Value, top)
		}
	}
	return ticks
}

// compactNumber prints v in the unit that suits the largest label of its axis, top.
func compactNumber(v, top float64) string {
	if v == 0 {
		return "0"
	}
	unit, suffix := 1.0, ""
	switch {
	case top >= 1e6:
		unit, suffix = 1e6, "M"
	case top >= 1e4:
		unit, suffix = 1e3, "k"
	}
	// Tick values carry float noise (0.30000000000000004): round to what the axis can show.
	return strconv.FormatFloat(math.Round(v/unit*1e6)/1e6, 'f', -1, 64) + suffix
}

// percentTicks formats the default ticks of a share axis as percentages.
func percentTicks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value*100, 'f', -1, 64) + "%"
		}
	}
	return ticks
}

func xys(points []XY) plotter.XYs {
	out := make(plotter.XYs, len(points))
	for i, p := range points {
		out[i] = plotter.XY{X: p.X, Y: p.Y}
	}
	return out
}

var errNoData = errors.New("chart has no data")

// --- LineChart

const chartWidth = 7 * vg.Inch

// Render implements Chart.
func (lc LineChart) Render(w io.Writer, f Format) error {
	p := newPlot(lc.XLabel, lc.YLabel)
	p.X.Tick.Marker = plot.TickerFunc(integerTicks)
	if lc.XTickLabel != nil {
		p.X.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
			ticks := integerTicks(min, max)
			for i := range ticks {
				if ticks[i].Label != "" {
					ticks[i].Label = lc.XTickLabel(ticks[i].Value)
				}
			}
			return ticks
		})
	}
	p.Y.Tick.Marker = plot.TickerFunc(numberTicks)
	if lc.YIntegers {
		p.Y.Tick.Marker = plot.TickerFunc(integerTicks)
	}
	p.Add(plotter.NewGrid())
	var legend legendEntries
	n := 0
	for i, s := range lc.Lines {
		if len(s.Points) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys(s.Points))
		if err != nil {
			return fmt.Errorf("line %q: %w", s.Name, err)
		}
		line.Color, line.Dashes, line.Width = seriesColor(i), seriesDashes(i), vg.Points(1.5)
		if s.Step {
			line.StepStyle = plotter.PostStep
		}
		points.GlyphStyle = draw.GlyphStyle{Color: seriesColor(i), Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
		p.Add(line, points)
		if len(s.Lo) == len(s.Points) && len(s.Hi) == len(s.Points) {
			bars, err := plotter.NewYErrorBars(intervalPoints(s))
			if err != nil {
				return fmt.Errorf("intervals of %q: %w", s.Name, err)
			}
			bars.LineStyle.Color, bars.LineStyle.Width = seriesColor(i), vg.Points(1)
			p.Add(bars)
		}
		legend.add(s.Name, line, points)
		n += len(s.Points)
	}
	for _, m := range lc.Marks {
		if len(m.Points) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(xys(m.Points))
		if err != nil {
			return fmt.Errorf("marks %q: %w", m.Name, err)
		}
		sc.GlyphStyle = markGlyph(m.Style)
		p.Add(sc)
		legend.add(m.Name, sc)
		n += len(m.Points)
	}
	if n == 0 {
		return errNoData
	}
	if lc.YFromZero && p.Y.Min > 0 {
		p.Y.Min = 0
	}
	// Half a unit of air on each side so that the first and last markers are not cut by the axes.
	p.X.Min, p.X.Max = p.X.Min-0.5, p.X.Max+0.5
	if p.Y.Max == p.Y.Min {
		p.Y.Max = p.Y.Min + 1
	}
	p.Y.Max += (p.Y.Max - p.Y.Min) * 0.05 // headroom: the top marker must not sit on the frame
	return compose(w, f, chartWidth, 4*vg.Inch, lc.Title, legend, p.Draw)
}

// intervalPoints are a series' points with their intervals, as gonum's error bars take them.
func intervalPoints(s LineSeries) interface {
	plotter.XYer
	plotter.YErrorer
} {
	errs := make(plotter.YErrors, len(s.Points))
	for j, pt := range s.Points {
		errs[j].Low, errs[j].High = pt.Y-s.Lo[j], s.Hi[j]-pt.Y
	}
	return struct {
		plotter.XYs
		plotter.YErrors
	}{xys(s.Points), errs}
}

// --- BarChart

const (
	barThickness = vg.Length(9)
	barGap       = vg.Length(8)
)

// Render implements Chart.
func (bc BarChart) Render(w io.Writer, f Format) error {
	nc := len(bc.Categories)
	if nc == 0 || len(bc.Groups) == 0 {
		return errNoData
	}
	p := newPlot(bc.ValueLabel, "")
	p.Add(&plotter.Grid{Vertical: plotter.NewGrid().Vertical})
	p.X.Tick.Marker = plot.TickerFunc(numberTicks)
	if bc.Percent {
		p.X.Tick.Marker = plot.TickerFunc(percentTicks)
	}
	// Category i is drawn at y = nc-1-i so that the first category is at the top, as in the table.
	names := make([]string, nc)
	for i, c := range bc.Categories {
		names[nc-1-i] = shorten(c, maxCategoryRunes)
	}
	var legend legendEntries
	ng := len(bc.Groups)
	maxV := 0.0
	var labels plotter.XYLabels
	for g, grp := range bc.Groups {
		if len(grp.Values) != nc {
			return fmt.Errorf("bar group %q has %d values for %d categories", grp.Name, len(grp.Values), nc)
		}
		vals := make(plotter.Values, nc)
		for i, v := range grp.Values {
			vals[nc-1-i] = v
			maxV = math.Max(maxV, v)
		}
		bars, err := plotter.NewBarChart(vals, barThickness)
		if err != nil {
			return err
		}
		bars.Horizontal = true
		bars.Color = seriesColor(g)
		bars.LineStyle.Width = 0
		// Group 0 on top within its row.
		bars.Offset = vg.Length(float64(ng-1)/2-float64(g)) * barThickness
		p.Add(bars)
		legend.add(grp.Name, bars)
		for i, v := range grp.Values {
			label := fmtNum(v)
			if bc.Percent {
				label = fmtPct(v)
			}
			labels.XYs = append(labels.XYs, plotter.XY{X: v, Y: float64(nc - 1 - i)})
			labels.Labels = append(labels.Labels, label)
		}
	}
	// Value labels at the end of each bar, so that a zero bar still reads "0" and not "missing".
	lab, err := plotter.NewLabels(labels)
	if err != nil {
		return err
	}
	lab.Offset = vg.Point{X: vg.Points(3)}
	for k := range lab.TextStyle {
		lab.TextStyle[k].Font = sans(7)
		lab.TextStyle[k].YAlign = draw.YCenter
	}
	p.Add(&barLabels{lab, barOffsets(ng, nc)})
	p.NominalY(names...)
	p.X.Min = 0
	if maxV == 0 {
		maxV = 1
	}
	p.X.Max = maxV * 1.15 // room for the value labels
	p.Y.Min, p.Y.Max = -0.6, float64(nc)-0.4
	rows := vg.Length(nc) * (vg.Length(ng)*barThickness + barGap)
	height := rows + 1.3*vg.Inch
	if height < 2.5*vg.Inch {
		height = 2.5 * vg.Inch
	}
	// The category names end at the axis: room on their left for a wider fallback font.
	widest := vg.Length(0)
	for _, n := range names {
		widest = max(widest, textStyle(9).Width(n))
	}
	room := vg.Length(fallbackSlack-1) * widest
	return compose(w, f, chartWidth, height, bc.Title, legend, func(c draw.Canvas) { p.Draw(draw.Crop(c, room, 0, 0, 0)) })
}

// barOffsets is the vertical offset of each label, in label order (group-major), matching the bar offsets.
func barOffsets(ng, nc int) []vg.Length {
	var out []vg.Length
	for g := 0; g < ng; g++ {
		off := vg.Length(float64(ng-1)/2-float64(g)) * barThickness
		for i := 0; i < nc; i++ {
			out = append(out, off)
		}
	}
	return out
}

// barLabels draws value labels shifted by their bar's offset within the row; plotter.Labels has only one
// offset for all labels.
type barLabels struct {
	*plotter.Labels
	offsets []vg.Length
}

func (b *barLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, label := range b.Labels.Labels {
		pt := vg.Point{X: trX(b.XYs[i].X) + b.Offset.X, Y: trY(b.XYs[i].Y) + b.offsets[i]}
		c.FillText(b.TextStyle[i], pt, label)
	}
}

// --- DistributionChart

// Render implements Chart.
func (dc DistributionChart) Render(w io.Writer, f Format) error {
	if len(dc.Panels) == 0 {
		return errNoData
	}
	var plots []*plot.Plot
	anyBox := false
	for _, panel := range dc.Panels {
		p, box, err := distributionPlot(panel)
		if err != nil {
			return fmt.Errorf("panel %q: %w", panel.Title, err)
		}
		anyBox = anyBox || box
		plots = append(plots, p)
	}
	var legend legendEntries
	runs, _ := plotter.NewScatter(plotter.XYs{{}})
	runs.GlyphStyle = runGlyph(grey)
	legend.add("one run", runs)
	med, _ := plotter.NewLine(plotter.XYs{{}})
	med.Color, med.Width = color.Black, vg.Points(2.5)
	legend.add("median", med)
	if anyBox {
		box := &plotter.BarChart{Color: color.Transparent, LineStyle: draw.LineStyle{Color: grey, Width: vg.Points(1)}}
		legend.add(fmt.Sprintf("middle 50%% (n ≥ %d)", minBoxN), box)
	}
	cols := 2
	if len(plots) == 1 {
		cols = 1
	}
	rows := (len(plots) + cols - 1) / cols
	height := vg.Length(rows)*2.8*vg.Inch + 0.4*vg.Inch
	return compose(w, f, chartWidth, height, dc.Title, legend, func(c draw.Canvas) {
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(14), PadY: vg.Points(14)}
		for i, p := range plots {
			p.Draw(tiles.At(c, i%cols, i/cols))
		}
	})
}

func runGlyph(c color.Color) draw.GlyphStyle {
	return draw.GlyphStyle{Color: c, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
}

// jitter is a fixed, evenly spread sequence (golden-ratio steps) in [-0.5, 0.5): points of one arm fan out
// the same way on every render, so the chart is deterministic without a random source.
func jitter(i int) float64 {
	v := math.Mod(float64(i)*0.6180339887498949, 1)
	return v - 0.5
}

func distributionPlot(panel DistributionPanel) (*plot.Plot, bool, error) {
	p := newPlot("", panel.ValueLabel)
	p.Y.Tick.Marker = plot.TickerFunc(numberTicks)
	p.Title.Text = panel.Title
	p.Add(&plotter.Grid{Horizontal: plotter.NewGrid().Horizontal})
	names := make([]string, len(panel.Samples))
	anyBox := false
	minV, maxV := math.Inf(1), math.Inf(-1)
	for i, s := range panel.Samples {
		lines := strings.Split(s.Name, "\n")
		for j := range lines {
			lines[j] = shorten(lines[j], maxArmRunes)
		}
		names[i] = strings.Join(lines, "\n")
		if len(s.Values) == 0 {
			continue
		}
		col := seriesColor(i)
		sorted := append([]float64(nil), s.Values...)
		slices.Sort(sorted)
		minV, maxV = math.Min(minV, sorted[0]), math.Max(maxV, sorted[len(sorted)-1])
		if len(sorted) >= minBoxN {
			anyBox = true
			q1, q3 := quantile(sorted, 0.25), quantile(sorted, 0.75)
			box := &boxOutline{x: float64(i), lo: q1, hi: q3, halfWidth: 0.28, color: col}
			p.Add(box)
		}
		m := quantile(sorted, 0.5)
		med, err := plotter.NewLine(plotter.XYs{{X: float64(i) - 0.3, Y: m}, {X: float64(i) + 0.3, Y: m}})
		if err != nil {
			return nil, false, err
		}
		med.Color, med.Width = color.Black, vg.Points(2.5)
		p.Add(med) // under the points, so that a run at the median stays visible
		pts := make(plotter.XYs, len(s.Values))
		for j, v := range s.Values {
			pts[j] = plotter.XY{X: float64(i) + 0.3*jitter(j), Y: v}
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, false, err
		}
		sc.GlyphStyle = runGlyph(withAlpha(col, 0xc0))
		p.Add(sc)
	}
	if math.IsInf(minV, 1) {
		return nil, false, errNoData
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	if minV >= 0 {
		p.Y.Min = 0
	}
	if p.Y.Max <= p.Y.Min {
		p.Y.Max = p.Y.Min + 1
	}
	// 5 % of air at both ends, so that runs at 0 (or at the maximum) are not drawn on the frame.
	pad := (p.Y.Max - p.Y.Min) * 0.05
	p.Y.Min, p.Y.Max = p.Y.Min-pad, p.Y.Max+pad
	return p, anyBox, nil
}

func withAlpha(c color.RGBA, a uint8) color.NRGBA {
	return color.NRGBA{R: c.R, G: c.G, B: c.B, A: a}
}

// boxOutline is the interquartile box of one arm (plotter.BoxPlot adds whiskers and outlier rules that
// mislead at n = 5 to 10; the points are drawn anyway).
type boxOutline struct {
	x, lo, hi, halfWidth float64
	color                color.Color
}

func (b *boxOutline) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	x0, x1 := trX(b.x-b.halfWidth), trX(b.x+b.halfWidth)
	y0, y1 := trY(b.lo), trY(b.hi)
	pts := []vg.Point{{X: x0, Y: y0}, {X: x0, Y: y1}, {X: x1, Y: y1}, {X: x1, Y: y0}, {X: x0, Y: y0}}
	c.StrokeLines(draw.LineStyle{Color: b.color, Width: vg.Points(1)}, c.ClipLinesXY(pts)...)
}

func (b *boxOutline) DataRange() (xmin, xmax, ymin, ymax float64) {
	return b.x - b.halfWidth, b.x + b.halfWidth, b.lo, b.hi
}

// quantile is the linear-interpolation quantile (type 7) of sorted values; the median is the ordinary one.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	pos := q * float64(len(sorted)-1)
	i := int(math.Floor(pos))
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	frac := pos - float64(i)
	return sorted[i] + frac*(sorted[i+1]-sorted[i])
}

// NamedChart is a chart with the suffix its report gives its file (<base>-<Name>.svg).
type NamedChart struct {
	Name  string
	Chart Chart
}

// HistoryCharts are the charts the history report draws, by name (loss, weights, calibration; a chart
// the report omits is not listed). RenderHistory places them in its sections, and make charts renders
// the same list as PNGs to look at.
func HistoryCharts(in HistoryReport) []NamedChart {
	var out []NamedChart
	if c, ok := historyLossChart(in); ok {
		out = append(out, NamedChart{"loss", c})
	}
	if c, ok := historyTrajectoryChart(in); ok {
		out = append(out, NamedChart{"weights", c})
	}
	if c, ok := historyCalibrationChart(in.Accuracy); ok {
		out = append(out, NamedChart{"calibration", c})
	}
	return out
}

// chartNamed is the line chart of charts named name; ok is false when the list has none.
func chartNamed(charts []NamedChart, name string) (LineChart, bool) {
	for _, c := range charts {
		if c.Name == name {
			lc, ok := c.Chart.(LineChart)
			return lc, ok
		}
	}
	return LineChart{}, false
}
