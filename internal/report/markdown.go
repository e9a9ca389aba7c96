package report

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/textfmt"
)

// Align is a column's alignment in a Markdown table.
type Align int

const (
	Left  Align = iota // text
	Right              // numbers: the separator becomes ----: so GitHub right-aligns them
)

// Column is one column of a Markdown table: its header, printed as given, and its alignment.
type Column struct {
	Header string
	Align  Align
}

// Text and Num build columns tersely.
func Text(header string) Column { return Column{header, Left} }
func Num(header string) Column  { return Column{header, Right} }

// WriteTable writes a GitHub Markdown table through tablewriter's Markdown renderer. Headers are printed as
// given (tablewriter upper-cases them by default), numeric columns are right-aligned, and cells are escaped
// so that a '|' or a newline in a value cannot break the table. Cells are used as given otherwise; pass
// untrusted text through Redact and Escape first.
func WriteTable(w io.Writer, cols []Column, rows [][]string) error {
	tc := make([]termtable.Column, len(cols))
	for i, c := range cols {
		tc[i] = termtable.Column{Header: cellText(c.Header)}
		if c.Align == Right {
			tc[i].Align = termtable.Right
		}
	}
	// A wrapped cell would become a second table row in Markdown; termtable never wraps Markdown.
	t := termtable.NewStyled(w, termtable.Markdown, tc...)
	for i, r := range rows {
		if len(r) != len(cols) {
			return fmt.Errorf("table row %d has %d cells, want %d", i+1, len(r), len(cols))
		}
		cells := make([]string, len(r))
		for j, c := range r {
			cells[j] = cellText(c)
		}
		if err := t.Append(cells...); err != nil {
			return err
		}
	}
	return t.Render()
}

// section writes a "## title" heading and, when the section has no items, the sentence that says so;
// it reports whether there is anything to write under the heading.
func section(w io.Writer, title string, items int, empty string) bool {
	fmt.Fprintf(w, "## %s\n\n", title)
	if items == 0 {
		fmt.Fprintf(w, "_%s_\n\n", empty)
		return false
	}
	return true
}

// tableBlock is a table followed by the blank line that ends a Markdown block.
func tableBlock(w io.Writer, cols []Column, rows [][]string) error {
	if err := WriteTable(w, cols, rows); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}

// cellReplacer is cellText's, built once: a Replacer per cell built its lookup table anew for every
// cell of every report (184 MB of a hostile night's 2 GB of allocations).
var cellReplacer = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "|", `\|`)

// Cell is Escape of a value written into a table row by hand (not through WriteTable): its pipes are
// escaped too, or a title with "|" split the watch's table of moved tasks (the second re-review).
func Cell(s string) string { return cellText(Escape(s)) }

// cellText keeps a value on one table line: newlines become spaces, pipes are escaped, and an empty cell
// becomes an en dash so that a blank is never mistaken for a rendering error.
func cellText(s string) string {
	s = cellReplacer.Replace(s)
	if strings.TrimSpace(s) == "" {
		return "–"
	}
	return s
}

// Escape makes untrusted text (a task title, a label) render literally in Markdown while staying readable
// in a raw diff: it escapes only what would start markup — backslash, code spans, '*' emphasis, '_'
// emphasis at a word edge, '~~' strikethrough, an HTML tag, a link target "](", an entity "&#…;" or
// "&name;" (a numeric one made a raw U+202E from escaped text: the review of the reports), '$' math —
// and flattens newlines.
func Escape(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		prev, next := ' ', ' '
		if i > 0 {
			prev = rs[i-1]
		}
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		switch {
		case r == '\\' || r == '`' || r == '*':
			b.WriteByte('\\')
		case r == '_' && !(isWordRune(prev) && isWordRune(next)):
			b.WriteByte('\\')
		case r == '~':
			b.WriteByte('\\') // GFM strikes through between single tildes too
		case r == '<' && (unicode.IsLetter(next) || next == '/' || next == '!' || next == '?'):
			b.WriteByte('\\')
		case r == '(' && prev == ']':
			b.WriteByte('\\')
		case r == '&' && (next == '#' || unicode.IsLetter(next)):
			b.WriteByte('\\')
		case r == '$':
			b.WriteByte('\\')
		case r == '\n' || r == '\r' || r == '\t':
			r = ' '
		case invisible(r):
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// EscapeBody is Escape for a pull request's body, which a forge reads for more than Markdown: "@name"
// notifies a person or a team, "#12", "owner/repo#12" and "GH-12" link an issue, and a closing keyword
// ("fixes", "closes", "resolves" and their forms) before one of them or an issue's URL closes it when
// the request is merged. Each gets a zero-width space (&#8203;, as dependency bots write it): after the
// sign of a mention or a reference, and inside a closing keyword before a URL; '|' is escaped, as the body holds
// tables. A mention counts after any character but an ASCII letter or digit, as GitHub reads it (the
// second re-review: "é@alice" still notified).
func EscapeBody(s string) string {
	var b strings.Builder
	rs := []rune(Escape(s))
	for i, r := range rs {
		b.WriteRune(r)
		prev := ' '
		if i > 0 {
			prev = rs[i-1]
		}
		if i+1 >= len(rs) {
			continue
		}
		next := rs[i+1]
		switch {
		case r == '@' && !isASCIIWord(prev) && isWordRune(next),
			r == '#' && unicode.IsDigit(next),
			r == '-' && unicode.IsDigit(next) && i >= 2 && strings.EqualFold(string(rs[i-2:i]), "GH"):
			b.WriteString("&#8203;")
		}
	}
	s = closingKeyword.ReplaceAllStringFunc(b.String(), func(k string) string { return k[:1] + "&#8203;" + k[1:] })
	return strings.ReplaceAll(s, "|", `\|`)
}

// ListItem is EscapeBody of the text of a list item ("- " + it). At an item's start "[x] " is a task
// checkbox (GitHub counts it in the request's tasks), "#" a heading, ">" a quote, "-" or "+" a list,
// "1." a numbered one (the second re-review): a backslash keeps the character as text.
func ListItem(s string) string {
	s = EscapeBody(s)
	if s != "" && strings.ContainsRune("[#>-+", rune(s[0])) || numberedItem.MatchString(s) {
		s = `\` + s
	}
	return s
}

// numberedItem is the start of a numbered list item.
var numberedItem = regexp.MustCompile(`^[0-9]{1,9}[.)]( |$)`)

// closingKeyword matches GitHub's issue-closing keywords before an issue's URL. Before "#12",
// "owner/repo#12" or "GH-12" they close nothing once the reference itself is broken, so "fix flaky
// export" reads as written.
var closingKeyword = regexp.MustCompile(`(?i)\b(close[sd]?|fix(e[sd])?|resolve[sd]?):?\s+https?://`)

func isASCIIWord(r rune) bool {
	return r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_')
}

// invisible reports the characters that render as nothing and could split or hide a word from a
// reviewer (the review of the reports): zero-width space, word joiner and the invisible operators, the
// byte-order mark, and the tag characters. The joiners U+200C and U+200D stay: emoji sequences need them.
func invisible(r rune) bool {
	switch r {
	case 0x00ad, 0x034f, 0x115f, 0x1160, 0x17b4, 0x17b5, 0x180e, 0x200b, 0x3164, 0xfeff, 0xffa0:
		return true // soft hyphen, grapheme joiner, the Hangul and Khmer fillers, Mongolian separator
	}
	return (r >= 0x2060 && r <= 0x2064) || (r >= 0xe0000 && r <= 0xe007f)
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// --- number formatting, fixed so that goldens do not depend on %v heuristics.

// fmtLoss prints a loss with up to three decimals and no trailing zeros (0.5, 1.333, 2).
func fmtLoss(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		s = "0"
	}
	return s
}

// fmtDelta prints a signed change: +0.5, −1 (with a minus sign that survives Markdown), ±0 for none.
func fmtDelta(v float64) string {
	switch {
	case v > 0:
		return "+" + fmtLoss(v)
	case v < 0:
		return "−" + fmtLoss(-v)
	}
	return "±0"
}

// fmtP prints a p-value: <0.001, else three decimals.
func fmtP(p float64) string {
	switch {
	case math.IsNaN(p):
		return "–"
	case p < 0.001:
		return "<0.001"
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

// fmtFloat prints a statistic with two decimals.
func fmtFloat(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	if s == "-0.00" {
		s = "0.00"
	}
	return s
}

// fmtPct prints a share in [0,1] as a percentage with one decimal.
func fmtPct(share float64) string {
	if math.IsNaN(share) {
		return "–"
	}
	return strconv.FormatFloat(share*100, 'f', 1, 64) + " %"
}

// fmtInt prints an integer with thin thousands separators (1,234,567) for token counts.
func fmtInt(n int64) string {
	if n < 0 {
		return "−" + textfmt.Thousands(n)[1:] // a typographic minus in the reports
	}
	return textfmt.Thousands(n)
}

// fmtNum prints a measured quantity (a median, a CI bound) compactly: integers as integers, others with up
// to two decimals, both with thousands separators.
func fmtNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	if math.Abs(v) >= 1e15 {
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	whole, frac := math.Modf(math.Abs(v))
	s := strconv.FormatFloat(frac, 'f', 2, 64) // "0.25", or "1.00" when the fraction rounds up
	if s[0] == '1' {
		whole, s = whole+1, "0.00"
	}
	out := fmtInt(int64(whole)) + strings.TrimRight(strings.TrimRight(s[1:], "0"), ".")
	if v < 0 && out != "0" {
		return "−" + out
	}
	return out
}
