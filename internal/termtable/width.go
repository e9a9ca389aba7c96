package termtable

import (
	"io"
	"strconv"
	"strings"
)

// Sized is a writer that carries the width of the terminal it writes to, so that every table printed
// through it fits without each printing function taking a width parameter.
type Sized struct {
	io.Writer
	Width int
}

// Write writes to the underlying writer.
func (s *Sized) Write(p []byte) (int, error) { return s.Writer.Write(p) }

// TableWidth is the width tables written to s must fit (0: unlimited).
func (s *Sized) TableWidth() int { return s.Width }

// WithWidth wraps w so that tables written to it fit width columns (0: unlimited). A Sized w is
// unwrapped first, so wrapping twice never nests.
func WithWidth(w io.Writer, width int) io.Writer {
	if s, ok := w.(*Sized); ok {
		w = s.Writer
	}
	if width <= 0 {
		return w
	}
	return &Sized{Writer: w, Width: width}
}

// WidthOf is the width tables written to w must fit: the width a Sized writer carries, 0 (unlimited)
// for any other writer.
func WidthOf(w io.Writer) int {
	if s, ok := w.(interface{ TableWidth() int }); ok {
		return s.TableWidth()
	}
	return 0
}

// MinWidth is the narrowest width honoured; a smaller $COLUMNS is read as this.
const MinWidth = 20

// Resolve decides the table width of a command's output (docs/decisions.md#table-width):
//   - wide (--wide) is unlimited;
//   - $COLUMNS, when set to a number, is the width asked for, piped or not;
//   - otherwise a terminal's own width (termWidth, 0 when unknown means 80);
//   - otherwise (piped, redirected) unlimited, so that pipes keep every cell whole.
func Resolve(wide bool, columns string, isTerminal bool, termWidth func() int) int {
	if wide {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(columns)); err == nil && n > 0 {
		return max(n, MinWidth)
	}
	if !isTerminal {
		return 0
	}
	if termWidth != nil {
		if n := termWidth(); n > 0 {
			return max(n, MinWidth)
		}
	}
	return 80
}
