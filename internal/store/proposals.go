package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ProposalsPath is the directory of the store's proposals (<dir>/proposals).
func (s *Store) ProposalsPath() string { return filepath.Join(s.Dir, ProposalsDir) }

// Proposals reads every proposal under <dir>/proposals/, newest first (latest created time; ties: the
// smaller id). An unreadable proposal file is an error: silently skipping one could make an older
// proposal look like the newest.
func (s *Store) Proposals() ([]*Proposal, error) {
	paths, err := filepath.Glob(filepath.Join(s.ProposalsPath(), "*.json"))
	if err != nil {
		return nil, err
	}
	out := make([]*Proposal, 0, len(paths))
	for _, path := range paths {
		p, err := ReadProposal(path)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	sortNewestFirst(out)
	return out, nil
}

func sortNewestFirst(ps []*Proposal) {
	sort.SliceStable(ps, func(i, j int) bool {
		if !ps[i].Created.Equal(ps[j].Created) {
			return ps[i].Created.After(ps[j].Created)
		}
		return ps[i].ID < ps[j].ID
	})
}

// NewestProposal is the newest proposal whatever its decision (a reverted proposal deserves a report
// too). No proposal at all is an error.
func (s *Store) NewestProposal() (*Proposal, error) {
	ps, err := s.Proposals()
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("no proposal in %s (tune propose writes them; or pass a PROPOSAL file)", s.ProposalsPath())
	}
	return ps[0], nil
}

// PendingProposals are the proposals that `tune apply` may write (accepted or halved) and that the
// evolution log has not applied yet, newest first.
func (s *Store) PendingProposals() ([]*Proposal, error) {
	ps, err := s.Proposals()
	if err != nil {
		return nil, err
	}
	entries, err := s.Entries()
	if err != nil {
		return nil, err
	}
	applied := map[string]bool{}
	for _, e := range entries {
		if e.Action == ActionApply {
			applied[e.Proposal] = true
		}
	}
	var pending []*Proposal
	for _, p := range ps {
		if p.Applicable() && !applied[p.ID] {
			pending = append(pending, p)
		}
	}
	return pending, nil
}

// NewestPendingProposal is the first of PendingProposals; without one the error wraps ErrNothingToDo
// and says why.
func (s *Store) NewestPendingProposal() (*Proposal, error) {
	pending, err := s.PendingProposals()
	if err != nil {
		return nil, err
	}
	if len(pending) > 0 {
		return pending[0], nil
	}
	dir := s.ProposalsPath()
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: no proposals in %s (tune propose writes them)", ErrNothingToDo, dir)
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("%d proposals", len(paths))
	if len(paths) == 1 {
		what = "1 proposal"
	}
	return nil, fmt.Errorf("%w: none of the %s in %s is accepted and not yet applied", ErrNothingToDo, what, dir)
}

// ResolveProposal reads a proposal named by a file path or by its id (p-…, looked up under
// <dir>/proposals/).
func (s *Store) ResolveProposal(arg string) (*Proposal, error) {
	return ResolveProposal(s.Dir, arg)
}

// ResolveProposal is Store.ResolveProposal for a store directory that need not verify.
func ResolveProposal(dir, arg string) (*Proposal, error) {
	path := arg
	if strings.HasPrefix(arg, "p-") && !strings.ContainsAny(arg, `/\`) && !strings.HasSuffix(arg, ".json") {
		path = filepath.Join(dir, ProposalsDir, arg+".json")
	}
	p, err := ReadProposal(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("proposal %s: no such file (proposals live in %s)", path, filepath.Join(dir, ProposalsDir))
	}
	return p, err
}
