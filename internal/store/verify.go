package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/weights"
)

// Problem kinds reported by Verify.
const (
	ProblemPending = "pending" // an interrupted operation left its marker
	// ProblemForged: the marker does not describe an operation tune started; repair refuses it.
	ProblemForged  = "forged"
	ProblemInvalid = "invalid" // a version file does not parse or names the wrong version
	ProblemEdited  = "edited"  // a version file differs from its recorded checksum
	ProblemMissing = "missing" // a recorded version file (or the sum file) is gone
	ProblemExtra   = "extra"   // a version file nobody recorded
	ProblemSum     = "sum"     // weights.sum is malformed or was edited
	ProblemChain   = "chain"   // prev_hash does not match the previous line
	ProblemSerial  = "serial"  // serial does not go up by one
	ProblemLineage = "lineage" // lineage changed within the log
	ProblemLog     = "log"     // a log line does not parse, or contradicts the log before it
	ProblemHead    = "head"    // evolution.head does not match the end of the log (lines removed or added)
	// ProblemNotRegular: a store file is a symbolic link, a FIFO, a device or a socket.
	ProblemNotRegular = "not-regular"
	// ProblemTooLarge: a store file is larger than its kind may be (regular.Limit); it is not read.
	ProblemTooLarge = "too-large"
	// ProblemStale: a temp file left by a write that was killed before its rename; the next write (or
	// `tune repair`) removes it.
	ProblemStale = "stale"
)

// Problem is one finding of Verify. File is relative to the store directory (a temp file under the
// reports directory is named by its path); Line is 1-based, 0 when the problem is about the whole file.
type Problem struct {
	Kind    string `json:"kind"`
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// ProblemOf is the problem kind of file, from err of a reader that prefixed its message with name
// ("name: …", "name:LINE: …"): the line goes to Line, and the name is not repeated in the message; a
// TOML syntax error's "toml: line N" gives the line too.
func ProblemOf(kind, file, name string, err error) Problem {
	p := Problem{Kind: kind, File: file}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, name+":"); ok {
		msg = strings.TrimSpace(rest)
		if n, after, ok := strings.Cut(rest, ":"); ok {
			if line, err := strconv.Atoi(n); err == nil && line > 0 {
				p.Line, msg = line, strings.TrimSpace(after)
			}
		}
	}
	if p.Line == 0 {
		if _, after, ok := strings.Cut(msg, "toml: line "); ok {
			p.Line, _ = strconv.Atoi(after[:len(after)-len(strings.TrimLeft(after, "0123456789"))])
		}
	}
	p.Message = msg
	return p
}

func (p Problem) String() string {
	loc := p.File
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s: %s: %s", loc, p.Kind, p.Message)
}

// Verify checks the whole store and returns every problem found (nil when intact): the pending marker,
// every version file against weights.sum and against the checksums in the log, the sum file's own header,
// the log's hash chain, serial continuity and lineage.
//
// A writer running meanwhile makes it look again (quietly): it reports only what a quiet store shows.
func (s *Store) Verify() (problems []Problem) {
	// a problem while another process holds the lock may be its operation half done: look again once it
	// has finished (the marker of a killed writer stays after its lock is gone, and is reported then)
	quietlyUnless(s.Dir, func() { problems = s.verifyOnce() }, func() bool {
		return len(problems) > 0 && regular.Held(s.path(LockFile))
	})
	return problems
}

// verifyOnce is one pass of Verify.
func (s *Store) verifyOnce() []Problem {
	st, err := readState(s.Dir)
	if err != nil {
		return []Problem{{Kind: ProblemMissing, File: ".", Message: err.Error()}}
	}
	st.reference = s.Reference
	problems := st.verify()
	s.judgePending(st, problems)
	problems = append(problems, s.dirProblems()...)
	problems = append(problems, s.inputProblems(st)...)
	problems = append(problems, s.proposalProblems(st)...)
	return withoutMissingLinks(append(problems, s.staleOutsideProblems()...))
}

// withoutMissingLinks drops the "missing" problem of a file that is there as a link or a FIFO: the store
// reads neither, so it also found the file missing, and said the same thing twice, the second time
// wrongly ("not on disk": the first review of the set-up commands).
func withoutMissingLinks(problems []Problem) []Problem {
	there := map[string]bool{}
	for _, p := range problems {
		if p.Kind == ProblemNotRegular {
			there[p.File] = true
		}
	}
	return slices.DeleteFunc(problems, func(p Problem) bool { return p.Kind == ProblemMissing && there[p.File] })
}

// proposalProblems reports each proposal not applied yet that is no longer the file tune wrote: its id
// does not match its content, its content differs from the hash logged with its decisions, or it does
// not parse. tune nightly, apply and diff refuse such a file, so a pull request that edits one must not
// pass verify --base (the first review of the set-up commands: a candidate weight edited by hand passed
// verify, then every nightly failed). An applied proposal is judged with its apply (proposalMeaning); a
// link, a device, a copy under another name or a file whose head does not decode is dirProblems' finding.
func (s *Store) proposalProblems(st *state) []Problem {
	entries, err := os.ReadDir(s.ProposalsPath())
	if err != nil {
		return nil
	}
	var out []Problem
	for _, e := range entries {
		named, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() || strings.HasPrefix(named, ".") || st.appliedEntry(named) != nil {
			continue
		}
		name := path.Join(ProposalsDir, e.Name())
		abs := filepath.Join(s.ProposalsPath(), e.Name())
		data, err := regular.ReadLimitedNoFollow(abs, regular.ProposalFile)
		if err != nil {
			continue // not regular, too large or unreadable: dirProblems' finding
		}
		var h proposalHead
		if json.Unmarshal(data, &h) != nil || (h.ID != "" && h.ID != named) {
			continue // not a proposal, or one under another name: dirProblems' finding
		}
		f, err := proposalFactsOf(abs, data, decidedSHA(st.loggedDecisions(named)))
		if err == nil {
			id := idOf(f.contentSHA)
			if st.appliedEntry(id) != nil {
				continue // a file without its id whose content was applied: judged with its apply
			}
			if id != named && ValidProposalID(named) {
				err = fmt.Errorf("its content is proposal %s's, not %s's (no id in the file): it was written or edited by hand", id, named)
			} else if d := decidedOtherwise(st.loggedDecisions(id), f.contentSHA); d != nil {
				err = fmt.Errorf("its content hash %s differs from the %s recorded with its %s decision (serial %d): the file was edited after it was decided", short(f.contentSHA), short(d.ProposalSHA256), d.Action, d.Serial)
			}
		}
		if err != nil {
			msg := strings.TrimPrefix(err.Error(), abs+": ")
			if !strings.HasSuffix(msg, restoreProposal) {
				msg += "; tune nightly, apply and diff refuse it: " + restoreProposal
			}
			out = append(out, Problem{Kind: ProblemEdited, File: name, Message: msg})
		}
	}
	return out
}

// inputProblems reports each saved report input whose content differs from the sha256 logged with its
// proposal's attempts: tune report proposal leaves it out (it renders from the proposal file), and a
// pull request that edits one must not pass verify --base. An input of a proposal logged before inputs
// were hashed has nothing to be checked against; a link or a device there is dirProblems' finding.
func (s *Store) inputProblems(st *state) []Problem {
	dir := filepath.Join(s.Dir, ProposalsDir, InputsDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Problem
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".toml")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		_, logged := st.loggedAttempts(id)
		if logged == "" {
			continue
		}
		name := path.Join(ProposalsDir, InputsDir, e.Name())
		data, err := regular.ReadLimitedNoFollow(filepath.Join(dir, e.Name()), regular.ProposalInput)
		var tooLarge *regular.TooLargeError
		switch {
		case errors.As(err, &tooLarge):
			out = append(out, Problem{Kind: ProblemTooLarge, File: name, Message: err.Error()})
		case err != nil:
			out = append(out, Problem{Kind: ProblemInvalid, File: name, Message: err.Error()})
		case fileSHA(data) != logged:
			out = append(out, Problem{Kind: ProblemEdited, File: name, Message: fmt.Sprintf("content differs from the sha256 %s records with proposal %s's attempts (edited after it was written): tune report proposal leaves it out; undo the edit, or remove it", LogFile, id)})
		}
	}
	return out
}

// judgePending runs repair's own check (checkPending) on the marker the list reports, so verify says
// what repair would do with it: a marker tune did not write as it is becomes a "forged" problem that
// names the reason (repair refuses it), and a marker the log has moved past says so; only a marker repair
// accepts keeps its "run tune repair" advice.
func (s *Store) judgePending(st *state, problems []Problem) {
	if st.pendingData == nil {
		return
	}
	op, err := parsePending(st.pendingData)
	if err != nil || st.repairedAlready(op.Serial) {
		return
	}
	_, err = s.checkPending(st, op)
	if err == nil {
		return
	}
	for i := range problems {
		if problems[i].Kind != ProblemPending {
			continue
		}
		var forged *ForgedMarkerError
		if errors.As(err, &forged) {
			problems[i].Kind = ProblemForged
			problems[i].Message = fmt.Sprintf("does not match an operation recorded in %s: %s. `tune repair` refuses it (it writes and deletes nothing a forged marker names): inspect it, delete it by hand, then run `tune verify` again",
				LogFile, forged.Reason)
		} else {
			problems[i].Message = err.Error()
		}
	}
}

type problemList struct {
	list []Problem
	seen map[string]bool
}

// add keeps the first whole-file problem of each kind per file, so a file that both the sum and the log
// say was edited is reported once. Line-level problems are all kept.
func (pl *problemList) add(p Problem) {
	key := fmt.Sprintf("%s\x00%s\x00%d\x00%s", p.Kind, p.File, p.Line, p.Message)
	if p.Line == 0 {
		key = p.Kind + "\x00" + p.File
	}
	if pl.seen == nil {
		pl.seen = map[string]bool{}
	}
	if pl.seen[key] {
		return
	}
	pl.seen[key] = true
	pl.list = append(pl.list, p)
}

func (st *state) verify() []Problem {
	var pl problemList
	st.verifyFiles(&pl)
	st.verifyIntegrity(&pl)
	st.verifyMeaning(&pl, false)
	return pl.list
}

// verifyFiles parses every version file: the part of Verify that readers skip (they parse the one version
// they use).
func (st *state) verifyFiles(pl *problemList) {
	for _, f := range st.files {
		w, err := weights.Parse(f.Name, f.Data)
		if err != nil {
			pl.add(ProblemOf(ProblemInvalid, f.Name, f.Name, err))
		} else if w.Version != f.Version {
			pl.add(Problem{Kind: ProblemInvalid, File: f.Name, Message: fmt.Sprintf("says version = %d, its name says %d", w.Version, f.Version)})
		}
	}
	st.verifyUnsignedReference(pl)
}

// verifyUnsignedReference reports a v0001.toml edited before the store's first write: without a log
// nothing has signed it yet, and the first write would sign the edit silently. It is compared with the
// reference the binary carries (Store.Reference; line endings aside, a checkout may convert them). Writes
// then refuse (requireClean); `tune repair --resign --reason WHY` signs it on purpose and logs why
// (docs/decisions.md#unsigned-v0001).
func (st *state) verifyUnsignedReference(pl *problemList) {
	if st.reference == nil || st.logExists {
		return
	}
	f := st.file(1)
	if f == nil {
		return
	}
	crlf := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")) }
	if !bytes.Equal(crlf(f.Data), crlf(st.reference)) {
		pl.add(Problem{Kind: ProblemEdited, File: f.Name, Message: "differs from the reference weights tune carries, and nothing has signed it yet (the store has no log): " +
			"the first write would sign the edit. Undo it (tune init writes the reference into an empty directory), or sign it on purpose with `tune repair --resign --reason WHY` (logged)"})
	}
}

// verifyIntegrity is everything Verify checks except parsing each version file: the marker, file types,
// left-over temp files, the log (chain, serials, lineage, per-file checksums), the sum file and the anchor
// of the log's end. It only hashes, so readers run it on every load (docs/decisions.md#store-integrity-and-hostile-inputs-issue-18).
func (st *state) verifyIntegrity(pl *problemList) {
	pendingWrites := st.pendingNames()
	if st.pendingData != nil {
		msg := "an interrupted operation left this marker; run `tune repair` to complete it (or `tune repair --abort` to undo it)"
		if op, err := parsePending(st.pendingData); err != nil {
			msg = fmt.Sprintf("unreadable marker of an interrupted operation (%v); run `tune repair --abort`", err)
		} else {
			msg = fmt.Sprintf("an interrupted %s (serial %d, %s, started %s) left this marker; run `tune repair` to complete it (or `tune repair --abort` to undo it)",
				op.Op, op.Serial, op.describeWrites(), op.Started.Format("2006-01-02T15:04:05Z07:00"))
		}
		pl.add(Problem{Kind: ProblemPending, File: PendingFile, Message: msg})
	}
	for _, p := range st.notRegular {
		pl.add(p)
	}
	for _, name := range st.stale {
		pl.add(Problem{Kind: ProblemStale, File: name, Message: "a temp file left by a write that was killed before it finished; the next write or `tune repair` removes it"})
	}
	logged := st.verifyLog(pl)
	st.verifySum(pl, logged)
	st.verifyHead(pl)
	for i, p := range pl.list {
		if p.Kind == ProblemExtra && pendingWrites[p.File] {
			pl.list[i].Message = "written by the interrupted operation in " + PendingFile + " and not yet committed; `tune repair` completes it"
		}
	}
}

// recorded is what the log says about a version file: its checksum and the line that said so.
type recorded struct {
	sha  string
	line int
}

// verifyLog checks the chain, serials, lineage and the active-version story, then each version file
// against the checksum the log recorded last. It returns those checksums.
func (st *state) verifyLog(pl *problemList) map[string]recorded {
	logged := map[string]recorded{}
	if !st.logExists {
		// Without a log the store must be as shipped. A version with a parent was written by apply or
		// rollback, which always log, so its log was deleted.
		for _, f := range st.files {
			if w, err := weights.Parse(f.Name, f.Data); err == nil && w.Parent > 0 {
				pl.add(Problem{Kind: ProblemMissing, File: LogFile, Message: fmt.Sprintf("not found, but %s has a parent (%s), so tune wrote it and logged it: the log was deleted; restore it from version control", f.Name, weights.VersionName(w.Parent))})
				break
			}
		}
		return logged
	}
	for _, p := range st.logBad {
		pl.add(p)
	}
	if !st.logComplete {
		pl.add(Problem{Kind: ProblemLog, File: LogFile, Line: len(st.lines), Message: "the last line has no newline (an append was cut short)"})
	}
	if len(st.lines) == 0 {
		pl.add(Problem{Kind: ProblemLog, File: LogFile, Message: "empty log (it should start with an init entry)"})
		return logged
	}
	var prevSerial int
	var lineage string
	active := 0
	for i, l := range st.lines {
		want := ""
		if i > 0 {
			want = lineHash(st.lines[i-1].Raw)
		}
		if !l.OK {
			continue
		}
		e := l.Entry
		if e.PrevHash != want {
			what := fmt.Sprintf("prev_hash does not match line %d (that line was edited, or a line was removed or inserted)", l.No-1)
			if i == 0 {
				what = "the first entry has a prev_hash (lines before it were removed)"
			}
			pl.add(Problem{Kind: ProblemChain, File: LogFile, Line: l.No, Message: what})
		}
		switch {
		case i == 0 && e.Serial != 1:
			pl.add(Problem{Kind: ProblemSerial, File: LogFile, Line: l.No, Message: fmt.Sprintf("the log starts at serial %d, not 1", e.Serial)})
		case i > 0 && prevSerial != 0 && e.Serial != prevSerial+1:
			pl.add(Problem{Kind: ProblemSerial, File: LogFile, Line: l.No, Message: fmt.Sprintf("serial %d follows serial %d (gap or repeat)", e.Serial, prevSerial)})
		}
		prevSerial = e.Serial
		if i == 0 {
			lineage = e.Lineage
			if e.Action != ActionInit {
				pl.add(Problem{Kind: ProblemLog, File: LogFile, Line: l.No, Message: fmt.Sprintf("the first entry is %q, not init", e.Action)})
			}
		} else if e.Lineage != lineage {
			pl.add(Problem{Kind: ProblemLineage, File: LogFile, Line: l.No, Message: fmt.Sprintf("lineage changed from %s to %s", lineage, e.Lineage)})
		}
		if (e.Action == ActionApply || e.Action == ActionRollback) && active != 0 && e.Parent != active {
			pl.add(Problem{Kind: ProblemLog, File: LogFile, Line: l.No, Message: fmt.Sprintf("%s on %s, but %s was active", e.Action, weights.VersionName(e.Parent), weights.VersionName(active))})
		}
		if changesActive(e.Action) && e.Result > 0 {
			active = e.Result
		}
		if e.Result > 0 && e.ResultSHA256 != "" {
			logged[weights.VersionName(e.Result)+".toml"] = recorded{e.ResultSHA256, l.No}
		}
		for _, fh := range e.Files {
			logged[fh.File] = recorded{fh.SHA256, l.No}
		}
	}
	onDisk := map[string]*versionFile{}
	for i := range st.files {
		onDisk[st.files[i].Name] = &st.files[i]
	}
	for _, name := range sortedKeys(logged) {
		r := logged[name]
		f := onDisk[name]
		switch {
		case f == nil:
			pl.add(Problem{Kind: ProblemMissing, File: name, Message: fmt.Sprintf("recorded in %s line %d but not on disk (versions are never deleted)", LogFile, r.line)})
		case f.SHA != r.sha:
			pl.add(Problem{Kind: ProblemEdited, File: name, Message: fmt.Sprintf("content differs from the sha256 recorded in %s line %d (edited by hand? undo the edit, or run `tune repair --resign` if it was intended)", LogFile, r.line)})
		}
	}
	for _, f := range st.files {
		if _, ok := logged[f.Name]; !ok {
			pl.add(Problem{Kind: ProblemExtra, File: f.Name, Message: fmt.Sprintf("not recorded in %s (new versions are written by tune apply or tune rollback, never by hand)", LogFile)})
		}
	}
	return logged
}

// verifySum checks weights.sum: its header against its entries, then the entries against the files on disk.
// The running hash chains entries, so after the first mismatch the later entries cannot be checked one by
// one; the log's per-file checksums (when present) tell whether the file or the sum file was edited.
func (st *state) verifySum(pl *problemList, logged map[string]recorded) {
	if !st.sumExists {
		if st.logExists {
			pl.add(Problem{Kind: ProblemMissing, File: SumFile, Message: "not found, but the store has an evolution log (it was deleted); run `tune repair --resign` to re-create it"})
		}
		return
	}
	header, entries, err := parseSum(st.sumData)
	if err != nil {
		pl.add(Problem{Kind: ProblemSum, File: SumFile, Message: fmt.Sprintf("malformed: %v", err)})
		return
	}
	if header != sumHeader(entries) {
		pl.add(Problem{Kind: ProblemSum, File: SumFile, Line: 1, Message: "the header checksum does not match the entries below it (the sum file was edited)"})
	}
	onDisk := map[string]*versionFile{}
	for i := range st.files {
		onDisk[st.files[i].Name] = &st.files[i]
	}
	listed := map[string]bool{}
	var present []versionFile
	var presentLines []int
	for i, e := range entries {
		listed[e.Name] = true
		if f := onDisk[e.Name]; f == nil {
			pl.add(Problem{Kind: ProblemMissing, File: e.Name, Message: fmt.Sprintf("listed in %s line %d but not on disk (versions are never deleted)", SumFile, i+2)})
		} else {
			present = append(present, *f)
			presentLines = append(presentLines, i+2)
		}
	}
	for _, f := range st.files {
		if !listed[f.Name] {
			pl.add(Problem{Kind: ProblemExtra, File: f.Name, Message: fmt.Sprintf("not listed in %s (added by hand? new versions are written by tune apply or tune rollback)", SumFile)})
		}
	}
	if len(present) != len(entries) {
		return // a missing file breaks the running hash; it has been reported
	}
	got := sumOf(present)
	for i := range got {
		if got[i].Hash == entries[i].Hash {
			continue
		}
		f := present[i]
		if r, ok := logged[f.Name]; ok && r.sha == f.SHA {
			pl.add(Problem{Kind: ProblemSum, File: SumFile, Line: presentLines[i], Message: fmt.Sprintf("the entry for %s does not match, but the file matches %s line %d (the sum file was edited)", f.Name, LogFile, r.line)})
		} else {
			pl.add(Problem{Kind: ProblemEdited, File: f.Name, Message: fmt.Sprintf("checksum mismatch with %s line %d (edited after it was written; undo the edit, or run `tune repair --resign` if it was intended)", SumFile, presentLines[i])})
		}
		break // later entries chain on this one
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
