package app

import (
	"errors"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/weights"
)

// ApplyResult is what tune apply reports (and its --json shape).
type ApplyResult struct {
	Applied   bool     `json:"applied"`
	Proposal  string   `json:"proposal,omitempty"`
	Version   string   `json:"version,omitempty"`
	Parent    string   `json:"parent,omitempty"`
	Change    string   `json:"change,omitempty"`
	Serial    int      `json:"serial,omitempty"`
	Harvested []string `json:"harvested"`
	// Note says why nothing was applied (the error wraps store.ErrNothingToDo then).
	Note string `json:"note,omitempty"`
}

// Apply writes a proposal (a file or an id; "" = the newest pending accepted one) as the next weights
// version. expectSerial >= 0 refuses when the evolution log has moved past it. When there is nothing to
// do, the error wraps store.ErrNothingToDo and the result still says what was looked at.
func Apply(env Env, proposal string, expectSerial int) (*ApplyResult, error) {
	s, err := env.OpenStore()
	if err != nil {
		return nil, err
	}
	if expectSerial >= 0 {
		s.Expect(expectSerial)
	}
	var p *store.Proposal
	if proposal != "" {
		p, err = s.ResolveProposal(proposal)
		if err != nil {
			return nil, err
		}
	} else if p, err = s.NewestPendingProposal(); err != nil {
		if errors.Is(err, store.ErrNothingToDo) {
			return &ApplyResult{Harvested: []string{}, Note: err.Error()}, err
		}
		return nil, err
	}
	out, err := s.Apply(p)
	if errors.Is(err, store.ErrNothingToDo) {
		return &ApplyResult{Proposal: p.ID, Harvested: []string{}, Note: err.Error()}, err
	}
	if err != nil {
		return nil, err
	}
	rep := &ApplyResult{Applied: true, Proposal: p.ID, Version: weights.VersionName(out.Weights.Version),
		Parent: weights.VersionName(out.Weights.Parent), Change: out.Entry.Change, Serial: out.Entry.Serial,
		Harvested: out.Harvested}
	if rep.Harvested == nil {
		rep.Harvested = []string{}
	}
	return rep, nil
}

// RollbackResult is what tune rollback reports (and its --json shape).
type RollbackResult struct {
	Version  string `json:"version"`
	Parent   string `json:"parent"`
	Restores string `json:"restores"`
	Change   string `json:"change"`
	Serial   int    `json:"serial"`
}

// Rollback writes a new version equal to version to (0 = the parent of the active version).
// expectSerial >= 0 refuses when the evolution log has moved past it.
func Rollback(env Env, to, expectSerial int) (*RollbackResult, error) {
	s, err := env.OpenStore()
	if err != nil {
		return nil, err
	}
	if expectSerial >= 0 {
		s.Expect(expectSerial)
	}
	out, err := s.Rollback(to)
	if err != nil {
		return nil, err
	}
	return &RollbackResult{Version: weights.VersionName(out.Weights.Version), Parent: weights.VersionName(out.Weights.Parent),
		Restores: weights.VersionName(out.Entry.Restores), Change: out.Entry.Change, Serial: out.Entry.Serial}, nil
}
