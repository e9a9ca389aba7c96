// Package view is the terminal output layer: it renders the result of each use case (internal/app and
// the domain packages) as the text tables and lines the commands print, and writes the --json
// documents. It decides nothing: the values it prints are computed below it, and internal/cli only
// chooses between the text and the JSON form (docs/decisions.md#layers).
package view

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/cmdutil"
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/project"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/textfmt"
	"github.com/ldd-tools/tune/internal/traceparse"
)

// WriteJSON prints v as indented JSON with "<" and ">" left readable (signal "components>=3"): the
// one JSON writer of every --json output.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Path shortens a path under the working directory for the text output (JSON keeps it as is).
func Path(p string) string { return project.Shown(p) }

// Tails maps the logs whose line numbers count from a tail read (the part before it was too long to
// count, see traceparse.AbsoluteLines) to the byte offset the read started at.
type Tails map[string]int64

// NewTails indexes the tail reads of a result.
func NewTails(tails []traceparse.Tail) Tails {
	t := Tails{}
	for _, tail := range tails {
		t[tail.File] = tail.Offset
	}
	return t
}

// At locates a line of a log: "log:line", or "log: line N of the tail read from byte B" when the line
// counts from a tail.
func (t Tails) At(source string, line int) string {
	if off, tailed := t[source]; tailed && line > 0 {
		return fmt.Sprintf("%s: line %d of the tail read from byte %d", source, line, off)
	}
	return evolve.Warning{Source: source, Line: line}.Where()
}

// Warn prints one warning on stderr as "tune: warning: WHERE: REASON" (without WHERE when it is
// empty): the one warning line of every command.
func Warn(w io.Writer, where, reason string) {
	termtable.Fprintf(w, "%s", cmdutil.WarnLine(where, reason))
}

// Warnings prints the warnings of a detection, located through the tail reads.
func Warnings(w io.Writer, warns []evolve.Warning, tails Tails) {
	for _, x := range warns {
		Warn(w, tails.At(x.Source, x.Line), x.Reason)
	}
}

// Notes prints "tune: note: …" lines on stderr.
func Notes(w io.Writer, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(w, "tune: note: %s\n", n)
	}
}

// ReportFiles prints the files a report command wrote, one a line.
func ReportFiles(w io.Writer, res app.ReportResult) error {
	for _, p := range res.Files {
		if _, err := fmt.Fprintln(w, p); err != nil {
			return err
		}
	}
	return nil
}

var dash = textfmt.Dash

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func lossPair(before, after *float64) string {
	if before == nil || after == nil {
		return "—"
	}
	return fmt.Sprintf("%.3f → %.3f", *before, *after)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Print writes v to w as JSON when asJSON, else as text with render: the two forms of every result.
func Print[T any](w io.Writer, asJSON bool, v T, render func(io.Writer, T) error) error {
	if asJSON {
		return WriteJSON(w, v)
	}
	return render(w, v)
}
