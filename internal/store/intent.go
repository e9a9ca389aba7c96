package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/ldd-tools/tune/internal/fixtures"
	"github.com/ldd-tools/tune/internal/weights"
)

// This file ties what the store writes to what its log already says was decided: apply writes only a
// proposal whose content hash the log recorded with an accept or halve decision, and repair completes
// only a marker that describes exactly such an apply (or a rollback to a recorded version).
// docs/decisions.md#store-integrity-and-hostile-inputs-issue-18.

// loggedDecisions are the accept/halve entries of proposal id, in log order.
func (st *state) loggedDecisions(id string) []LogEntry {
	var out []LogEntry
	for _, l := range st.lines {
		if l.OK && l.Entry.Proposal == id && (l.Entry.Action == ActionAccept || l.Entry.Action == ActionHalve) {
			out = append(out, l.Entry)
		}
	}
	return out
}

// checkProposalIntent refuses a proposal the log does not vouch for: its content hash must be the one
// logged with its accept/halve decisions, and its candidate must be the parent plus the logged changes.
func (st *state) checkProposalIntent(p *Proposal, parent *weights.Weights) error {
	id := p.ComputeID()
	decisions := st.loggedDecisions(id)
	if len(decisions) == 0 {
		return fmt.Errorf("proposal %s: %s records no accept or halve decision for it, so tune did not decide it (an edited or hand-written proposal file?); run `tune propose` to measure a change", id, LogFile)
	}
	sha := p.ContentSHA256()
	for _, e := range decisions {
		if e.ProposalSHA256 != "" && e.ProposalSHA256 != sha {
			return fmt.Errorf("proposal %s: its content hash %s differs from the %s recorded with its %s decision (%s serial %d): the file was edited after it was decided", id, short(sha), short(e.ProposalSHA256), e.Action, LogFile, e.Serial)
		}
		if e.Parent != parent.Version {
			return fmt.Errorf("proposal %s: its %s decision (%s serial %d) was measured against %s, not %s", id, e.Action, LogFile, e.Serial, weights.VersionName(e.Parent), weights.VersionName(parent.Version))
		}
	}
	if err := st.checkLoggedCandidate(id, parent, &p.Candidate); err != nil {
		return fmt.Errorf("proposal %s: %v", id, err)
	}
	return nil
}

func loggedChanges(es []LogEntry) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Change
	}
	return strings.Join(parts, ", ")
}

// applyLoggedChange applies a change as the evolution step logs it (weights.ChangeLabel, read back by
// weights.ParseChangeLabel): "<signal> <delta>" or "bucket <L0..L3> edge <delta>".
func applyLoggedChange(w weights.Weights, change string) (weights.Weights, error) {
	kind, name, d, err := weights.ParseChangeLabel(change)
	if err != nil {
		return w, fmt.Errorf("logged change %q: %v", change, err)
	}
	if kind == weights.ChangeBucket {
		i := slicesIndex(bucketNames[:], name)
		if i < 0 {
			return w, fmt.Errorf("logged change %q: unknown bucket edge %s", change, name)
		}
		w.Buckets.Edges[i] += d
		return w, nil
	}
	sig, ok := weights.SignalByName(name)
	if !ok {
		return w, fmt.Errorf("logged change %q: unknown signal %s", change, name)
	}
	w.Signals[sig] += d
	return w, nil
}

func slicesIndex(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// Roots of a pending write: the store directory, or the fixtures directory of the run (harvested
// scenarios). A marker never names an absolute path.
const (
	RootStore    = ""
	RootFixtures = "fixtures"
)

// harvestedName is compiled on first use, not at init: `tune score` links the store and never
// resolves a pending write (docs/decisions.md#score-start-up).
var harvestedName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(HarvestDir) + `/h-[0-9a-f]{12}\.toml$`)
})

// resolveWrite turns a marker's (root, path) into a path on disk that stays inside its root: relative,
// no "..", the expected shape for the root, and no symbolic link on the way out of it.
func (s *Store) resolveWrite(w pendingWrite) (string, error) {
	p := w.Path
	if p == "" || filepath.IsAbs(p) || strings.Contains(p, `\`) || !filepath.IsLocal(filepath.FromSlash(p)) || filepath.ToSlash(filepath.Clean(p)) != p {
		return "", fmt.Errorf("write %q: not a clean relative path inside its directory", p)
	}
	var root string
	switch w.Root {
	case RootStore:
		if _, ok := VersionFileName(p); !ok {
			return "", fmt.Errorf("write %q: the store only writes version files (vNNNN.toml)", p)
		}
		root = s.Dir
	case RootFixtures:
		if !harvestedName().MatchString(p) {
			return "", fmt.Errorf("write %q: fixtures are only written as %s/h-<12 hex digits>.toml", p, HarvestDir)
		}
		if s.FixturesDir == "" {
			return "", fmt.Errorf("write %q: no fixtures directory is set for this run (--fixtures-dir)", p)
		}
		root = s.FixturesDir
	default:
		return "", fmt.Errorf("write %q: unknown root %q", p, w.Root)
	}
	full := filepath.Join(root, filepath.FromSlash(p))
	if err := insideRoot(root, filepath.Dir(full)); err != nil {
		return "", fmt.Errorf("write %q: %v", p, err)
	}
	return full, nil
}

// insideRoot checks that dir, with symbolic links resolved as far as it exists, is root or below it.
func insideRoot(root, dir string) error {
	realRoot, err := resolveExisting(root)
	if err != nil {
		return err
	}
	real, err := resolveExisting(dir)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(realRoot, real); err != nil || (rel != "." && !filepath.IsLocal(rel)) {
		return fmt.Errorf("resolves to %s, outside %s (a symbolic link leads out of it)", real, realRoot)
	}
	return nil
}

// resolveExisting resolves the symbolic links of the longest prefix of path that exists and appends the
// rest (which a write would create as plain directories).
func resolveExisting(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	existing, rest := abs, []string(nil)
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = append([]string{filepath.Base(existing)}, rest...)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", err
	}
	return filepath.Join(append([]string{real}, rest...)...), nil
}

// checkMarker decides whether a pending marker describes an operation tune started: an apply of a
// proposal the log decided, or a rollback to a recorded version, appending exactly the next serial on the
// current head, writing first the next version file (its content hashing to the entry's result_sha256)
// and then only harvested fixtures (each hashing to the entry's harvested_sha256). logged says the entry
// is already the log's head (the operation committed; only its files may be missing). Anything else is
// refused with the reason: repair must never write or delete what a forged marker names.
func (s *Store) checkMarker(st *state, op *pendingOp, logged bool) (*LogEntry, error) {
	if op.Op != ActionApply && op.Op != ActionRollback {
		return nil, fmt.Errorf("op %q: only apply and rollback leave markers", op.Op)
	}
	lines, bad, _ := parseLog([]byte(op.Entry + "\n"))
	if len(bad) > 0 || len(lines) != 1 || !lines[0].OK {
		return nil, fmt.Errorf("its log entry is not a valid log line")
	}
	e := lines[0].Entry
	if e.Action != op.Op || e.Serial != op.Serial || e.Lineage != op.Lineage {
		return nil, fmt.Errorf("its log entry (%s, serial %d, lineage %s) is not the operation it names (%s, serial %d, lineage %s)", e.Action, e.Serial, e.Lineage, op.Op, op.Serial, op.Lineage)
	}
	// what the store looked like before the operation
	before := st
	if logged {
		cp := *st
		cp.lines = st.lines[:len(st.lines)-1]
		before = &cp
	}
	serial, lineage := before.head()
	if e.Serial != serial+1 || e.Lineage != lineage {
		return nil, fmt.Errorf("it appends serial %d (lineage %s), but the log is at serial %d (lineage %s)", e.Serial, e.Lineage, serial, lineage)
	}
	prev := ""
	if n := len(before.lines); n > 0 {
		prev = lineHash(before.lines[n-1].Raw)
	}
	if e.PrevHash != prev {
		return nil, fmt.Errorf("its log entry does not chain to the log's last line")
	}
	active := before.active()
	if e.Parent != active {
		return nil, fmt.Errorf("its %s starts from %s, but %s is active", op.Op, weights.VersionName(e.Parent), weights.VersionName(active))
	}
	next := before.highestRecorded(weights.VersionName(e.Result)+".toml") + 1
	if e.Result != next {
		return nil, fmt.Errorf("it writes %s, but the next version is %s", weights.VersionName(e.Result), weights.VersionName(next))
	}
	if len(op.Writes) == 0 || op.Writes[0].Root != RootStore || op.Writes[0].Path != weights.VersionName(e.Result)+".toml" || op.Writes[0].Step != "version" {
		return nil, fmt.Errorf("its first write must be the new version %s.toml", weights.VersionName(e.Result))
	}
	vw := op.Writes[0]
	if fileSHA([]byte(vw.Content)) != e.ResultSHA256 {
		return nil, fmt.Errorf("the content it writes to %s does not hash to the result_sha256 of its log entry", vw.Path)
	}
	w, err := weights.Parse(vw.Path, []byte(vw.Content))
	if err != nil {
		return nil, fmt.Errorf("the version it writes does not parse: %v", err)
	}
	if w.Version != e.Result || w.Parent != active {
		return nil, fmt.Errorf("the version it writes says version %d, parent %d; want %d, %d", w.Version, w.Parent, e.Result, active)
	}
	parentW, err := before.loadVersion(active)
	if err != nil {
		return nil, err
	}
	switch op.Op {
	case ActionApply:
		if err := before.checkLoggedCandidate(e.Proposal, &parentW, &w); err != nil {
			return nil, err
		}
	case ActionRollback:
		if e.Restores <= 0 || e.Restores == active {
			return nil, fmt.Errorf("its rollback restores %s, which is not an earlier version", weights.VersionName(e.Restores))
		}
		target, err := before.loadVersion(e.Restores)
		if err != nil {
			return nil, err
		}
		if sha, _ := before.loggedSHA(weights.VersionName(e.Restores) + ".toml"); sha == "" {
			return nil, fmt.Errorf("its rollback restores %s, which the log never recorded", weights.VersionName(e.Restores))
		}
		if !sameContent(&target, &w) {
			return nil, fmt.Errorf("the version it writes does not hold the weights of %s, which it says it restores", weights.VersionName(e.Restores))
		}
	}
	var others []versionFile
	for _, f := range before.files {
		if f.Name != vw.Path {
			others = append(others, f)
		}
	}
	if op.PrevSum != string(marshalSum(sumOf(others))) {
		return nil, fmt.Errorf("the %s it would restore on --abort is not the checksums of the version files before it", SumFile)
	}
	after := append(others, versionFile{Version: e.Result, Name: vw.Path, Data: []byte(vw.Content)})
	if op.NewSum != string(marshalSum(sumOf(after))) {
		return nil, fmt.Errorf("the %s it writes is not the checksums of the version files plus %s", SumFile, vw.Path)
	}
	fx := op.Writes[1:]
	if op.Op == ActionRollback && len(fx) > 0 {
		return nil, fmt.Errorf("a rollback writes no fixtures")
	}
	if len(fx) != len(e.Harvested) || len(fx) != len(e.HarvestedSHA256) {
		return nil, fmt.Errorf("it writes %d fixture(s), its log entry records %d", len(fx), len(e.Harvested))
	}
	for i, x := range fx {
		if x.Root != RootFixtures || x.Path != e.Harvested[i] || x.Step != "fixture:"+filepath.Base(x.Path) {
			return nil, fmt.Errorf("write %d (%s) is not the fixture its log entry records (%s)", i+2, x.Path, e.Harvested[i])
		}
		if fileSHA([]byte(x.Content)) != e.HarvestedSHA256[i] {
			return nil, fmt.Errorf("the content it writes to %s does not hash to the sha256 its log entry records", x.Path)
		}
		if _, err := fixtures.Parse(x.Path, []byte(x.Content)); err != nil {
			return nil, fmt.Errorf("the fixture it writes to %s does not parse: %v", x.Path, err)
		}
	}
	for _, x := range op.Writes {
		if x.Root == RootFixtures && s.FixturesDir == "" {
			continue // not a flaw of the marker; finishing the write asks for the directory
		}
		if _, err := s.resolveWrite(x); err != nil {
			return nil, err
		}
	}
	return &e, nil
}

// checkLoggedCandidate: the version an apply writes holds the parent plus the changes the log decided for
// the proposal, and the log hashed that proposal.
func (st *state) checkLoggedCandidate(id string, parent, w *weights.Weights) error {
	decisions := st.loggedDecisions(id)
	if id == "" || len(decisions) == 0 {
		return fmt.Errorf("its apply names proposal %q, for which %s records no accept or halve decision", id, LogFile)
	}
	want := *parent
	var err error
	for _, e := range decisions {
		if want, err = applyLoggedChange(want, e.Change); err != nil {
			return err
		}
	}
	if cs := Changes(&want, w); len(cs) > 0 {
		return fmt.Errorf("the weights are not %s plus the changes logged for proposal %s (%s); they differ in %s", weights.VersionName(parent.Version), id, loggedChanges(decisions), describeChanges(cs))
	}
	return nil
}

// highestRecorded is the highest version number on disk or in the log, not counting the file named
// except (the one a pending operation may already have written).
func (st *state) highestRecorded(except string) int {
	n := 0
	for _, f := range st.files {
		if f.Name != except && f.Version > n {
			n = f.Version
		}
	}
	for _, l := range st.lines {
		if l.OK && l.Entry.Result > n {
			n = l.Entry.Result
		}
	}
	return n
}
