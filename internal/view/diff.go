package view

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/textfmt"
)

var diffHeader = []string{"Signal", "Old → New", "Δ", "Evidence (a/b/c/d)", "Fisher p (raw / Holm)", "Suite loss before → after", "Confidence"}

func diffCells(r app.DiffRow) []string {
	name := r.Name
	if r.Kind != "signal" {
		name = string(r.Kind) + " " + r.Name
	}
	evidence := "—"
	switch {
	case r.Counts != nil:
		evidence = fmt.Sprintf("%d/%d/%d/%d", r.Counts.A, r.Counts.B, r.Counts.C, r.Counts.D)
	case r.Flagged > 0:
		evidence = textfmt.Plural(r.Flagged, "flagged task")
	}
	fisher := "—"
	if r.FisherP != nil || r.HolmP != nil {
		fisher = formatP(r.FisherP) + " / " + formatP(r.HolmP)
	}
	return []string{name, num(r.Old) + " → " + num(r.New), signedNum(r.Delta), evidence, fisher, lossPair(r.SuiteLossBefore, r.SuiteLossAfter), r.Confidence}
}

func signedNum(v float64) string {
	if v >= 0 {
		return "+" + num(v)
	}
	return num(v)
}

func formatP(p *float64) string {
	if p == nil {
		return "—"
	}
	return strconv.FormatFloat(*p, 'g', 3, 64)
}

// diffTable is an ASCII table for the terminal (fitted to its width) or a Markdown one for PRs.
func diffTable(w io.Writer, markdown bool, rows []app.DiffRow) error {
	style := termtable.ASCII
	if markdown {
		style = termtable.Markdown
	}
	t := termtable.NewStyled(w, style, termtable.Columns(diffHeader...)...).
		Key("Signal", "Old → New", "Δ").Shrink("Evidence (a/b/c/d)", "Suite loss before → after").
		Optional("Fisher p (raw / Holm)", "Evidence (a/b/c/d)", "Suite loss before → after", "Confidence")
	for _, row := range rows {
		if err := t.Append(diffCells(row)...); err != nil {
			return err
		}
	}
	return t.Render()
}

func diffSummary(rep *app.DiffResult) string {
	if rep.Proposal == "" && rep.Decision == "" {
		return ""
	}
	var parts []string
	if rep.Proposal != "" {
		parts = append(parts, fmt.Sprintf("proposal %s (%s)", rep.Proposal, rep.Decision))
	}
	parts = append(parts, textfmt.Plural(rep.Flagged, "flagged task"))
	if l := lossPair(rep.SuiteLossBefore, rep.SuiteLossAfter); l != "—" {
		parts = append(parts, "suite loss "+l)
	}
	parts = append(parts, "confidence "+rep.Confidence)
	return strings.Join(parts, "; ")
}

// DiffText prints tune diff for the terminal.
func DiffText(w io.Writer, rep *app.DiffResult) error {
	termtable.Fprintf(w, "weights %s → %s\n", rep.A, rep.B)
	if len(rep.Rows) == 0 {
		termtable.Fprintf(w, "no differences: %s and %s hold the same weights, bucket edges and costs\n", rep.A, rep.B)
		return nil
	}
	if err := diffTable(w, false, rep.Rows); err != nil {
		return err
	}
	if s := diffSummary(rep); s != "" {
		termtable.Fprintln(w, s)
	}
	if rep.Reason != "" {
		termtable.Fprintf(w, "reason: %s\n", rep.Reason)
	}
	for _, t := range rep.Tasks {
		termtable.Fprintf(w, "  flagged: %s\n", t)
	}
	return nil
}

// DiffMarkdown prints tune diff as a pull-request body.
func DiffMarkdown(w io.Writer, rep *app.DiffResult) error {
	fmt.Fprintf(w, "### Weights %s → %s\n\n", rep.A, rep.B)
	if len(rep.Rows) == 0 {
		fmt.Fprintf(w, "No differences: %s and %s hold the same weights, bucket edges and costs.\n", rep.A, rep.B)
		return nil
	}
	if err := diffTable(w, true, rep.Rows); err != nil {
		return err
	}
	if s := diffSummary(rep); s != "" {
		fmt.Fprintf(w, "\n**Evidence:** %s.\n", report.EscapeBody(s))
	}
	if rep.Reason != "" {
		fmt.Fprintf(w, "\n**Reason:** %s\n", report.EscapeBody(rep.Reason))
	}
	if len(rep.Tasks) > 0 {
		fmt.Fprintf(w, "\n<details><summary>%s</summary>\n\n", textfmt.Plural(len(rep.Tasks), "flagged task"))
		for _, t := range rep.Tasks {
			fmt.Fprintf(w, "- %s\n", report.ListItem(t))
		}
		fmt.Fprintln(w, "\n</details>")
	}
	return nil
}
