package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/weights"
)

// ProposalPath is the file of proposal id among the proposals of the store at dir, false when id is not
// a plain file name: the id comes from the evolution log, which a pull request can write, and
// "../../x" would read a file outside the store (docs/decisions.md#eighth-review-store-reads-by-content).
func ProposalPath(dir, id string) (string, bool) {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\`+"\x00") {
		return "", false
	}
	return filepath.Join(dir, ProposalsDir, id+".json"), true
}

// ProposalsPath is the directory of the store's proposals (<dir>/proposals).
func (s *Store) ProposalsPath() string { return filepath.Join(s.Dir, ProposalsDir) }

// proposalHead is what ordering and filtering need of a proposal file: its id, created time and
// decision. A night's proposal carries every flagged task its evidence counted (460 KB and 50 ms to parse
// for a year of tasks), and a store keeps every refused night's: listing them by their heads and parsing
// only the ones asked for keeps `tune apply` and `tune report` from parsing them all
// (docs/decisions.md#store-reads-by-content).
type proposalHead struct {
	path     string
	ID       string           `json:"id"`
	Created  time.Time        `json:"created"`
	Decision weights.Decision `json:"decision"`
}

// proposalHeads reads the head of every proposal file, newest first. A file that is not a JSON object
// with these fields (or has no id) is read whole, so that its error is ReadProposal's, naming the line.
func (s *Store) proposalHeads() ([]proposalHead, error) {
	paths, err := filepath.Glob(filepath.Join(s.ProposalsPath(), "*.json"))
	if err != nil {
		return nil, err
	}
	heads := make([]proposalHead, 0, len(paths))
	for _, path := range paths {
		data, err := regular.ReadLimitedNoFollow(path, regular.ProposalFile)
		if err != nil {
			return nil, err
		}
		h := proposalHead{path: path}
		if json.Unmarshal(data, &h) != nil || h.ID == "" {
			p, err := ParseProposal(path, data)
			if err != nil {
				return nil, err
			}
			h.ID, h.Created, h.Decision = p.ID, p.Created, p.Decision
		}
		h.Created = h.Created.UTC()
		heads = append(heads, h)
	}
	sort.SliceStable(heads, func(i, j int) bool {
		if !heads[i].Created.Equal(heads[j].Created) {
			return heads[i].Created.After(heads[j].Created)
		}
		return heads[i].ID < heads[j].ID
	})
	return heads, nil
}

// readHeads reads whole, in order, the proposals whose heads keep says to. A file it reads is checked
// whole (ReadProposal): an unreadable one is an error, never skipped, so an older proposal cannot stand in
// for it.
func readHeads(heads []proposalHead, keep func(proposalHead) bool) ([]*Proposal, error) {
	var out []*Proposal
	for _, h := range heads {
		if !keep(h) {
			continue
		}
		p, err := ReadProposal(h.path)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// NewestProposal is the newest proposal whatever its decision (a reverted proposal deserves a report
// too). No proposal at all is an error.
func (s *Store) NewestProposal() (*Proposal, error) {
	heads, err := s.proposalHeads()
	if err != nil {
		return nil, err
	}
	if len(heads) == 0 {
		return nil, fmt.Errorf("no proposal in %s (tune propose writes them; or pass a PROPOSAL file)", s.ProposalsPath())
	}
	return ReadProposal(heads[0].path)
}

// PendingProposals are the proposals that `tune apply` may write (accepted or halved) and that the
// evolution log has not applied yet, newest first.
func (s *Store) PendingProposals() ([]*Proposal, error) {
	heads, err := s.proposalHeads()
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
	ps, err := readHeads(heads, func(h proposalHead) bool { return h.Decision.Applicable() && !applied[h.ID] })
	if err != nil {
		return nil, err
	}
	var pending []*Proposal
	for _, p := range ps {
		if p.Applicable() && !applied[p.ID] { // the whole file's word, which its head gave
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
