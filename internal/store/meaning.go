package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/weights"
)

// ProblemHistory: a log entry's meaning does not hold for the files: a rollback whose version is not the
// content it says it restores, an apply whose version is not its parent plus the changes logged for its
// proposal (or not the proposal's candidate, or with other ledger keys). Hashes alone cannot see this: a
// forger who writes a new version, a log line and re-signed sums makes every hash agree.
const ProblemHistory = "history"

// verifyMeaning checks what every apply and rollback entry claims against the version files (parsed) and
// the proposal files that are still present and readable, so that `tune verify` refuses a forged history whose hashes
// are all consistent (docs/decisions.md#hostile-files-issue-25). A version that a later
// `tune repair --resign` signed on purpose (its entry lists the file) is taken as signed. Missing,
// edited or unparsable files are left to the other checks.
//
// Readers (activeOnly) check only the entry that made the active version: two parsed files (three with
// the proposal), so `tune score` never scores with forged weights. The proposal is the costly one (it
// carries its evidence); readProposalFacts reads it once per content and, for the store's own file of
// the decided content, without the full parse (docs/decisions.md#store-reads-by-content).
func (st *state) verifyMeaning(pl *problemList, activeOnly bool) {
	resigned := map[string]int{} // file -> the last line of a resign (repair) that signed it
	for _, l := range st.lines {
		if l.OK && l.Entry.Action == ActionRepair {
			for _, f := range l.Entry.Files {
				resigned[f.File] = l.No
			}
		}
	}
	parsed := map[int]*weights.Weights{}
	load := func(v int) *weights.Weights {
		if w, ok := parsed[v]; ok {
			return w
		}
		var out *weights.Weights
		f := st.file(v)
		if want, _ := st.loggedSHA(weights.VersionName(v) + ".toml"); f != nil && (want == "" || want == f.SHA) {
			// an edited file is reported as edited; judging the entries built on it would only repeat that
			if w, err := weights.Parse(f.Name, f.Data); err == nil && w.Version == v {
				out = &w
			}
		}
		parsed[v] = out
		return out
	}
	last := 0 // the line of the entry that made the active version
	for _, l := range st.lines {
		if l.OK && changesActive(l.Entry.Action) && l.Entry.Result > 0 {
			last = l.No
		}
	}
	for _, l := range st.lines {
		e := l.Entry
		if !l.OK || (e.Action != ActionApply && e.Action != ActionRollback) || e.Result <= 0 || (activeOnly && l.No != last) {
			continue
		}
		name := weights.VersionName(e.Result) + ".toml"
		if resigned[name] > l.No {
			continue // signed on purpose later (an edited file is left out by load)
		}
		if err := st.entryMeaning(e, load); err != nil {
			pl.add(Problem{Kind: ProblemHistory, File: LogFile, Line: l.No, Message: fmt.Sprintf("%s: %v; the log and the version files tell different stories (a forged entry?): restore the store from version control", name, err)})
		}
	}
}

// entryMeaning checks one apply or rollback entry (nil when the files it needs are not there to judge).
func (st *state) entryMeaning(e LogEntry, load func(int) *weights.Weights) error {
	result := load(e.Result)
	if result == nil {
		return nil // missing or invalid: reported by verifyLog and verifyFiles
	}
	if result.Parent != e.Parent {
		return fmt.Errorf("the file says parent = %d, the %s entry says %s", result.Parent, e.Action, weights.VersionName(e.Parent))
	}
	switch e.Action {
	case ActionRollback:
		if e.Restores <= 0 || e.Restores >= e.Result {
			return fmt.Errorf("a rollback must restore an earlier version, this one names %d", e.Restores)
		}
		restored := load(e.Restores)
		if restored == nil {
			if st.file(e.Restores) == nil {
				return fmt.Errorf("it restores %s, which is not on disk", weights.VersionName(e.Restores))
			}
			return nil // edited or invalid: reported as such
		}
		if cs := Changes(restored, result); len(cs) > 0 {
			return fmt.Errorf("it says it restores %s, but its weights differ from it in %s", weights.VersionName(e.Restores), describeChanges(cs))
		}
	case ActionApply:
		parent := load(e.Parent)
		if parent == nil {
			return nil // missing, edited or invalid: reported as such
		}
		if err := st.checkLoggedCandidate(e.Proposal, parent, result); err != nil {
			return err
		}
		return st.proposalMeaning(e, result)
	}
	return nil
}

// proposalMeaning checks an apply against its proposal file, when it is still there: the file must be
// the one decided (its content hash as logged), its candidate the applied weights, and its evidence the
// logged ledger keys.
func (st *state) proposalMeaning(e LogEntry, result *weights.Weights) error {
	path, ok := ProposalPath(st.dir, e.Proposal)
	if !ok {
		return fmt.Errorf("it names proposal %q, which is not a proposal file name", e.Proposal)
	}
	p, err := readProposalFacts(path, decidedSHA(st.loggedDecisions(e.Proposal)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// gone: nothing to judge by; the candidate was already checked against the logged decisions
		return nil
	case err != nil:
		// There but no longer the proposal that was decided (its id no longer matches its content, it does
		// not parse, it is a link or a device): every reader of the version's provenance (weights show,
		// diff) refuses it, so verify and verify --base, the pull request's check, must say so (ninth review).
		return fmt.Errorf("proposal %s is no longer the file that was decided: %v", e.Proposal, err)
	}
	if cs := Changes(&p.candidate, result); len(cs) > 0 {
		return fmt.Errorf("its weights differ from proposal %s's candidate in %s", e.Proposal, describeChanges(cs))
	}
	if keys := p.ledger; !slices.Equal(keys, e.Ledger) && !(len(keys) == 0 && len(e.Ledger) == 0) {
		return fmt.Errorf("its ledger keys %v are not those of proposal %s's evidence %v", e.Ledger, e.Proposal, keys)
	}
	if d := decidedOtherwise(st.loggedDecisions(e.Proposal), p.contentSHA); d != nil {
		return fmt.Errorf("proposal %s was edited after it was decided (content hash %s, logged %s at serial %d)", e.Proposal, short(p.contentSHA), short(d.ProposalSHA256), d.Serial)
	}
	return nil
}

// decidedOtherwise is the first decision that logged another content hash than sha (nil when none):
// the proposal file was edited after it was decided.
func decidedOtherwise(decisions []LogEntry, sha string) *LogEntry {
	for i := range decisions {
		if d := &decisions[i]; d.ProposalSHA256 != "" && d.ProposalSHA256 != sha {
			return d
		}
	}
	return nil
}

// proposalFacts is what proposalMeaning needs of a proposal file that parses: its candidate, its ledger
// keys and its content hash.
type proposalFacts struct {
	candidate  weights.Weights
	ledger     []string
	contentSHA string
}

// readProposalFacts reads the proposal file at path and gives its facts (an error when it cannot be read
// or does not parse: fs.ErrNotExist when it is gone), once per content (contentMemo): a proposal carries every flagged task its evidence
// counted, 460 KB and 50 ms to parse, check and hash for a year of tasks. decided is the content hash the
// log recorded for it ("" when none or several): a file whose bytes are the canonical form of that very
// content (canonicalFacts) gives its facts without the full parse.
func readProposalFacts(path, decided string) (proposalFacts, error) {
	data, err := regular.ReadLimitedNoFollow(path, regular.ProposalFile)
	if err != nil {
		return proposalFacts{}, err
	}
	return proposalFactsOf(path, data, decided)
}

// proposalFactsOf is readProposalFacts of the bytes already read from path.
func proposalFactsOf(path string, data []byte, decided string) (proposalFacts, error) {
	f := proposalMemo.get(data, func() cachedFacts {
		if f, ok := canonicalFacts(data, decided); ok {
			return cachedFacts{facts: f}
		}
		p, sha, err := parseProposal(path, data)
		if err != nil {
			return cachedFacts{err: err}
		}
		return cachedFacts{facts: proposalFacts{candidate: p.Candidate, ledger: ledgerKeys(p), contentSHA: sha}}
	}, decided)
	return f.facts, f.err
}

type cachedFacts struct {
	facts proposalFacts
	err   error
}

var proposalMemo contentMemo[cachedFacts]

// decidedSHA is the one content hash the decisions logged for a proposal ("" when they log none, or
// disagree: then only the full parse can say which differs).
func decidedSHA(decisions []LogEntry) string {
	sha := ""
	for _, d := range decisions {
		switch {
		case d.ProposalSHA256 == "":
		case sha == "":
			sha = d.ProposalSHA256
		case sha != d.ProposalSHA256:
			return ""
		}
	}
	return sha
}

// canonicalFacts gives the facts of a proposal file written by the store (Proposal.MarshalJSON): its
// content hash is the hash of its bytes without the "id" and "created" lines, because the canonical
// content is the same encoding without those two fields. When that hash is the one decided, the file
// holds exactly the content that was decided, so its id, its fields and its hash need no second check;
// only the candidate and the ledger keys are read. Anything else (hand-edited, reformatted, another
// content) is false, and the full parse judges it.
func canonicalFacts(data []byte, decided string) (proposalFacts, bool) {
	const open = "{\n"
	if decided == "" || !bytes.HasPrefix(data, []byte(open)) {
		return proposalFacts{}, false
	}
	rest := data[len(open):]
	id, rest, ok := cutField(rest, "id")
	if ok && id != "p-"+decided[:min(12, len(decided))] {
		return proposalFacts{}, false
	}
	created, after, ok := cutField(rest, "created")
	if ok {
		// The created line is outside the hash, so it must be the one member it looks like, with the value
		// the full parse accepts: a quote in it could close the string and carry more members (a second
		// "candidate", whose bucket edges the decoder would keep), which the fast path would read as the
		// decided content. Eighth review (docs/decisions.md#eighth-review-store-reads-by-content).
		var t time.Time
		if strings.ContainsAny(created, `"\`) || t.UnmarshalJSON([]byte(`"`+created+`"`)) != nil {
			return proposalFacts{}, false
		}
		rest = after
	}
	h := sha256.New()
	h.Write([]byte(open))
	h.Write(rest)
	if hex.EncodeToString(h.Sum(nil)) != decided {
		return proposalFacts{}, false
	}
	var j struct {
		Candidate candidateJSON `json:"candidate"`
		Evidence  []struct {
			Key string `json:"key"`
		} `json:"evidence"`
	}
	if err := json.Unmarshal(data, &j); err != nil {
		return proposalFacts{}, false
	}
	cand, err := candidateToWeights(j.Candidate)
	if err != nil {
		return proposalFacts{}, false
	}
	p := &Proposal{Candidate: cand}
	for _, t := range j.Evidence {
		p.Evidence = append(p.Evidence, FlaggedTask{Key: t.Key})
	}
	return proposalFacts{candidate: cand, ledger: ledgerKeys(p), contentSHA: decided}, true
}

// cutField cuts a leading `  "name": "value",` line of an indented proposal, giving the value.
func cutField(data []byte, name string) (value string, rest []byte, ok bool) {
	prefix := `  "` + name + `": "`
	line, after, found := bytes.Cut(data, []byte("\n"))
	// the line must hold the prefix and the closing `",` apart: `  "id": ",` has both, overlapping
	if !found || len(line) < len(prefix)+2 || !bytes.HasPrefix(line, []byte(prefix)) || !bytes.HasSuffix(line, []byte(`",`)) {
		return "", data, false
	}
	return string(line[len(prefix) : len(line)-2]), after, true
}
