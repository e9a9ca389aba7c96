package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/weights"
)

// Names of the store's bookkeeping files inside the weights directory.
const (
	LockFile    = ".lock"
	PendingFile = ".pending.json"
	// NightlyLockFile keeps two nightly runs apart (tune nightly takes it; app.NightlyLockName).
	NightlyLockFile = ".nightly.lock"
)

// ErrNothingToDo means the request was valid but changes nothing (exit 0 in the CLI).
var ErrNothingToDo = errors.New("nothing to do")

// StaleError refuses a writer whose view of the store is out of date (Terraform-style serial and lineage).
type StaleError struct {
	Dir                          string
	ExpectedSerial, HeadSerial   int
	ExpectedLineage, HeadLineage string
}

func (e *StaleError) Error() string {
	if e.ExpectedLineage != "" && e.HeadLineage != e.ExpectedLineage {
		return fmt.Sprintf("%s: refusing to write: the evolution log has lineage %s, this run expected %s (an unrelated store was put in its place)",
			e.Dir, e.HeadLineage, e.ExpectedLineage)
	}
	return fmt.Sprintf("%s: refusing to write: this run expected the evolution log at serial %d, but it is at serial %d (another tune run changed the store meanwhile); re-run to work from the new state",
		e.Dir, e.ExpectedSerial, e.HeadSerial)
}

// DefaultLockTimeout is how long a writer waits for another writer's lock before giving up.
const DefaultLockTimeout = 10 * time.Second

// Store is the weights store in Dir. Open records the log head (serial, lineage); every mutation checks,
// under the lock, that the head has not moved since, and refuses otherwise.
type Store struct {
	Dir string
	Now func() time.Time
	// Reference is the reference v0001.toml the binary carries. When set, a store without a log whose
	// v0001.toml differs from it does not verify, so no write signs the edit unnoticed; nil skips the check.
	Reference []byte
	// FixturesDir is where Apply harvests flagged tasks (under harvested/); "" disables harvesting.
	FixturesDir string
	// ReportsDir is where reports are written: Verify reports the temp files of killed report writes
	// there and Repair removes them (see outside.go); "" leaves it alone.
	ReportsDir string
	// LockTimeout bounds the wait for weights/.lock (DefaultLockTimeout when zero).
	LockTimeout time.Duration
	// removedTemps: see RemovedTemps.
	removedTemps []string

	serial  int
	lineage string
	// versions memoises Version: `tune detect` resolves a version per task. A mutation through this Store
	// clears it; a change by another process while this one runs is caught by the lock and serial checks
	// on write, and by Verify.
	versions map[int]weights.Weights
	// reads, when set, is the read the Stores of one run share (OpenSharing).
	reads *SharedReads
}

// Open opens the store in dir. dir must hold at least one version file.
func Open(dir string, now func() time.Time) (*Store, error) {
	return OpenSharing(dir, now, nil)
}

// OpenSharing is Open for one of the Stores of a run that share reads (nil: Open). Every read of such a
// Store is the same as a fresh one; see SharedReads.
func OpenSharing(dir string, now func() time.Time, reads *SharedReads) (*Store, error) {
	st, err := reads.load(dir, false)
	if err != nil {
		return nil, err
	}
	s := opened(dir, now, st)
	s.reads = reads
	return s, nil
}

// OpenActive is Open followed by Active with the store read once, not twice: `tune score` needs the
// active weights and nothing else, once per task (docs/decisions.md#score-start-up). The Store is nil
// when Open would have failed, with Open's error; otherwise an error is the one Active would return.
func OpenActive(dir string, now func() time.Time) (*Store, weights.Weights, error) {
	var st *state
	var err, readErr error
	quietly(dir, func() {
		if st, err = readState(dir); err == nil {
			readErr = st.readable()
		}
	})
	if err != nil {
		return nil, weights.Weights{}, err
	}
	s := opened(dir, now, st)
	if readErr != nil {
		return s, weights.Weights{}, readErr
	}
	w, err := st.loadVersion(st.active())
	return s, w, err
}

// opened is the Store of dir as st read it.
func opened(dir string, now func() time.Time, st *state) *Store {
	if now == nil {
		now = func() time.Time { return time.Now().UTC() }
	}
	s := &Store{Dir: dir, Now: now, LockTimeout: DefaultLockTimeout}
	s.serial, s.lineage = st.head()
	return s
}

// Head returns the serial and lineage this Store expects to find at the head of the log (0, "" when the
// store has no log yet).
func (s *Store) Head() (serial int, lineage string) { return s.serial, s.lineage }

// Expect sets the serial a later mutation must find (e.g. from `tune apply --expect-serial`).
func (s *Store) Expect(serial int) { s.serial = serial }

// versionFile is one vNNNN.toml as read from disk.
type versionFile struct {
	Version int
	Name    string
	Data    []byte
	SHA     string
}

// state is everything the store reads from disk, read in one go.
type state struct {
	dir         string
	files       []versionFile // in version order
	logExists   bool
	lines       []logLine
	logBad      []Problem
	logComplete bool
	sumExists   bool
	sumData     []byte
	headExists  bool
	headData    []byte
	pendingData []byte // nil when there is no marker
	// notRegular lists store files that exist but are not regular files (a link, a FIFO, a device).
	notRegular []Problem
	// stale lists temp files left by killed writes, relative to the store.
	stale []string
	// reference is Store.Reference, for verifyUnsignedReference.
	reference []byte
}

// NoStoreError is the one wording of "there is no weights store here", for every command.
func NoStoreError(dir string) error {
	return fmt.Errorf("no weights store at %s: run tune init to start a project, or point --weights-dir or TUNE_WEIGHTS_DIR at a directory holding v0001.toml", dir)
}

// loadState reads the store as one consistent snapshot: see quietly.
func loadState(dir string) (st *state, err error) {
	quietly(dir, func() { st, err = readState(dir) })
	return st, err
}

// readState reads the store's files once.
func readState(dir string) (*state, error) {
	// The store is read only as a real directory, as it is written: a pull request can make weights/ a
	// link to another project's store, which the readers (score, history, weights show, diff) followed
	// while verify and every writer refused it (the first review of the set-up commands).
	if err := regular.RealDirs(dir); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, NoStoreError(dir)
		}
		return nil, err
	}
	st := &state{dir: dir}
	// Every store file is read only when it is a regular file and not a symbolic link: a FIFO would hang
	// the reader, a device would never end, and a link could swap in content from outside the store
	// (docs/decisions.md#store-integrity-and-hostile-inputs-issue-18).
	// Each is read within its size limit, so a huge file cannot take the reader's memory
	// (docs/decisions.md#hostile-files-issue-25).
	read := func(name string) ([]byte, bool, error) {
		data, err := regular.ReadLimitedNoFollow(filepath.Join(dir, name), storeLimit(name))
		var re *regular.Error
		var big *regular.TooLargeError
		switch {
		case err == nil:
			return data, true, nil
		case errors.Is(err, fs.ErrNotExist):
			return nil, false, nil
		case errors.As(err, &re):
			st.notRegular = append(st.notRegular, Problem{Kind: ProblemNotRegular, File: name,
				Message: fmt.Sprintf("is %s; the store holds only regular files (replace it with the file from version control)", re.What)})
			return nil, false, nil
		case errors.As(err, &big):
			st.notRegular = append(st.notRegular, Problem{Kind: ProblemTooLarge, File: name,
				Message: fmt.Sprintf("holds %d bytes, more than %s may (%d): not read; replace it with the file from version control", big.Size, big.Limit.Kind, big.Limit.Bytes)})
			return nil, false, nil
		}
		return nil, false, err
	}
	for _, e := range entries {
		name := e.Name()
		if isTemp(name) {
			st.stale = append(st.stale, name)
			continue
		}
		v, ok := VersionFileName(name)
		if !ok {
			continue
		}
		data, ok, err := read(name)
		if err != nil {
			return nil, err
		}
		if ok {
			st.files = append(st.files, versionFile{Version: v, Name: name, Data: data, SHA: fileSHA(data)})
		}
	}
	if len(st.files) == 0 && len(st.notRegular) == 0 {
		return nil, fmt.Errorf("%s: %w", dir, weights.ErrNoVersions)
	}
	// Proposals and their saved report inputs are written beside the store; a write killed there leaves
	// a temp file too (found by the subprocess kill test, docs/decisions.md#crash-injection-in-a-real-process).
	for _, sub := range []string{ProposalsDir, path.Join(ProposalsDir, InputsDir)} {
		if pe, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(sub))); err == nil {
			for _, e := range pe {
				if isTemp(e.Name()) {
					st.stale = append(st.stale, path.Join(sub, e.Name()))
				}
			}
		}
	}
	sort.Slice(st.files, func(i, j int) bool { return st.files[i].Version < st.files[j].Version })
	if data, ok, err := read(LogFile); err != nil {
		return nil, err
	} else if ok {
		st.logExists = true
		st.lines, st.logBad, st.logComplete = parseLog(data)
	}
	if data, ok, err := read(SumFile); err != nil {
		return nil, err
	} else if ok {
		st.sumExists, st.sumData = true, data
	}
	if data, ok, err := read(HeadFile); err != nil {
		return nil, err
	} else if ok {
		st.headExists, st.headData = true, data
	}
	if data, ok, err := read(PendingFile); err != nil {
		return nil, err
	} else if ok {
		st.pendingData = data
	}
	return st, nil
}

// storeLimit is the size limit of the store file name.
func storeLimit(name string) regular.Limit {
	switch {
	case name == LogFile:
		return regular.StoreLog
	case strings.HasSuffix(name, ".toml"):
		return regular.WeightsFile
	}
	return regular.StoreSmall
}

// VersionFileName parses "v0002.toml" (the canonical name of a version; "v2.toml" is not one).
func VersionFileName(name string) (int, bool) {
	base, ok := strings.CutSuffix(name, ".toml")
	if !ok || !strings.HasPrefix(base, "v") {
		return 0, false
	}
	v, err := weights.ParseVersionName(base)
	if err != nil || weights.VersionName(v) != base {
		return 0, false
	}
	return v, true
}

// isTemp reports whether name is a temp file of writeFileAtomic (".<name>.tmp-<random>"): one left behind
// is the trace of a write that was killed before its rename.
func isTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")
}

// head is the serial and lineage of the last parsed log line.
func (st *state) head() (int, string) {
	for i := len(st.lines) - 1; i >= 0; i-- {
		if st.lines[i].OK {
			return st.lines[i].Entry.Serial, st.lines[i].Entry.Lineage
		}
	}
	return 0, ""
}

func (st *state) file(v int) *versionFile {
	for i := range st.files {
		if st.files[i].Version == v {
			return &st.files[i]
		}
	}
	return nil
}

func (st *state) highest() int {
	if len(st.files) == 0 {
		return 0
	}
	return st.files[len(st.files)-1].Version
}

// nextVersion is one above every version on disk or in the log, so a number is never reused.
func (st *state) nextVersion() int {
	n := st.highest()
	for _, l := range st.lines {
		if l.OK && l.Entry.Result > n {
			n = l.Entry.Result
		}
	}
	return n + 1
}

// changesActive reports whether an action moves the active version.
func changesActive(action string) bool {
	return action == ActionInit || action == ActionApply || action == ActionRollback
}

// active is the version named by the last init/apply/rollback entry; without one, the highest version.
func (st *state) active() int {
	for i := len(st.lines) - 1; i >= 0; i-- {
		if e := st.lines[i].Entry; st.lines[i].OK && changesActive(e.Action) && e.Result > 0 {
			return e.Result
		}
	}
	return st.highest()
}

// loadVersion parses version v from the state, checking that its content still matches the log.
func (st *state) loadVersion(v int) (weights.Weights, error) {
	f := st.file(v)
	if f == nil {
		return weights.Weights{}, fmt.Errorf("%s: %s does not exist (versions: %s)", st.dir, weights.VersionName(v)+".toml", st.versionList())
	}
	w, err := weights.Parse(filepath.Join(st.dir, f.Name), f.Data)
	if err != nil {
		return weights.Weights{}, err
	}
	if want, line := st.loggedSHA(f.Name); want != "" && want != f.SHA {
		return weights.Weights{}, fmt.Errorf("%s: edited after it was written (sha256 differs from %s line %d); run tune verify",
			filepath.Join(st.dir, f.Name), LogFile, line)
	}
	return w, nil
}

func (st *state) versionList() string {
	var names []string
	for _, f := range st.files {
		names = append(names, strings.TrimSuffix(f.Name, ".toml"))
	}
	return strings.Join(names, ", ")
}

// loggedSHA is the latest sha256 the log records for a version file, and the line that records it.
func (st *state) loggedSHA(name string) (sha string, line int) {
	for _, l := range st.lines {
		if !l.OK {
			continue
		}
		e := l.Entry
		if e.Result > 0 && e.ResultSHA256 != "" && weights.VersionName(e.Result)+".toml" == name {
			sha, line = e.ResultSHA256, l.No
		}
		for _, fh := range e.Files {
			if fh.File == name {
				sha, line = fh.SHA256, l.No
			}
		}
	}
	return sha, line
}

// IntegrityError is what a reader of weights gets from a store that does not verify: it refuses (exit 1)
// rather than score with weights nobody can vouch for (docs/decisions.md#store-integrity-and-hostile-inputs-issue-18).
type IntegrityError struct {
	Dir      string
	Problems []Problem
}

func (e *IntegrityError) Error() string {
	more := ""
	if len(e.Problems) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(e.Problems)-1)
	}
	return fmt.Sprintf("weights store %s does not verify: %s%s; run `tune verify`", e.Dir, e.Problems[0], more)
}

// readable is the check every reader of weights runs before it uses a version: the hash chain, the anchor
// of its end, the sum file and every file's checksum against the log — all hashing, no parsing, so it
// costs about as much as reading the files (docs/decisions.md#store-integrity-and-hostile-inputs-issue-18 has the numbers). What an
// interrupted operation explains (its marker, the version it wrote but did not commit) and left-over temp
// files do not stop a reader: the log still says which version is active.
func (st *state) readable() error {
	var pl problemList
	st.verifyIntegrity(&pl)
	st.verifyMeaning(&pl, true) // the active version's own entry (docs/decisions.md#hostile-files-issue-25)
	pending := st.pendingNames()
	var bad []Problem
	for _, p := range pl.list {
		switch {
		case p.Kind == ProblemPending, p.Kind == ProblemStale:
		case p.Kind == ProblemExtra && pending[p.File]:
		default:
			bad = append(bad, p)
		}
	}
	if len(bad) > 0 {
		return &IntegrityError{Dir: st.dir, Problems: bad}
	}
	return nil
}

// pendingNames are the store files the pending marker says its operation writes (none without a marker).
func (st *state) pendingNames() map[string]bool {
	out := map[string]bool{}
	if st.pendingData == nil {
		return out
	}
	if op, err := parsePending(st.pendingData); err == nil {
		for _, w := range op.Writes {
			out[filepath.Base(w.Path)] = true
		}
	}
	return out
}

// loadReadable reads the store for a reader: it refuses one that does not pass readable.
func loadReadable(dir string) (st *state, err error) {
	quietly(dir, func() {
		if st, err = readState(dir); err == nil {
			err = st.readable()
		}
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// Active returns the active weights: the result of the last apply or rollback in the log, else the highest
// version. It refuses a store that does not verify (see readable).
func (s *Store) Active() (weights.Weights, error) {
	st, err := s.reads.load(s.Dir, true)
	if err != nil {
		return weights.Weights{}, err
	}
	return st.loadVersion(st.active())
}

// Version returns version v (it refuses a file edited since the log recorded it).
func (s *Store) Version(v int) (weights.Weights, error) {
	if w, ok := s.versions[v]; ok {
		return w, nil
	}
	st, err := s.reads.load(s.Dir, true)
	if err != nil {
		return weights.Weights{}, err
	}
	w, err := st.loadVersion(v)
	if err != nil {
		return w, err
	}
	if s.versions == nil {
		s.versions = map[int]weights.Weights{}
	}
	s.versions[v] = w
	return w, nil
}

// ActiveVersion returns the number of the active version.
func (s *Store) ActiveVersion() (int, error) {
	st, err := s.reads.load(s.Dir, true)
	if err != nil {
		return 0, err
	}
	return st.active(), nil
}

// LoggedActive is the version the log names active, without checking the store: for `tune verify`, which
// reports it next to the problems. Everything that uses weights goes through Active or Version.
func (s *Store) LoggedActive() (int, error) {
	st, err := s.reads.load(s.Dir, false)
	if err != nil {
		return 0, err
	}
	return st.active(), nil
}

// Entries returns the parsed log entries in order (nil when the store has no log yet).
func (s *Store) Entries() ([]LogEntry, error) {
	st, err := s.reads.load(s.Dir, false)
	if err != nil {
		return nil, err
	}
	var out []LogEntry
	for _, l := range st.lines {
		if l.OK {
			// the caller's own: a shared read's state is every Store's of the run (eighth review,
			// docs/decisions.md#eighth-review-store-reads-by-content)
			out = append(out, l.Entry.clone())
		}
	}
	return out, nil
}

// Versions lists the version numbers on disk in order.
func (s *Store) Versions() ([]int, error) {
	st, err := s.reads.load(s.Dir, false)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(st.files))
	for i, f := range st.files {
		out[i] = f.Version
	}
	return out, nil
}
