package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/weights"
)

type diffOptions struct {
	IO         *IOStreams
	WeightsDir string
	A, B       string
	Format     string
}

// NewCmdDiff builds `tune diff`.
func NewCmdDiff(f *Factory) *cobra.Command {
	return newCmdDiff(f, nil)
}

func newCmdDiff(f *Factory, runF func(*diffOptions) error) *cobra.Command {
	opts := &diffOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two weights versions as a pull-request table",
		Long: `Compare two weights versions (or a version and a proposal) and print what changed: one row per
signal weight, bucket edge or cost that differs, with old → new, Δ, the evidence behind it and the
confidence — the table to paste into the pull request that ships a weights change.

A and B are each a version (v0002, 2), "active", or a proposal file or id (p-…). The evidence
columns come from B's proposal: the file itself, or, for a version written by tune apply, the
proposal it names when it is still in weights/proposals/ (else the counts in the log entry):
  Evidence (a/b/c/d)   the signal's screen table: fired & flagged / fired & not flagged /
                       not fired & flagged / neither (or "n flagged" when only the count is known)
  Fisher p             one-sided Fisher p, raw / Holm-adjusted
  Suite loss           replay loss before → after the change
  Confidence           strong | provisional | underpowered; "—" when unknown`,
		Example: `  tune diff v0001 active
  tune diff active weights/proposals/p-98cce9bd98d5.json --format markdown > pr-body.md
  tune diff 1 2 --format json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.WeightsDir = f.WeightsDir
			opts.A, opts.B = args[0], args[1]
			switch opts.Format {
			case "text", "markdown", "json":
			default:
				return FlagErrorf("--format %q: want text, markdown or json", opts.Format)
			}
			if runF != nil {
				return runF(opts)
			}
			return diffRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "text", "output `format`: text, markdown or json")
	return cmd
}

// weightsRef is a resolved A or B: a stored version or a proposal's candidate, with its provenance.
type weightsRef struct {
	Label    string // "v0002", or the proposal id
	Weights  weights.Weights
	Version  int // 0 for a proposal
	Active   bool
	Proposal *store.Proposal // the proposal behind it, when known
	Entry    *store.LogEntry // the log entry that wrote the version, when there is one
}

// resolveWeightsRef reads "active", a version (v0002, 2) or a proposal (file or id).
func resolveWeightsRef(weightsDir, ref string) (*weightsRef, error) {
	s, err := store.Open(weightsDir, nil)
	if err != nil {
		return nil, err
	}
	active, err := s.ActiveVersion()
	if err != nil {
		return nil, err
	}
	v := 0
	if ref == "active" {
		v = active
	} else if n, err := weights.ParseVersionName(ref); err == nil {
		v = n
	}
	if v == 0 {
		p, err := store.ResolveProposal(weightsDir, ref)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a version (v0002, 2, active) nor a readable proposal: %w", ref, err)
		}
		return &weightsRef{Label: p.ID, Weights: p.Candidate, Proposal: p}, nil
	}
	w, err := s.Version(v)
	if err != nil {
		return nil, err
	}
	r := &weightsRef{Label: weights.VersionName(v), Weights: w, Version: v, Active: v == active}
	entries, err := s.Entries()
	if err != nil {
		return nil, err
	}
	for i := range entries {
		if e := &entries[i]; (e.Action == store.ActionApply || e.Action == store.ActionRollback) && e.Result == v {
			r.Entry = e
		}
	}
	if r.Entry != nil && r.Entry.Proposal != "" {
		p, err := store.ReadProposal(filepath.Join(weightsDir, store.ProposalsDir, r.Entry.Proposal+".json"))
		switch {
		case err == nil:
			r.Proposal = p
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
	}
	return r, nil
}

// diffRow is one changed value with its evidence.
type diffRow struct {
	Kind            string          `json:"kind"` // signal | bucket | cost
	Name            string          `json:"name"`
	Old             float64         `json:"old"`
	New             float64         `json:"new"`
	Delta           float64         `json:"delta"`
	Counts          *store.TwoByTwo `json:"counts,omitempty"`
	Flagged         int             `json:"flagged,omitempty"`
	FisherP         *float64        `json:"fisher_p,omitempty"`
	HolmP           *float64        `json:"holm_p,omitempty"`
	SuiteLossBefore *float64        `json:"suite_loss_before,omitempty"`
	SuiteLossAfter  *float64        `json:"suite_loss_after,omitempty"`
	Confidence      string          `json:"confidence"`
}

type diffReport struct {
	A               string    `json:"a"`
	B               string    `json:"b"`
	Rows            []diffRow `json:"rows"`
	Proposal        string    `json:"proposal,omitempty"`
	Decision        string    `json:"decision,omitempty"`
	Flagged         int       `json:"flagged"`
	SuiteLossBefore *float64  `json:"suite_loss_before,omitempty"`
	SuiteLossAfter  *float64  `json:"suite_loss_after,omitempty"`
	Confidence      string    `json:"confidence"`
	Reason          string    `json:"reason,omitempty"`
	Tasks           []string  `json:"flagged_tasks"`
}

func diffRun(opts *diffOptions) error {
	a, err := resolveWeightsRef(opts.WeightsDir, opts.A)
	if err != nil {
		return err
	}
	b, err := resolveWeightsRef(opts.WeightsDir, opts.B)
	if err != nil {
		return err
	}
	rep := buildDiff(a, b)
	switch opts.Format {
	case "json":
		return storeWriteJSON(opts.IO.Out, rep)
	case "markdown":
		return printDiffMarkdown(opts.IO.Out, rep)
	}
	return printDiffText(opts.IO.Out, rep)
}

func buildDiff(a, b *weightsRef) *diffReport {
	rep := &diffReport{A: a.Label, B: b.Label, Rows: []diffRow{}, Confidence: "—", Tasks: []string{}}
	p, e := b.Proposal, b.Entry
	switch {
	case p != nil:
		rep.Proposal, rep.Decision, rep.Flagged, rep.Reason = p.ID, p.Decision, len(p.Evidence), p.Reason
		rep.SuiteLossBefore, rep.SuiteLossAfter = store.Loss(p.SuiteLossBefore), store.Loss(p.SuiteLossAfter)
		if p.Confidence != "" {
			rep.Confidence = p.Confidence
		}
		for _, t := range p.Evidence {
			rep.Tasks = append(rep.Tasks, strings.TrimSpace(fmt.Sprintf("%s %s %s (%s) — %s", t.MetaTimestamp, t.Level, t.Title, strings.Join(t.Evidence, ", "), t.Source)))
		}
	case e != nil:
		rep.Proposal, rep.Decision, rep.Flagged, rep.Reason = e.Proposal, e.Decision, len(e.Evidence), e.Reason
		rep.SuiteLossBefore, rep.SuiteLossAfter = e.SuiteLossBefore, e.SuiteLossAfter
		rep.Tasks = append(rep.Tasks, e.Evidence...)
	}
	for _, c := range store.Changes(&a.Weights, &b.Weights) {
		row := diffRow{Kind: c.Kind, Name: c.Name, Old: c.Old.Float(), New: c.New.Float(), Delta: c.Delta().Float(),
			Flagged: rep.Flagged, SuiteLossBefore: rep.SuiteLossBefore, SuiteLossAfter: rep.SuiteLossAfter, Confidence: rep.Confidence}
		if st := matchingStep(p, c); st != nil {
			row.Counts, row.FisherP, row.HolmP = st.Counts, st.FisherP, st.HolmP
			row.SuiteLossBefore, row.SuiteLossAfter = store.Loss(st.SuiteLossBefore), store.Loss(st.SuiteLossAfter)
			if st.Confidence != "" {
				row.Confidence = st.Confidence
			}
		}
		rep.Rows = append(rep.Rows, row)
	}
	return rep
}

// matchingStep is the last accepted (or halved) step of p that moved the value c.
func matchingStep(p *store.Proposal, c store.Change) *store.ProposalStep {
	if p == nil {
		return nil
	}
	var found *store.ProposalStep
	for i := range p.Steps {
		st := &p.Steps[i]
		hit := (c.Kind == "signal" && st.Kind == "signal" && st.Signal == c.Name) || (c.Kind == "bucket" && st.Kind == "bucket" && st.Edge == c.Name)
		if hit && (st.Decision == store.DecisionAccept || st.Decision == store.DecisionHalve) {
			found = st
		}
	}
	return found
}

var diffHeader = []string{"Signal", "Old → New", "Δ", "Evidence (a/b/c/d)", "Fisher p (raw / Holm)", "Suite loss before → after", "Confidence"}

func (r diffRow) cells() []string {
	name := r.Name
	if r.Kind != "signal" {
		name = r.Kind + " " + r.Name
	}
	evidence := "—"
	switch {
	case r.Counts != nil:
		evidence = fmt.Sprintf("%d/%d/%d/%d", r.Counts.A, r.Counts.B, r.Counts.C, r.Counts.D)
	case r.Flagged > 0:
		evidence = plural(r.Flagged, "flagged task")
	}
	fisher := "—"
	if r.FisherP != nil || r.HolmP != nil {
		fisher = formatP(r.FisherP) + " / " + formatP(r.HolmP)
	}
	return []string{name, num(r.Old) + " → " + num(r.New), signedNum(r.Delta), evidence, fisher, lossPair(r.SuiteLossBefore, r.SuiteLossAfter), r.Confidence}
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

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

func lossPair(before, after *float64) string {
	if before == nil || after == nil {
		return "—"
	}
	return fmt.Sprintf("%.3f → %.3f", *before, *after)
}

// diffTable is an ASCII table for the terminal (fitted to its width) or a Markdown one for PRs.
func diffTable(w io.Writer, markdown bool, rows []diffRow) error {
	style := termtable.ASCII
	if markdown {
		style = termtable.Markdown
	}
	t := termtable.NewStyled(w, style, termtable.Columns(diffHeader...)...).
		Shrink("Signal", "Evidence (a/b/c/d)", "Suite loss before → after").
		Optional("Fisher p (raw / Holm)", "Evidence (a/b/c/d)", "Suite loss before → after", "Confidence")
	for _, row := range rows {
		if err := t.Append(row.cells()...); err != nil {
			return err
		}
	}
	return t.Render()
}

func (rep *diffReport) summary() string {
	if rep.Proposal == "" && rep.Decision == "" {
		return ""
	}
	var parts []string
	if rep.Proposal != "" {
		parts = append(parts, fmt.Sprintf("proposal %s (%s)", rep.Proposal, rep.Decision))
	}
	parts = append(parts, plural(rep.Flagged, "flagged task"))
	if l := lossPair(rep.SuiteLossBefore, rep.SuiteLossAfter); l != "—" {
		parts = append(parts, "suite loss "+l)
	}
	parts = append(parts, "confidence "+rep.Confidence)
	return strings.Join(parts, "; ")
}

func printDiffText(w io.Writer, rep *diffReport) error {
	termtable.Fprintf(w, "weights %s → %s\n", rep.A, rep.B)
	if len(rep.Rows) == 0 {
		termtable.Fprintf(w, "no differences: %s and %s hold the same weights, bucket edges and costs\n", rep.A, rep.B)
		return nil
	}
	if err := diffTable(w, false, rep.Rows); err != nil {
		return err
	}
	if s := rep.summary(); s != "" {
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

// markdownText keeps free text (task titles) from being read as HTML or table syntax in a PR body.
var markdownText = strings.NewReplacer("<", "&lt;", ">", "&gt;", "|", `\|`)

func printDiffMarkdown(w io.Writer, rep *diffReport) error {
	fmt.Fprintf(w, "### Weights %s → %s\n\n", rep.A, rep.B)
	if len(rep.Rows) == 0 {
		fmt.Fprintf(w, "No differences: %s and %s hold the same weights, bucket edges and costs.\n", rep.A, rep.B)
		return nil
	}
	if err := diffTable(w, true, rep.Rows); err != nil {
		return err
	}
	if s := rep.summary(); s != "" {
		fmt.Fprintf(w, "\n**Evidence:** %s.\n", markdownText.Replace(s))
	}
	if rep.Reason != "" {
		fmt.Fprintf(w, "\n**Reason:** %s\n", markdownText.Replace(rep.Reason))
	}
	if len(rep.Tasks) > 0 {
		fmt.Fprintf(w, "\n<details><summary>%s</summary>\n\n", plural(len(rep.Tasks), "flagged task"))
		for _, t := range rep.Tasks {
			fmt.Fprintf(w, "- %s\n", markdownText.Replace(t))
		}
		fmt.Fprintln(w, "\n</details>")
	}
	return nil
}
