package app

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/weights"
)

// Diff compares two weights refs (a version, "active", or a proposal file or id) of the store in
// weightsDir: every changed value with the evidence behind it (the proposal's step that moved it, or
// the log entry that wrote the version).
func Diff(weightsDir, a, b string) (*DiffResult, error) {
	ra, err := ResolveWeightsRef(weightsDir, a)
	if err != nil {
		return nil, err
	}
	rb, err := ResolveWeightsRef(weightsDir, b)
	if err != nil {
		return nil, err
	}
	return buildDiff(ra, rb), nil
}

// WeightsRef is a resolved A or B of tune diff (or the ref of tune weights show): a stored version or a proposal's candidate, with its provenance.
type WeightsRef struct {
	Label    string // "v0002", or the proposal id
	Weights  weights.Weights
	Version  int // 0 for a proposal
	Active   bool
	Proposal *store.Proposal // the proposal behind it, when known
	Entry    *store.LogEntry // the log entry that wrote the version, when there is one
}

// ResolveWeightsRef reads "active", a version (v0002, 2) or a proposal (file or id).
func ResolveWeightsRef(weightsDir, ref string) (*WeightsRef, error) {
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
		return &WeightsRef{Label: p.ID, Weights: p.Candidate, Proposal: p}, nil
	}
	w, err := s.Version(v)
	if err != nil {
		return nil, err
	}
	r := &WeightsRef{Label: weights.VersionName(v), Weights: w, Version: v, Active: v == active}
	entries, err := s.Entries()
	if err != nil {
		return nil, err
	}
	for i := range entries {
		if e := &entries[i]; (e.Action == store.ActionApply || e.Action == store.ActionRollback) && e.Result == v {
			r.Entry = e
		}
	}
	if path, ok := proposalOf(weightsDir, r.Entry); ok {
		p, err := store.ReadProposal(path)
		switch {
		case err == nil:
			r.Proposal = p
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
	}
	return r, nil
}

// DiffRow is one changed value with its evidence.
type DiffRow struct {
	Kind            weights.ChangeKind `json:"kind"`
	Name            string             `json:"name"`
	Old             float64            `json:"old"`
	New             float64            `json:"new"`
	Delta           float64            `json:"delta"`
	Counts          *store.TwoByTwo    `json:"counts,omitempty"`
	Flagged         int                `json:"flagged,omitempty"`
	FisherP         *float64           `json:"fisher_p,omitempty"`
	HolmP           *float64           `json:"holm_p,omitempty"`
	SuiteLossBefore *float64           `json:"suite_loss_before,omitempty"`
	SuiteLossAfter  *float64           `json:"suite_loss_after,omitempty"`
	Confidence      string             `json:"confidence"`
}

// DiffResult is what tune diff reports (and its --json shape).
type DiffResult struct {
	A               string           `json:"a"`
	B               string           `json:"b"`
	Rows            []DiffRow        `json:"rows"`
	Proposal        string           `json:"proposal,omitempty"`
	Decision        weights.Decision `json:"decision,omitempty"`
	Flagged         int              `json:"flagged"`
	SuiteLossBefore *float64         `json:"suite_loss_before,omitempty"`
	SuiteLossAfter  *float64         `json:"suite_loss_after,omitempty"`
	Confidence      string           `json:"confidence"`
	Reason          string           `json:"reason,omitempty"`
	Tasks           []string         `json:"flagged_tasks"`
}

func buildDiff(a, b *WeightsRef) *DiffResult {
	rep := &DiffResult{A: a.Label, B: b.Label, Rows: []DiffRow{}, Confidence: "—", Tasks: []string{}}
	p, e := b.Proposal, b.Entry
	switch {
	case p != nil:
		rep.Proposal, rep.Decision, rep.Flagged, rep.Reason = p.ID, p.Decision, len(p.Evidence), p.Reason
		rep.SuiteLossBefore, rep.SuiteLossAfter = store.Loss(p.SuiteLossBefore), store.Loss(p.SuiteLossAfter)
		if p.Confidence != "" {
			rep.Confidence = p.Confidence
		}
		for _, t := range p.Evidence {
			title, _ := report.TaskTitle(t.Title) // a proposal written before titles were cut carries them whole
			rep.Tasks = append(rep.Tasks, strings.TrimSpace(fmt.Sprintf("%s %s %s (%s) — %s", t.MetaTimestamp, t.Level, title, strings.Join(t.Evidence, ", "), t.Source)))
		}
	case e != nil:
		rep.Proposal, rep.Decision, rep.Flagged, rep.Reason = e.Proposal, e.Decision, len(e.Evidence), e.Reason
		rep.SuiteLossBefore, rep.SuiteLossAfter = e.SuiteLossBefore, e.SuiteLossAfter
		rep.Tasks = append(rep.Tasks, e.Evidence...)
	}
	for _, c := range store.Changes(&a.Weights, &b.Weights) {
		row := DiffRow{Kind: c.Kind, Name: c.Name, Old: c.Old.Float(), New: c.New.Float(), Delta: c.Delta().Float(),
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
		hit := c.Kind == st.Kind && ((c.Kind == weights.ChangeSignal && st.Signal == c.Name) || (c.Kind == weights.ChangeBucket && st.Edge == c.Name))
		if hit && (st.Decision == weights.DecisionAccept || st.Decision == weights.DecisionHalve) {
			found = st
		}
	}
	return found
}

// proposalOf is the file of the proposal entry e names (false: none, or a name that is not a proposal
// file's, which verify reports).
func proposalOf(weightsDir string, e *store.LogEntry) (string, bool) {
	if e == nil || e.Proposal == "" {
		return "", false
	}
	return store.ProposalPath(weightsDir, e.Proposal)
}
