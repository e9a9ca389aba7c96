package termtable

import (
	"bytes"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

func sample(w *bytes.Buffer, style Style) *Table {
	t := NewStyled(w, style, Columns("Serial", "Action", "Proposal", "Reason")...).Shrink("Reason").Optional("Proposal")
	_ = t.Append("1", "apply", "p-be75817d6362", "suite loss rose 0.000 → 0.027; scenario loss rose: edge-L0-upper-minus7 0→1")
	_ = t.Append("12", "rollback", "—", "operator: the change made reviews slower")
	return t
}

func maxLine(s string) int {
	m := 0
	for _, l := range strings.Split(s, "\n") {
		m = max(m, twwidth.Width(l))
	}
	return m
}

// TestOverhead checks the border arithmetic fit relies on against what tablewriter draws.
func TestOverhead(t *testing.T) {
	for _, style := range []Style{ASCII, Grid} {
		var b bytes.Buffer
		tbl := sample(&b, style)
		if err := tbl.Render(); err != nil {
			t.Fatal(err)
		}
		want := tbl.overhead(4)
		for _, n := range tbl.naturalWidths() {
			want += n
		}
		if got := maxLine(b.String()); got != want {
			t.Errorf("style %d: widest line %d, computed %d\n%s", style, got, want, b.String())
		}
	}
}

func TestFitsEveryWidth(t *testing.T) {
	for _, style := range []Style{ASCII, Grid} {
		for width := MinWidth; width <= 140; width++ {
			var b bytes.Buffer
			tbl := sample(&b, style)
			tbl.SetWidth(width)
			if err := tbl.Render(); err != nil {
				t.Fatal(err)
			}
			if got := maxLine(b.String()); got > width {
				t.Fatalf("style %d width %d: a line of %d\n%s", style, width, got, b.String())
			}
		}
	}
}

func TestNarrowingSteps(t *testing.T) {
	render := func(width int) string {
		var b bytes.Buffer
		tbl := sample(&b, ASCII)
		tbl.SetWidth(width)
		if err := tbl.Render(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	full := render(0)
	if !strings.Contains(full, "edge-L0-upper-minus7 0→1 |") || maxLine(full) <= 100 {
		t.Fatalf("unlimited width must keep every cell whole:\n%s", full)
	}
	// 80: the reason is truncated, the proposal still shown
	got := render(80)
	if !strings.Contains(got, "…") || !strings.Contains(got, "p-be75817d6362") || strings.Contains(got, "hidden") {
		t.Errorf("80 columns: want a truncated reason and every column:\n%s", got)
	}
	// 45: the reason at its minimum is not enough, the optional proposal is hidden and named
	got = render(45)
	if strings.Contains(got, "p-be75817d6362") || !strings.Contains(got, "hidden: Proposal; --wide shows all") {
		t.Errorf("45 columns: want the proposal hidden and named:\n%s", got)
	}
	// 30: vertical, every value kept (wrapped)
	got = render(30)
	if !strings.HasPrefix(got, "-[ 1 ]") || !strings.Contains(got, "Proposal  p-be75817d6362") || !strings.Contains(got, "edge-L0-upper-minus7") {
		t.Errorf("30 columns: want the vertical layout with every value:\n%s", got)
	}
}

func TestMarkdownIgnoresWidth(t *testing.T) {
	var b bytes.Buffer
	tbl := sample(&b, Markdown)
	tbl.SetWidth(40)
	if err := tbl.Render(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "…") || !strings.HasPrefix(b.String(), "| Serial") {
		t.Errorf("markdown is a machine format and keeps every cell:\n%s", b.String())
	}
}

func TestResolve(t *testing.T) {
	tw := func() int { return 132 }
	for _, c := range []struct {
		wide     bool
		columns  string
		terminal bool
		want     int
	}{
		{false, "", false, 0},      // piped: full data
		{false, "", true, 132},     // terminal
		{false, "100", false, 100}, // explicit COLUMNS, even piped
		{false, "100", true, 100},
		{false, "5", true, MinWidth},
		{false, "abc", true, 132},
		{true, "80", true, 0}, // --wide wins
	} {
		if got := Resolve(c.wide, c.columns, c.terminal, tw); got != c.want {
			t.Errorf("Resolve(%v, %q, %v) = %d, want %d", c.wide, c.columns, c.terminal, got, c.want)
		}
	}
	if got := Resolve(false, "", true, func() int { return 0 }); got != 80 {
		t.Errorf("unknown terminal width = %d, want 80", got)
	}
	var b bytes.Buffer
	if WidthOf(WithWidth(WithWidth(&b, 90), 70)) != 70 || WidthOf(&b) != 0 || WithWidth(&b, 0) != &b {
		t.Error("WithWidth/WidthOf")
	}
}

func TestFill(t *testing.T) {
	s := "outcome: converged — 2 accepted step(s) lifted 3 flagged task(s) out of the low side; 0 remain\nshort\n"
	got := Fill(s, 40)
	want := "outcome: converged — 2 accepted step(s)\n  lifted 3 flagged task(s) out of the\n  low side; 0 remain\nshort\n"
	if got != want {
		t.Errorf("Fill:\n%q\nwant\n%q", got, want)
	}
	if Fill(s, 0) != s {
		t.Error("width 0 must not wrap")
	}
	var b bytes.Buffer
	if _, err := Fprintf(WithWidth(&b, 32), "  flagged: %s\n", "2026-11-20T10:00:00Z L1 tidy the settings page"); err != nil {
		t.Fatal(err)
	}
	if b.String() != "  flagged: 2026-11-20T10:00:00Z\n    L1 tidy the settings page\n" {
		t.Errorf("indented: %q", b.String())
	}
	// Runs of spaces (an aligned "reason:   …") do not repeat the first line: it did, because the rest
	// was found by cutting the first wrapped line, spaces folded, off the front of the text.
	got = Fill("reason:   keeps contract-rule-hit +1; 3 flagged task(s); tried it", 40)
	if want := "reason:   keeps contract-rule-hit +1; 3\n  flagged task(s); tried it"; got != want {
		t.Errorf("Fill with a run of spaces:\n%q\nwant\n%q", got, want)
	}
}

// TestShrinkStart: a file:line column keeps its end (the line number) when cut, and still fits.
func TestShrinkStart(t *testing.T) {
	var b bytes.Buffer
	tbl := New(&b, "session", "verdict", "call").ShrinkStart("call")
	_ = tbl.Append("a1b2c3d4", "no-op: lone call", "a1b2c3d4-0000-4000-8000-000000000001.jsonl:48")
	_ = tbl.Append("f0f0f0f0", "ok", "short.jsonl:7")
	tbl.SetWidth(50)
	if err := tbl.Render(); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if maxLine(got) > 50 || !strings.Contains(got, "| …000001.jsonl:48 |") || !strings.Contains(got, "| short.jsonl:7    |") {
		t.Errorf("want the call cut at its start, within 50 columns:\n%s", got)
	}
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"abc", 3, "abc"},
		{"abcdef", 4, "…def"},
		{"日本語のファイル.jsonl:3", 10, "….jsonl:3"}, // a wide rune that would overflow is left out: 9 cells
		{"line1-long\nok", 5, "…long\nok"},
	} {
		if got := truncateStart(c.in, c.width); got != c.want || cellWidth(got) > c.width {
			t.Errorf("truncateStart(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}

// TestRowsStayApart: when hiding a column or cutting a cell would show two different rows as the same
// row, the table goes vertical instead (tune watch's moved tasks with one title, told apart only by the
// meta time, read as 14 identical rows at 60 columns).
func TestRowsStayApart(t *testing.T) {
	render := func(width int) string {
		var b bytes.Buffer
		tbl := New(&b, "Task", "Meta time", "Levels").Shrink("Task").Optional("Meta time")
		tbl.SetWidth(width)
		for _, ts := range []string{"2026-11-20T10:00:00Z", "2026-11-20T11:00:00Z"} {
			if err := tbl.Append("contract patch for the checkout flow", ts, "L1 → L2"); err != nil {
				t.Fatal(err)
			}
		}
		if err := tbl.Render(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if got := render(90); !strings.Contains(got, "| 2026-11-20T11:00:00Z |") {
		t.Errorf("90 columns: want the whole table:\n%s", got)
	}
	got := render(40)
	if !strings.HasPrefix(got, "-[ 1 ]") || !strings.Contains(got, "2026-11-20T10:00:00Z") || !strings.Contains(got, "2026-11-20T11:00:00Z") {
		t.Errorf("40 columns: want the vertical layout telling the rows apart:\n%s", got)
	}
	// Rows that differ in a visible column may still lose the optional one.
	var b bytes.Buffer
	tbl := New(&b, "Task", "Meta time", "Levels").Shrink("Task").Optional("Meta time")
	tbl.SetWidth(40)
	_ = tbl.Append("fix a", "2026-11-20T10:00:00Z", "L1 → L2")
	_ = tbl.Append("fix b", "2026-11-20T11:00:00Z", "L1 → L2")
	if err := tbl.Render(); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); !strings.Contains(got, "hidden: Meta time") {
		t.Errorf("40 columns, rows told apart by their task: want the meta time hidden:\n%s", got)
	}
}

// A cell is one line of its row: a model name or a title holding a newline and a fake row, or a
// carriage return, is shown escaped in every style, so the table has exactly its rows.
func TestCellsAreOneLine(t *testing.T) {
	for _, style := range []Style{ASCII, Grid, Markdown} {
		var b bytes.Buffer
		tbl := NewStyled(&b, style, Columns("Model", "Requests")...)
		_ = tbl.Append("opus\n| claude-haiku-4-5 | 1 |", "1")
		_ = tbl.Append("haiku\rOVER", "2")
		if err := tbl.Render(); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if strings.Contains(out, "\r") || !strings.Contains(out, `opus\n| claude-haiku-4-5 | 1 |`) || !strings.Contains(out, `haiku\rOVER`) && !strings.Contains(out, `haiku\x0dOVER`) {
			t.Errorf("style %v: a cell's newline or carriage return reached the output:\n%s", style, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimLeft(l, " |"), "claude-haiku-4-5") {
				t.Errorf("style %v: a forged row:\n%s", style, out)
			}
		}
	}
}
