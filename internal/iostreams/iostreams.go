// Package iostreams holds the streams a command reads and writes, with what the command layer needs
// to know about the terminal behind them. Tests replace the streams with buffers.
package iostreams

import (
	"io"
	"os"

	"golang.org/x/term"

	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/textfmt"
)

// IOStreams are the streams a command reads and writes.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// ErrIsTerminal reports whether ErrOut is a terminal (progress bars are drawn only then).
	ErrIsTerminal bool
	// OutIsTerminal reports whether Out is a terminal.
	OutIsTerminal bool
	// TermWidth is the width of the terminal Out writes to (0 when unknown).
	TermWidth func() int
}

// System returns the process's standard streams and what the terminal says about them. Out and ErrOut
// escape control characters (textfmt.TerminalWriter): a task title, a model name or a file name carrying
// an escape sequence is shown, never executed (docs/decisions.md#hostile-files-issue-25).
func System() *IOStreams {
	return &IOStreams{
		In:            os.Stdin,
		Out:           textfmt.TerminalWriter(os.Stdout),
		ErrOut:        textfmt.TerminalWriter(os.Stderr),
		ErrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
		OutIsTerminal: term.IsTerminal(int(os.Stdout.Fd())),
		TermWidth: func() int {
			w, _, err := term.GetSize(int(os.Stdout.Fd()))
			if err != nil {
				return 0
			}
			return w
		},
	}
}

// FitTables makes every table printed on Out fit the width termtable.Resolve decides from --wide,
// $COLUMNS and the terminal (docs/decisions.md#table-width).
func (s *IOStreams) FitTables(wide bool, columns string) {
	s.Out = termtable.WithWidth(s.Out, termtable.Resolve(wide, columns, s.OutIsTerminal, s.TermWidth))
}
