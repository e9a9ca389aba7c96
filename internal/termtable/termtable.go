// Package termtable is the one place tune sets up tablewriter. A Table is built from named columns and
// string rows, then rendered in one of three styles: ASCII boxes (the terminal default), a borderless
// benchstat-like grid, or GitHub Markdown (reports and pull requests).
//
// A terminal table fits the width carried by its writer (see Sized and WidthOf): it first truncates
// the columns marked Shrink with "…", then hides the columns marked Optional (the listed order is the
// hiding order) and says so in a footnote, and when even the essential columns do not fit it prints
// every row vertically, one "Header  value" line per cell. Width 0 means unlimited: piped output, --wide
// and Markdown keep every cell whole. The rules are in docs/decisions.md#table-width.
package termtable

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/ldd-tools/tune/internal/textfmt"
)

// Style is how a table is drawn.
type Style int

const (
	// ASCII draws +---+ boxes: stable in golden files and in any terminal.
	ASCII Style = iota
	// Grid draws light column separators without outer borders or a header rule (benchstat-like).
	Grid
	// Markdown draws a GitHub table; it is never narrowed.
	Markdown
)

// Align is a column's alignment.
type Align int

const (
	Left Align = iota
	Right
	Center
)

// Column describes one column.
type Column struct {
	Header string
	Align  Align
	// Shrink marks a long free-text column (titles, reasons, evidence) that may be truncated with "…"
	// down to MinWidth when the table is too wide.
	Shrink bool
	// MinWidth is the narrowest a Shrink column gets (default 12: less says too little to be worth a
	// table, and the vertical layout takes over).
	MinWidth int
	// KeepEnd cuts a Shrink column's cells at the start ("…0001.jsonl:21"): for evidence such as
	// file:line, whose end says the most.
	KeepEnd bool
	// Key marks a column that carries the row's point (the change, the verdict, the model): it is
	// never cut nor hidden; the other columns shrink and hide first, and a table whose key columns do
	// not fit is printed vertically, whole.
	Key bool
}

// Table collects rows and renders them.
type Table struct {
	w        io.Writer
	style    Style
	width    int
	cols     []Column
	optional []int
	rows     [][]string
	// HeaderAlign is the header alignment (tablewriter's default, centred, unless set).
	headerAlign *Align
}

// New returns an ASCII table on w with the given headers (all left-aligned). Its width is WidthOf(w).
func New(w io.Writer, headers ...string) *Table {
	return NewStyled(w, ASCII, Columns(headers...)...)
}

// NewStyled returns a table of the given style and columns. Its width is WidthOf(w) (ignored for
// Markdown).
func NewStyled(w io.Writer, style Style, cols ...Column) *Table {
	t := &Table{w: w, style: style, cols: cols}
	if style != Markdown {
		t.width = WidthOf(w)
	}
	return t
}

// Columns makes left-aligned columns from headers.
func Columns(headers ...string) []Column {
	cols := make([]Column, len(headers))
	for i, h := range headers {
		cols[i] = Column{Header: h}
	}
	return cols
}

// AlignRight right-aligns every column but the first (numbers after a label), and returns t.
func (t *Table) AlignRight() *Table {
	for i := 1; i < len(t.cols); i++ {
		t.cols[i].Align = Right
	}
	return t
}

// AlignHeaders sets the header alignment of every column, and returns t.
func (t *Table) AlignHeaders(a Align) *Table {
	t.headerAlign = &a
	return t
}

// Shrink marks the named columns as truncatable with "…", and returns t.
func (t *Table) Shrink(headers ...string) *Table {
	for _, h := range headers {
		if !t.cols[t.index(h)].Key {
			t.cols[t.index(h)].Shrink = true
		}
	}
	return t
}

// ShrinkStart marks the named columns as truncatable at their start ("…" then the end of the cell),
// and returns t.
func (t *Table) ShrinkStart(headers ...string) *Table {
	for _, h := range headers {
		if !t.cols[t.index(h)].Key {
			t.cols[t.index(h)].Shrink = true
			t.cols[t.index(h)].KeepEnd = true
		}
	}
	return t
}

// Key marks the named columns as the table's key columns (Column.Key): never cut, never hidden, and
// returns t.
func (t *Table) Key(headers ...string) *Table {
	for _, h := range headers {
		c := &t.cols[t.index(h)]
		c.Key, c.Shrink, c.KeepEnd = true, false, false
	}
	return t
}

// Optional names the low-value columns that may be hidden when truncation is not enough, the first
// hidden first, and returns t.
func (t *Table) Optional(headers ...string) *Table {
	for _, h := range headers {
		if t.cols[t.index(h)].Key {
			panic("termtable: key column " + h + " cannot be optional")
		}
		t.optional = append(t.optional, t.index(h))
	}
	return t
}

func (t *Table) index(header string) int {
	for i, c := range t.cols {
		if c.Header == header {
			return i
		}
	}
	panic("termtable: no column " + header)
}

// Append adds a row; missing cells are empty, extra cells are an error.
func (t *Table) Append(cells ...string) error {
	if len(cells) > len(t.cols) {
		return fmt.Errorf("termtable: row has %d cells for %d columns", len(cells), len(t.cols))
	}
	row := make([]string, len(t.cols))
	// a cell is escaped before it is measured, so a control character is shown as \xNN and the columns
	// still line up (docs/decisions.md#hostile-files-issue-25)
	escape := textfmt.Terminal
	if t.style == Markdown {
		escape = textfmt.Markdown
	}
	for i, c := range cells {
		// a cell is one line of its row: data cannot forge a row or overwrite a line (the audit review)
		row[i] = textfmt.OneLine(escape(c))
	}
	t.rows = append(t.rows, row)
	return nil
}

// Render writes the table.
func (t *Table) Render() error {
	if t.width <= 0 || t.style == Markdown {
		return t.render(t.w, allColumns(len(t.cols)), nil)
	}
	natural := t.naturalWidths()
	visible := allColumns(len(t.cols))
	var hidden []string
	for k := 0; ; k++ {
		caps, ok := t.fit(natural, visible)
		if ok && !t.distinct(visible, caps) {
			// Hiding or cutting would show different rows as the same row: one record per block instead,
			// which keeps every cell.
			break
		}
		if ok {
			if err := t.render(t.w, visible, caps); err != nil {
				return err
			}
			if len(hidden) > 0 {
				note := "(hidden: " + strings.Join(hidden, ", ") + "; --wide shows all)"
				_, err := fmt.Fprintln(t.w, Fill(note, t.width))
				return err
			}
			return nil
		}
		if k >= len(t.optional) {
			break
		}
		drop := t.optional[k]
		hidden = append(hidden, t.cols[drop].Header)
		visible = without(visible, drop)
	}
	return t.vertical()
}

// distinct reports whether rows that differ still differ once only the visible columns are shown, cut
// to caps: a reader must be able to tell two rows apart (tune watch's moved tasks differ only by the
// meta time when their titles repeat).
func (t *Table) distinct(visible []int, caps map[int]int) bool {
	// The rows as shown, each to the first row shown so; the full rows are compared only then (no copy
	// of a long cell per row: a text view of a thousand 1 MB titles is big enough already).
	shown := make(map[string]int, len(t.rows))
	for n, r := range t.rows {
		var key strings.Builder
		for _, i := range visible {
			key.WriteString(t.clip(r[i], caps, i))
			key.WriteByte(0)
		}
		if prev, ok := shown[key.String()]; ok && !slices.Equal(t.rows[prev], r) {
			return false
		} else if !ok {
			shown[key.String()] = n
		}
	}
	return true
}

// naturalWidths is each column's widest line, header included.
func (t *Table) naturalWidths() []int {
	ws := make([]int, len(t.cols))
	for i, c := range t.cols {
		ws[i] = cellWidth(c.Header)
	}
	for _, r := range t.rows {
		for i, cell := range r {
			ws[i] = max(ws[i], cellWidth(cell))
		}
	}
	return ws
}

// fit returns the width cap of each visible column so that the table fits, or false when the Shrink
// columns at their minimum still do not fit. The widest Shrink column gives up one cell at a time, so
// the space left is shared evenly among the long columns.
func (t *Table) fit(natural []int, visible []int) (map[int]int, bool) {
	caps := map[int]int{}
	total := t.overhead(len(visible))
	for _, i := range visible {
		caps[i] = natural[i]
		total += natural[i]
	}
	for total > t.width {
		best := -1
		for _, i := range visible {
			c := t.cols[i]
			if !c.Shrink || caps[i] <= t.minWidth(i) {
				continue
			}
			if best < 0 || caps[i] > caps[best] {
				best = i
			}
		}
		if best < 0 {
			return nil, false
		}
		caps[best]--
		total--
	}
	return caps, true
}

func (t *Table) minWidth(i int) int {
	c := t.cols[i]
	if c.MinWidth > 0 {
		return c.MinWidth
	}
	return 12
}

// overhead is the width of the borders and padding around n columns: "| a | b |" is 3n+1 for ASCII,
// " a │ b" with the trailing padding trimmed is 3n-2 for Grid. TestOverhead checks both against
// tablewriter.
func (t *Table) overhead(n int) int {
	if t.style == Grid {
		return 3*n - 2
	}
	return 3*n + 1
}

// render draws the visible columns, truncating cells to caps (nil: no truncation).
func (t *Table) render(w io.Writer, visible []int, caps map[int]int) error {
	aligns := make([]tw.Align, len(visible))
	headers := make([]string, len(visible))
	for k, i := range visible {
		aligns[k] = twAlign(t.cols[i].Align)
		headers[k] = t.clip(t.cols[i].Header, caps, i)
	}
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: aligns}),
	}
	switch t.style {
	case Markdown:
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()),
			tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: aligns}))
	case Grid:
		opts = append(opts, tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.Border{Left: tw.Off, Right: tw.Off, Top: tw.Off, Bottom: tw.Off},
			Symbols:  tw.NewSymbols(tw.StyleLight),
			Settings: tw.Settings{Separators: tw.Separators{BetweenColumns: tw.On, ShowHeader: tw.Off}, Lines: tw.Lines{ShowHeaderLine: tw.Off}},
		})))
	default:
		opts = append(opts, tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})))
	}
	if t.headerAlign != nil {
		opts = append(opts, tablewriter.WithHeaderAlignment(twAlign(*t.headerAlign)))
	}
	// tablewriter pads the last column of a borderless grid; the lines are trimmed so that golden
	// files and terminals see no trailing spaces.
	var b bytes.Buffer
	tbl := tablewriter.NewTable(&b, opts...)
	tbl.Header(headers)
	for _, r := range t.rows {
		cells := make([]string, len(visible))
		for k, i := range visible {
			cells[k] = t.clip(r[i], caps, i)
		}
		if err := tbl.Append(cells); err != nil {
			return err
		}
	}
	if err := tbl.Render(); err != nil {
		return err
	}
	out := b.Bytes()
	if t.style == Grid {
		out = trimLines(out)
	}
	_, err := w.Write(out)
	return err
}

// vertical prints each row as "Header  value" lines (values wrapped to the width), rows separated by a
// numbered rule: the layout for terminals too narrow for any table.
func (t *Table) vertical() error {
	label := 0
	for _, c := range t.cols {
		label = max(label, cellWidth(c.Header))
	}
	room := max(t.width-label-2, 8)
	var b bytes.Buffer
	for n, r := range t.rows {
		rule := fmt.Sprintf("-[ %d ]", n+1)
		b.WriteString(rule + strings.Repeat("-", max(0, min(t.width, label+2+room)-cellWidth(rule))) + "\n")
		for i, c := range t.cols {
			lines := wrap(r[i], room)
			for k, line := range lines {
				head := ""
				if k == 0 {
					head = c.Header
				}
				b.WriteString(strings.TrimRight(head+strings.Repeat(" ", label-cellWidth(head)+2)+line, " ") + "\n")
			}
		}
	}
	_, err := t.w.Write(b.Bytes())
	return err
}

// wrap splits s into lines of at most width display cells, at spaces where it can.
func wrap(s string, width int) []string { return wrapWidths(s, width, width) }

// wrapWidths wraps s at spaces into lines of at most first cells for the first line and rest for the
// others. The spaces between two words that stay on one line are kept as they were (an aligned
// "reason:   …" stays aligned); a break drops them.
func wrapWidths(s string, first, rest int) []string {
	var lines []string
	width := func() int {
		if len(lines) == 0 {
			return first
		}
		return rest
	}
	for _, para := range strings.Split(s, "\n") {
		var cur string
		for len(para) > 0 {
			body := strings.TrimLeft(para, " \t")
			sep := para[:len(para)-len(body)]
			if body == "" {
				break
			}
			n := strings.IndexAny(body, " \t")
			if n < 0 {
				n = len(body)
			}
			word := body[:n]
			para = body[n:]
			for cellWidth(word) > width() { // a word longer than a line is cut
				if cur != "" {
					lines = append(lines, cur)
					cur = ""
				}
				head := twwidth.Truncate(word, width())
				lines = append(lines, head)
				word = word[len(head):]
			}
			switch {
			case cur == "":
				cur = word
			case cellWidth(cur)+cellWidth(sep)+cellWidth(word) <= width():
				cur += sep + word
			default:
				lines = append(lines, cur)
				cur = word
			}
		}
		lines = append(lines, cur)
	}
	return lines
}

func (t *Table) clip(s string, caps map[int]int, i int) string {
	if caps == nil {
		return s
	}
	if t.cols[i].KeepEnd {
		return truncateStart(s, caps[i])
	}
	return truncate(s, caps[i])
}

// truncateStart shortens each line of s to width display cells, starting a cut line with "…" and
// keeping its end.
func truncateStart(s string, width int) string {
	if cellWidth(s) <= width {
		return s
	}
	lines := strings.Split(s, "\n")
	for k, l := range lines {
		if cellWidth(l) <= width {
			continue
		}
		r := []rune(l)
		n, w := len(r), 0
		for n > 0 && w+twwidth.Width(string(r[n-1])) <= width-1 {
			n--
			w += twwidth.Width(string(r[n]))
		}
		lines[k] = "…" + string(r[n:])
	}
	return strings.Join(lines, "\n")
}

// truncate shortens each line of s to width display cells, ending a cut line with "…".
func truncate(s string, width int) string {
	if cellWidth(s) <= width {
		return s
	}
	lines := strings.Split(s, "\n")
	for k, l := range lines {
		if cellWidth(l) > width {
			lines[k] = twwidth.Truncate(l, width-1) + "…"
		}
	}
	return strings.Join(lines, "\n")
}

// cellWidth is the display width of the widest line of s.
func cellWidth(s string) int {
	w := 0
	for _, l := range strings.Split(s, "\n") {
		w = max(w, twwidth.Width(l))
	}
	return w
}

func twAlign(a Align) tw.Align {
	switch a {
	case Right:
		return tw.AlignRight
	case Center:
		return tw.AlignCenter
	}
	return tw.AlignLeft
}

func allColumns(n int) []int {
	v := make([]int, n)
	for i := range v {
		v[i] = i
	}
	return v
}

func without(v []int, drop int) []int {
	out := make([]int, 0, len(v))
	for _, i := range v {
		if i != drop {
			out = append(out, i)
		}
	}
	return out
}

func trimLines(b []byte) []byte {
	lines := bytes.Split(b, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimRight(l, " ")
	}
	return bytes.Join(lines, []byte("\n"))
}
