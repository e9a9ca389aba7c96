package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/faultpoint"
	"github.com/ldd-tools/tune/internal/redact"
	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/weights"
)

// pendingOp is weights/.pending.json: everything a multi-step operation will write, recorded before the
// first write and removed after the last (the golang-migrate "dirty" flag, with enough content that
// `tune repair` can finish the operation instead of guessing).
type pendingOp struct {
	Op      string         `json:"op"`     // apply | rollback
	Serial  int            `json:"serial"` // serial of the log entry the operation appends
	Lineage string         `json:"lineage"`
	Started time.Time      `json:"started"`
	Writes  []pendingWrite `json:"writes"` // new files in write order: the version file, then harvested fixtures
	PrevSum string         `json:"prev_sum"`
	NewSum  string         `json:"new_sum"`
	Entry   string         `json:"entry"` // the log line it appends
}

type pendingWrite struct {
	Step string `json:"step"` // crash-hook name of this write
	// Root is RootStore ("", the store directory) or RootFixtures (the run's fixtures directory); Path is
	// relative to it (never absolute, never ".."): see resolveWrite.
	Root    string `json:"root,omitempty"`
	Path    string `json:"path"`
	Content string `json:"content"` // the exact bytes
}

func parsePending(data []byte) (*pendingOp, error) {
	var op pendingOp
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&op); err != nil {
		return nil, err
	}
	if op.Op == "" || op.Serial <= 0 || op.Entry == "" {
		return nil, errors.New("incomplete marker")
	}
	return &op, nil
}

func (op *pendingOp) describeWrites() string {
	names := make([]string, len(op.Writes))
	for i, w := range op.Writes {
		names[i] = filepath.Base(w.Path)
	}
	if len(names) == 0 {
		return "no new files"
	}
	return "writing " + strings.Join(names, ", ")
}

func (s *Store) path(name string) string { return filepath.Join(s.Dir, name) }

// mutate runs fn under the store lock on a fresh read of the store, after checking that the log head is
// where this Store expects it (serial and lineage). On success the expected head moves to the new one.
func (s *Store) mutate(fn func(st *state) error) error {
	s.versions = nil
	timeout := s.LockTimeout
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	if err := regular.RealDirs(s.writeDirs()...); err != nil {
		return err // a symbolic link would take the writes outside the project
	}
	// The lock file is opened without following a link and only as a regular file: a FIFO planted there
	// would block the open past any timeout (docs/decisions.md#hostile-files-issue-25).
	lock, err := regular.TryLock(s.path(LockFile), timeout)
	if err != nil {
		return fmt.Errorf("lock %s: %w", s.path(LockFile), err)
	}
	if lock == nil {
		return fmt.Errorf("weights store %s is locked by another tune run (%s held for more than %s); try again when it finishes", s.Dir, LockFile, timeout)
	}
	defer lock.Unlock()
	st, err := loadState(s.Dir)
	if err != nil {
		return err
	}
	st.reference = s.Reference
	serial, lineage := st.head()
	if serial != s.serial || (s.lineage != "" && lineage != s.lineage) {
		return &StaleError{Dir: s.Dir, ExpectedSerial: s.serial, HeadSerial: serial, ExpectedLineage: s.lineage, HeadLineage: lineage}
	}
	// Every writer of the store's files (and of the harvested fixtures) holds the lock, so a temp file
	// seen under it belongs to a write that was killed: remove it (verify reports it until then).
	stale := staleIn(s.harvestedDir())
	for _, name := range st.stale {
		stale = append(stale, s.path(name))
	}
	s.removedTemps = nil
	if err := s.removeStale(stale); err != nil {
		return err
	}
	st.stale = nil
	if err := fn(st); err != nil {
		return err
	}
	after, err := loadState(s.Dir)
	if err != nil {
		return err
	}
	s.serial, s.lineage = after.head()
	return nil
}

// requireClean refuses to build on a store that is dirty (an interrupted operation) or does not verify.
func (st *state) requireClean() error {
	if st.pendingData != nil {
		return fmt.Errorf("weights store %s has an interrupted operation (%s); run `tune verify` to see it, then `tune repair`", st.dir, PendingFile)
	}
	if probs := st.verify(); len(probs) > 0 {
		return &IntegrityError{Dir: st.dir, Problems: probs}
	}
	return nil
}

// appendLine appends one log line, filling serial, lineage, time and prev_hash from the current head. The
// whole log is rewritten through a temp file and renamed, so a crash can never leave half a line.
func (s *Store) appendLine(st *state, e LogEntry) ([]byte, error) {
	line := s.buildLine(st, e)
	if err := s.writeLog(st, line); err != nil {
		return nil, err
	}
	return line, nil
}

func (s *Store) buildLine(st *state, e LogEntry) []byte {
	serial, lineage := st.head()
	e.Serial = serial + 1
	if e.Lineage == "" {
		e.Lineage = lineage
	}
	if e.Time.IsZero() {
		e.Time = s.Now().UTC()
	}
	// Nothing secret may enter the hash-chained log: a line cannot be removed without breaking the chain
	// (docs/decisions.md#hostile-files-issue-25). Titles arrive redacted; this is the last gate.
	e.Reason, e.Change = redact.String(e.Reason), redact.String(e.Change)
	for i := range e.Evidence {
		e.Evidence[i] = redact.String(e.Evidence[i])
	}
	e.PrevHash = ""
	if n := len(st.lines); n > 0 {
		e.PrevHash = lineHash(st.lines[n-1].Raw)
	}
	return e.marshalLine()
}

// writeLog appends lines to the log in one atomic rewrite, then re-anchors its end.
func (s *Store) writeLog(st *state, lines ...[]byte) error {
	old, err := regular.ReadLimitedNoFollow(s.path(LogFile), regular.StoreLog)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	data := old
	for _, line := range lines {
		data = append(append(data, line...), '\n')
	}
	if err := writeFileAtomic(s.path(LogFile), data); err != nil {
		return err
	}
	for _, line := range lines {
		st.lines = append(st.lines, logLine{No: len(st.lines) + 1, Raw: line, OK: true})
		if err := json.Unmarshal(line, &st.lines[len(st.lines)-1].Entry); err != nil {
			return err
		}
	}
	return s.writeHead(st)
}

// writeHead anchors the end of the log (HeadFile), right after every append.
func (s *Store) writeHead(st *state) error {
	h, ok := st.anchorOf()
	if !ok {
		return fmt.Errorf("internal error: the log's last line does not parse")
	}
	data := h.marshal()
	if err := writeFileAtomic(s.path(HeadFile), data); err != nil {
		return err
	}
	st.headExists, st.headData = true, data
	return nil
}

// bootstrap starts the log of a store that has none (as shipped: only v0001.toml): it signs the version
// files into weights.sum, then writes an init entry that records each file's sha256 and a new lineage.
// A crash between the two leaves a signed store without a log, which verifies and is bootstrapped again.
func (s *Store) bootstrap(st *state) error {
	if st.logExists {
		return nil
	}
	sum := marshalSum(sumOf(st.files))
	if err := writeFileAtomic(s.path(SumFile), sum); err != nil {
		return err
	}
	st.sumExists, st.sumData = true, sum
	faultpoint.Reach(faultpoint.Step, "init-sum")
	now := s.Now().UTC()
	hs, _, _ := parseSum(sum)
	e := LogEntry{
		Action:  ActionInit,
		Lineage: fileSHA([]byte("tune lineage\n" + now.Format(time.RFC3339Nano) + "\n" + hs))[:16],
		Time:    now,
		Result:  st.active(),
		Reason:  fmt.Sprintf("store initialised with %d version file(s); %s active", len(st.files), weights.VersionName(st.active())),
	}
	for _, f := range st.files {
		e.Files = append(e.Files, FileHash{f.Name, f.SHA})
	}
	if _, err := s.appendLine(st, e); err != nil {
		return err
	}
	st.logExists, st.logComplete = true, true
	faultpoint.Reach(faultpoint.Step, "init-log")
	return nil
}

// Outcome is the result of Apply or Rollback.
type Outcome struct {
	Weights   weights.Weights // the new version
	Entry     LogEntry        // its log entry
	Harvested []string        // fixture files added
}

// Apply writes proposal p as the next version (parent = the active version), harvests its flagged tasks
// into fixtures and logs it. It refuses a proposal that is not accept/halve, one measured against a
// version that is no longer active, and one already applied or whose weights the active version
// already has (ErrNothingToDo).
func (s *Store) Apply(p *Proposal) (*Outcome, error) {
	if p.ID == "" {
		p.ID = p.ComputeID()
	}
	if !p.Applicable() {
		return nil, fmt.Errorf("proposal %s has decision %q: the evolution step did not accept a change, so there is nothing to apply", p.ID, p.Decision)
	}
	var out *Outcome
	err := s.mutate(func(st *state) error {
		if err := st.requireClean(); err != nil {
			return err
		}
		if e := st.appliedEntry(p.ID); e != nil {
			return fmt.Errorf("%w: proposal %s was already applied as %s (log serial %d)", ErrNothingToDo, p.ID, weights.VersionName(e.Result), e.Serial)
		}
		active := st.active()
		activeW, err := st.loadVersion(active)
		if err != nil {
			return err
		}
		changes := Changes(&activeW, &p.Candidate)
		if p.Parent != active {
			if len(changes) == 0 {
				// e.g. a rollback proposal the watch left, after a rollback by hand: what it asks is done
				return fmt.Errorf("%w: proposal %s was measured against %s, and the active version %s already has its weights",
					ErrNothingToDo, p.ID, weights.VersionName(p.Parent), weights.VersionName(active))
			}
			return fmt.Errorf("proposal %s was measured against %s, but the active version is %s: its evidence and replay no longer hold; run `tune propose` again",
				p.ID, weights.VersionName(p.Parent), weights.VersionName(active))
		}
		if err := st.checkLedger(p); err != nil {
			return err
		}
		if len(changes) == 0 {
			return fmt.Errorf("%w: proposal %s changes nothing against %s", ErrNothingToDo, p.ID, weights.VersionName(active))
		}
		if err := st.checkProposalIntent(p, &activeW); err != nil {
			return err
		}
		if err := s.bootstrap(st); err != nil {
			return err
		}
		n := st.nextVersion()
		w := p.Candidate
		w.Schema, w.Version, w.Parent, w.Created = weights.Schema, n, active, s.Now().UTC()
		w.Reason = p.Reason
		if w.Reason == "" {
			w.Reason = "apply proposal " + p.ID
		}
		w.Evidence = proposalEvidence(p)
		harvest, err := harvestFixtures(s.FixturesDir, p, n)
		if err != nil {
			return err
		}
		entry := LogEntry{
			Action: ActionApply, Parent: active, Result: n, Proposal: p.ID, Change: describeChanges(changes),
			Decision: p.Decision, Evidence: flaggedLines(p.Evidence), Ledger: ledgerKeys(p), EvidenceThrough: p.EvidenceThrough,
			SuiteLossBefore: Loss(p.SuiteLossBefore), SuiteLossAfter: Loss(p.SuiteLossAfter), Reason: w.Reason,
		}
		var writes []pendingWrite
		for _, h := range harvest {
			if _, err := os.Stat(h.Path); err == nil {
				continue // harvested by an earlier proposal (or written by hand): never overwrite a fixture
			}
			// the marker and the log name fixtures relative to the fixtures directory, so they do not depend
			// on where the repository is checked out (and a marker never names an absolute path)
			rel := filepath.ToSlash(filepath.Join(HarvestDir, filepath.Base(h.Path)))
			writes = append(writes, pendingWrite{Step: "fixture:" + filepath.Base(h.Path), Root: RootFixtures, Path: rel, Content: string(h.Content)})
			entry.Harvested = append(entry.Harvested, rel)
			entry.HarvestedSHA256 = append(entry.HarvestedSHA256, fileSHA(h.Content))
		}
		o, err := s.writeVersion(st, ActionApply, w, entry, writes)
		if err != nil {
			return err
		}
		out = o
		return nil
	})
	return out, err
}

func (st *state) appliedEntry(id string) *LogEntry {
	for i := range st.lines {
		if e := &st.lines[i].Entry; st.lines[i].OK && e.Action == ActionApply && e.Proposal == id {
			return e
		}
	}
	return nil
}

func proposalEvidence(p *Proposal) string {
	return fmt.Sprintf("proposal %s (%s): %d flagged task(s); suite loss %.3f -> %.3f",
		p.ID, p.Decision, len(p.Evidence), p.SuiteLossBefore, p.SuiteLossAfter)
}

func flaggedLines(ts []FlaggedTask) []string {
	var out []string
	for _, t := range ts {
		kinds := strings.Join(t.Evidence, ",")
		out = append(out, strings.TrimSpace(fmt.Sprintf("%s %s %s %q [%s]", t.Source, t.MetaTimestamp, t.Level, t.Title, kinds)))
	}
	return out
}

// Rollback writes a new version whose content equals version to (0: the parent of the active version)
// and makes it active. Nothing is deleted: history only grows (git-revert semantics).
func (s *Store) Rollback(to int) (*Outcome, error) {
	var out *Outcome
	err := s.mutate(func(st *state) error {
		if err := st.requireClean(); err != nil {
			return err
		}
		active := st.active()
		activeW, err := st.loadVersion(active)
		if err != nil {
			return err
		}
		target := to
		if target == 0 {
			if activeW.Parent == 0 {
				return fmt.Errorf("%w: the active version %s has no parent to roll back to (use --to vN)", ErrNothingToDo, weights.VersionName(active))
			}
			target = activeW.Parent
		}
		if target == active {
			return fmt.Errorf("%w: %s is already the active version", ErrNothingToDo, weights.VersionName(target))
		}
		targetW, err := st.loadVersion(target)
		if err != nil {
			return err
		}
		changes := Changes(&activeW, &targetW)
		if len(changes) == 0 {
			return fmt.Errorf("%w: %s holds the same weights as the active version %s", ErrNothingToDo, weights.VersionName(target), weights.VersionName(active))
		}
		if err := s.bootstrap(st); err != nil {
			return err
		}
		n := st.nextVersion()
		w := targetW
		w.Version, w.Parent, w.Created = n, active, s.Now().UTC()
		w.Reason = "rollback to " + weights.VersionName(target)
		w.Evidence = fmt.Sprintf("restores the content of %s; undoes %s (%s)", weights.VersionName(target), weights.VersionName(active), activeW.Reason)
		entry := LogEntry{
			Action: ActionRollback, Parent: active, Result: n, Restores: target, Change: describeChanges(changes),
			Reason: w.Reason,
		}
		o, err := s.writeVersion(st, ActionRollback, w, entry, nil)
		if err != nil {
			return err
		}
		out = o
		return nil
	})
	return out, err
}

// writeVersion is the multi-step write shared by apply and rollback: marker, version file, fixtures,
// sum, log line, marker removed — each atomic, each followed by a crash-hook step.
func (s *Store) writeVersion(st *state, action string, w weights.Weights, entry LogEntry, extra []pendingWrite) (*Outcome, error) {
	name := weights.VersionName(w.Version) + ".toml"
	if _, err := os.Stat(s.path(name)); err == nil {
		return nil, fmt.Errorf("%s already exists; refusing to overwrite a version", s.path(name))
	}
	data := w.Marshal()
	if _, err := weights.Parse(name, data); err != nil {
		return nil, fmt.Errorf("internal error: the new version does not parse: %w", err)
	}
	entry.ResultSHA256 = fileSHA(data)
	files := append(append([]versionFile(nil), st.files...), versionFile{Version: w.Version, Name: name, Data: data, SHA: entry.ResultSHA256})
	line := s.buildLine(st, entry)
	serial, lineage := st.head()
	op := &pendingOp{
		Op: action, Serial: serial + 1, Lineage: lineage, Started: s.Now().UTC(),
		Writes:  append([]pendingWrite{{Step: "version", Path: name, Content: string(data)}}, extra...),
		PrevSum: string(st.sumData), NewSum: string(marshalSum(sumOf(files))), Entry: string(line),
	}
	if err := s.runOp(st, op); err != nil {
		return nil, err
	}
	var e LogEntry
	if err := json.Unmarshal(line, &e); err != nil {
		return nil, err
	}
	out := &Outcome{Weights: w, Entry: e}
	for _, x := range extra {
		out.Harvested = append(out.Harvested, filepath.Join(s.FixturesDir, HarvestDir, filepath.Base(x.Path)))
	}
	return out, nil
}

func (s *Store) runOp(st *state, op *pendingOp) error {
	marker, err := encodeIndented(op)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(s.path(PendingFile), marker); err != nil {
		return err
	}
	faultpoint.Reach(faultpoint.Step, "pending")
	return s.finishOp(st, op, true)
}

// finishOp performs (or, for repair, completes) every write of op after the marker: each file that is not
// there yet, the sum, the log line unless it is already the head, then removes the marker (repair removes
// it itself, after logging).
func (s *Store) finishOp(st *state, op *pendingOp, removeMarker bool) error {
	for _, w := range op.Writes {
		p, err := s.resolveWrite(w)
		if err != nil {
			return err
		}
		existing, err := regular.ReadLimitedNoFollow(p, regular.FixtureFile) // a version file or a harvested fixture
		switch {
		case err == nil && string(existing) == w.Content:
			// already written before the interruption
		case err == nil:
			return fmt.Errorf("%s exists with other content than the interrupted %s wrote; refusing to overwrite it (inspect it, then `tune repair --abort`)", p, op.Op)
		case errors.Is(err, fs.ErrNotExist):
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := writeFileAtomic(p, []byte(w.Content)); err != nil {
				return err
			}
			faultpoint.Reach(faultpoint.Step, w.Step)
		default:
			return err
		}
	}
	if err := writeFileAtomic(s.path(SumFile), []byte(op.NewSum)); err != nil {
		return err
	}
	faultpoint.Reach(faultpoint.Step, "sum")
	if !st.headIs(op.Entry) {
		if err := s.writeLog(st, []byte(op.Entry)); err != nil {
			return err
		}
		faultpoint.Reach(faultpoint.Step, "log")
	}
	if !removeMarker {
		return nil
	}
	if err := s.remove(s.path(PendingFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := syncDir(s.Dir); err != nil {
		return err
	}
	faultpoint.Reach(faultpoint.Step, "done")
	return nil
}

func (st *state) headIs(line string) bool {
	n := len(st.lines)
	return n > 0 && string(st.lines[n-1].Raw) == line
}

// Propose records the result of an evolution step: first every attempt entry of proposal p, in one atomic
// append, each with the proposal's id and content hash; then the proposal file. Log first, so that a crash
// never leaves a proposal the log does not explain (the next run writes the same proposal again: its id
// is a hash of its content), and in one append, so that no crash keeps some attempts and loses others.
// A re-run on the same inputs adds nothing (the log already holds attempts of p) and returns the stored
// proposal with its created time. It refuses, writing nothing, on a store that does not verify.
//
// input, when not nil, encodes the proposal's report input from the stored proposal; it is saved beside
// it (proposals/inputs/<id>.toml, InputPath) under the store lock (no other writer's clean-up of temp
// files left by killed writes can remove it mid-write), before the attempts, which log its sha256
// (input_sha256), so that an edited input is found (Verify, LoggedInputSHA256, verify --base) instead of
// rendered. It is written once (saveInput): the saved input stays the one the logged attempts were
// decided with.
func (s *Store) Propose(p *Proposal, attempts []LogEntry, input func(stored *Proposal) ([]byte, error)) (stored *Proposal, path string, created bool, err error) {
	if !validDecision(p.Decision) {
		return nil, "", false, fmt.Errorf("proposal decision %q: want accept, halve, revert or none", p.Decision)
	}
	p.redactText() // before its id is computed: the id and the logged hash are of what is written
	for _, a := range attempts {
		switch a.Action {
		case ActionProposeAttempt, ActionAccept, ActionHalve, ActionRevert:
		default:
			return nil, "", false, fmt.Errorf("Store.Propose: action %q is not an evolution attempt", a.Action)
		}
	}
	sha := p.ContentSHA256() // one encoding for the id and the logged hash: a year's evidence is megabytes
	p.ID = idOf(sha)
	err = s.mutate(func(st *state) error {
		if err := st.requireClean(); err != nil {
			return err
		}
		if err := s.bootstrap(st); err != nil {
			return err
		}
		// A re-run's input is encoded from the proposal as it was first written (its created time).
		stored = p
		existing := filepath.Join(s.ProposalsPath(), p.ID+".json")
		if _, err := os.Lstat(existing); err == nil {
			if stored, err = ReadProposal(existing); err != nil {
				return err
			}
		}
		var inputSHA string
		if input != nil {
			data, err := input(stored)
			if err != nil {
				return err
			}
			inputSHA = fileSHA(data)
			if err := s.saveInput(st, p.ID, data, inputSHA); err != nil {
				return err
			}
		}
		if logged, _ := st.loggedAttempts(p.ID); !logged && len(attempts) > 0 {
			var lines [][]byte
			for _, a := range attempts {
				if a.Parent == 0 {
					a.Parent = p.Parent
				}
				a.Proposal, a.ProposalSHA256, a.InputSHA256 = p.ID, sha, inputSHA
				a.Serial, a.Lineage, a.PrevHash, a.Time = 0, "", "", time.Time{}
				line := s.buildLine(st, a)
				lines = append(lines, line)
				// the next line chains on this one
				st.lines = append(st.lines, logLine{No: len(st.lines) + 1, Raw: line, OK: true})
				if err := json.Unmarshal(line, &st.lines[len(st.lines)-1].Entry); err != nil {
					return err
				}
			}
			st.lines = st.lines[:len(st.lines)-len(lines)]
			if err := s.writeLog(st, lines...); err != nil {
				return err
			}
			faultpoint.Reach(faultpoint.Step, "attempts")
		}
		path, created, err = writeProposal(s.ProposalsPath(), p, sha)
		if err != nil {
			return err
		}
		faultpoint.Reach(faultpoint.Step, "proposal")
		return nil
	})
	return stored, path, created, err
}

// saveInput writes the report input data (its sha256 inputSHA) of proposal id, before the attempts
// that log its hash, and only once: a proposal whose attempts are logged keeps the input it has. So a
// kill between the log and the proposal (the re-run writes the proposal again, with a new created time,
// so its input encodes otherwise) leaves the logged input in place, a kill before the log leaves an
// input the re-run replaces, and a saved input never changes under verify --base's eyes. A logged
// proposal's missing input is written again when it is the logged one (or none is logged: a proposal
// from before inputs were hashed).
func (s *Store) saveInput(st *state, id string, data []byte, inputSHA string) error {
	path := s.InputPath(id)
	if logged, recorded := st.loggedAttempts(id); logged {
		if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
			return nil // there (or not a regular file: Verify names it), and written once
		}
		if recorded != "" && recorded != inputSHA {
			return nil // the logged input cannot be made again: the report falls back, and says so
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writeFileAtomic(path, data)
}

// InputPath is where the report input of proposal id is saved: beside the proposal, under
// proposals/inputs/ (the proposals' own *.json glob does not see it).
func (s *Store) InputPath(id string) string {
	return filepath.Join(s.Dir, ProposalsDir, InputsDir, id+".toml")
}

// LoggedInputSHA256 is the sha256 of proposal id's report input as the log records it ("" when it does
// not: a proposal from before inputs were hashed).
func (s *Store) LoggedInputSHA256(id string) (string, error) {
	st, err := s.reads.load(s.Dir, true)
	if err != nil {
		return "", err
	}
	_, sha := st.loggedAttempts(id)
	return sha, nil
}

// loggedAttempts reports whether the log holds attempts of proposal id, and the sha256 of the report
// input logged with them ("" when none is: attempts from before inputs were hashed, or a watch's
// rollback, which saves no input). A run's attempts are appended at once (Propose), so the first says it
// for all.
func (st *state) loggedAttempts(id string) (logged bool, inputSHA string) {
	for _, l := range st.lines {
		switch l.Entry.Action {
		case ActionProposeAttempt, ActionAccept, ActionHalve, ActionRevert:
			if l.OK && l.Entry.Proposal == id {
				return true, l.Entry.InputSHA256
			}
		}
	}
	return false, ""
}

// Log appends an evolution attempt (propose-attempt, accept, halve, revert) to the log. The store fills
// serial, lineage, time and prev_hash; Parent defaults to the active version. It refuses when the log moved
// since Open (another run wrote to it) or the store does not verify.
func (s *Store) Log(entry LogEntry) error {
	switch entry.Action {
	case ActionProposeAttempt, ActionAccept, ActionHalve, ActionRevert:
	default:
		return fmt.Errorf("Store.Log: action %q is not an evolution attempt (want propose-attempt, accept, halve or revert; versions are written by Apply and Rollback)", entry.Action)
	}
	return s.mutate(func(st *state) error {
		if err := st.requireClean(); err != nil {
			return err
		}
		if err := s.bootstrap(st); err != nil {
			return err
		}
		if entry.Parent == 0 {
			entry.Parent = st.active()
		}
		entry.Serial, entry.Lineage, entry.PrevHash, entry.Time = 0, "", "", time.Time{}
		if _, err := s.appendLine(st, entry); err != nil {
			return err
		}
		faultpoint.Reach(faultpoint.Step, "log")
		return nil
	})
}
