package termtable

import (
	"fmt"
	"io"
	"strings"
)

// Fprintf is fmt.Fprintf for the prose around tables: when w carries a width (WidthOf), every line
// longer than it is wrapped at spaces, continuation lines indented by two. A word longer than a line
// is cut. Machine formats (JSON, CSV, Markdown) are written with fmt directly and never wrapped.
func Fprintf(w io.Writer, format string, a ...any) (int, error) {
	return io.WriteString(w, Fill(fmt.Sprintf(format, a...), WidthOf(w)))
}

// Fprintln is fmt.Fprintln with Fprintf's wrapping.
func Fprintln(w io.Writer, a ...any) (int, error) {
	return io.WriteString(w, Fill(fmt.Sprintln(a...), WidthOf(w)))
}

// Fill wraps each line of s that is wider than width (0: unlimited) at spaces; continuation lines are
// indented by two spaces, or by the line's own indentation plus two.
func Fill(s string, width int) string {
	if width <= 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	var b strings.Builder
	for i, line := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if cellWidth(line) <= width {
			b.WriteString(line)
			continue
		}
		body := strings.TrimLeft(line, " ")
		indent := line[:len(line)-len(body)]
		cont := indent + "  "
		first := width - len(indent)
		for k, part := range wrapIndented(body, first, width-len(cont)) {
			if k == 0 {
				b.WriteString(indent + part)
			} else {
				b.WriteString("\n" + cont + part)
			}
		}
	}
	return b.String()
}

// wrapIndented wraps s with a first line of width first and later lines of width rest.
func wrapIndented(s string, first, rest int) []string {
	return wrapWidths(s, max(first, 8), max(rest, 8))
}
