package store

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/ldd-tools/tune/internal/faultpoint"
	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/weights"
)

// ForgedMarkerError refuses a pending marker that does not describe an operation tune started (see
// checkMarker): repair neither completes nor undoes it, since either would write or delete what the
// marker names.
type ForgedMarkerError struct {
	Path   string
	Reason string
}

func (e *ForgedMarkerError) Error() string {
	return fmt.Sprintf("%s does not match an operation recorded in %s: %s; refusing to write or delete anything it names. tune did not write this marker as it is: inspect it, delete it by hand, then run `tune verify`", e.Path, LogFile, e.Reason)
}

// RepairResult says what Repair did; Entry is the repair line it logged.
type RepairResult struct {
	Op      string   // the interrupted operation (apply | rollback), or "resign"
	Action  string   // completed | aborted | resigned
	Details []string // one line per file touched
	Entry   LogEntry
}

// Repair resolves the marker of an interrupted apply or rollback explicitly: by default it completes the
// operation from the content recorded in the marker (no version is lost); with abort it removes the files
// the operation had written but not yet committed to the log. Either way it logs a repair entry.
// Without a marker it returns ErrNothingToDo.
func (s *Store) Repair(abort bool) (*RepairResult, error) {
	var res *RepairResult
	err := s.mutate(func(st *state) error {
		if err := s.removeStale(staleIn(s.ReportsDir)); err != nil {
			return err
		}
		if st.pendingData == nil {
			return fmt.Errorf("%w: no interrupted operation (%s is absent)", ErrNothingToDo, PendingFile)
		}
		if err := s.requireLog(st); err != nil {
			return err
		}
		op, err := parsePending(st.pendingData)
		if err != nil {
			if !abort {
				return fmt.Errorf("%s is unreadable (%v); it cannot be completed, run `tune repair --abort` to discard it", s.path(PendingFile), err)
			}
			res = &RepairResult{Op: "unknown", Action: "aborted", Details: []string{"discarded an unreadable " + PendingFile}}
			return s.logRepairAndClear(st, res, 0, "")
		}
		if st.repairedAlready(op.Serial) {
			// a previous repair logged its entry but died before removing the marker
			if err := s.remove(s.path(PendingFile)); err != nil {
				return err
			}
			res = &RepairResult{Op: op.Op, Action: "cleared", Details: []string{"removed the marker of an operation a previous repair already resolved"}}
			res.Entry = st.lines[len(st.lines)-1].Entry
			return syncDir(s.Dir)
		}
		logged, err := s.checkPending(st, op)
		if err != nil {
			return err
		}
		res = &RepairResult{Op: op.Op}
		if abort {
			if logged {
				return fmt.Errorf("the interrupted %s was already logged as serial %d, so it is committed; run `tune repair` (without --abort) to finish it, then `tune rollback` to undo it", op.Op, op.Serial)
			}
			res.Action = "aborted"
			removedFrom := map[string]bool{}
			for i := len(op.Writes) - 1; i >= 0; i-- {
				w := op.Writes[i]
				p, err := s.resolveWrite(w)
				if err != nil {
					return err
				}
				data, err := regular.ReadLimitedNoFollow(p, regular.FixtureFile) // a version file or a harvested fixture
				switch {
				case errors.Is(err, fs.ErrNotExist):
					continue
				case err != nil:
					return err
				case string(data) != w.Content:
					res.Details = append(res.Details, "left "+p+" in place: its content is not what the operation wrote")
					continue
				}
				if err := s.remove(p); err != nil {
					return err
				}
				removedFrom[filepath.Dir(p)] = true
				res.Details = append(res.Details, "removed uncommitted "+p)
			}
			// the removals are durable before the repair entry says they happened (a power cut could
			// otherwise bring back a harvested fixture the log says was aborted)
			for _, dir := range slices.Sorted(maps.Keys(removedFrom)) {
				if err := syncDir(dir); err != nil {
					return err
				}
			}
			if op.PrevSum != "" {
				if err := writeFileAtomic(s.path(SumFile), []byte(op.PrevSum)); err != nil {
					return err
				}
				res.Details = append(res.Details, "restored "+SumFile)
			}
			return s.logRepairAndClear(st, res, op.Serial, op.Op)
		}
		res.Action = "completed"
		for _, w := range op.Writes {
			p, err := s.resolveWrite(w)
			if err != nil {
				return err
			}
			if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
				res.Details = append(res.Details, "wrote "+p)
			}
		}
		if !logged {
			res.Details = append(res.Details, fmt.Sprintf("logged the %s as serial %d", op.Op, op.Serial))
		}
		// The marker stays until the repair entry is logged, so a crash during repair leaves it for the
		// next attempt.
		if err := s.finishOp(st, op, false); err != nil {
			return err
		}
		return s.logRepairAndClear(st, res, op.Serial, op.Op)
	})
	return res, err
}

// checkPending decides whether repair may complete or undo the marker op: it must describe the next
// operation the log allows (or the one the log's last line already commits: logged), and checkMarker
// must find it exactly what tune writes. Repair and Verify share it, so verify names a marker that
// repair would refuse instead of sending the user to repair.
func (s *Store) checkPending(st *state, op *pendingOp) (logged bool, err error) {
	serial, lineage := st.head()
	logged = st.headIs(op.Entry)
	if !logged && (lineage != op.Lineage || serial != op.Serial-1) {
		return false, fmt.Errorf("%s records an interrupted %s that would append serial %d, but the log is at serial %d (lineage %s): the store changed since; resolve by hand",
			s.path(PendingFile), op.Op, op.Serial, serial, lineage)
	}
	if _, err := s.checkMarker(st, op, logged); err != nil {
		return false, &ForgedMarkerError{Path: s.path(PendingFile), Reason: err.Error()}
	}
	return logged, nil
}

func (st *state) repairedAlready(serial int) bool {
	n := len(st.lines)
	if n == 0 || !st.lines[n-1].OK {
		return false
	}
	e := st.lines[n-1].Entry
	return e.Action == ActionRepair && strings.HasSuffix(e.Reason, fmt.Sprintf("(serial %d)", serial))
}

// requireLog: an operation only starts after bootstrap, so a marker in a store without a log means the log
// was removed by hand; repair must not invent one.
func (s *Store) requireLog(st *state) error {
	if !st.logExists {
		return fmt.Errorf("%s exists but %s does not; the log was removed, restore it from version control", s.path(PendingFile), s.path(LogFile))
	}
	return nil
}

func (s *Store) logRepairAndClear(st *state, res *RepairResult, serial int, op string) error {
	what := fmt.Sprintf("%s the interrupted %s (serial %d)", res.Action, op, serial)
	if serial == 0 {
		what = res.Action + " an unreadable pending marker"
	}
	line, err := s.appendLine(st, LogEntry{
		Action: ActionRepair, Parent: st.active(), Result: 0, Decision: weights.Decision(res.Action),
		Evidence: res.Details, Reason: what,
	})
	if err != nil {
		return err
	}
	faultpoint.Reach(faultpoint.Step, "repair-log")
	if err := s.remove(s.path(PendingFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := syncDir(s.Dir); err != nil {
		return err
	}
	return unmarshalEntry(line, &res.Entry)
}

// Resign re-signs weights.sum and records the current checksum of every version file after an intentional
// hand edit, with a loud repair entry naming each edited file. It refuses when a version file is missing or
// extra, when the log itself is broken, or when an operation is pending: those are not edits to bless.
func (s *Store) Resign(reason string) (*RepairResult, error) {
	var res *RepairResult
	err := s.mutate(func(st *state) error {
		if st.pendingData != nil {
			return fmt.Errorf("an interrupted operation is pending (%s); run `tune repair` first", s.path(PendingFile))
		}
		problems := st.verify()
		if len(problems) == 0 {
			// nothing differs from the log: a re-sign entry would only say so, for good (the PR-loop
			// review ran --resign on an edited proposal input, which it does not cover)
			return ErrNothingToDo
		}
		var edited []string
		for _, p := range problems {
			switch p.Kind {
			case ProblemEdited:
				edited = append(edited, p.File)
			case ProblemSum, ProblemHead, ProblemStale:
			case ProblemMissing:
				if p.File != SumFile && p.File != HeadFile {
					return fmt.Errorf("cannot re-sign: %s (a deleted version is not an edit; restore it from version control)", p)
				}
			default:
				return fmt.Errorf("cannot re-sign: %s", p)
			}
		}
		// What each edited file was signed as before: its logged checksum, or, for a v0001.toml edited
		// before the first write (no log yet), the reference tune carries. Read before bootstrap, which
		// logs the current files.
		before := map[string]string{}
		for _, name := range edited {
			sha, _ := st.loggedSHA(name)
			before[name] = short(sha)
			if sha == "" && !st.logExists && st.reference != nil && name == weights.VersionName(1)+".toml" {
				before[name] = short(fileSHA(st.reference)) + " (the reference)"
			}
		}
		if err := s.bootstrap(st); err != nil {
			return err
		}
		for _, f := range st.files {
			if _, err := weights.Parse(f.Name, f.Data); err != nil {
				return fmt.Errorf("cannot re-sign: %v", err)
			}
		}
		sort.Strings(edited)
		if err := writeFileAtomic(s.path(SumFile), marshalSum(sumOf(st.files))); err != nil {
			return err
		}
		faultpoint.Reach(faultpoint.Step, "resign-sum")
		res = &RepairResult{Op: "resign", Action: "resigned"}
		entry := LogEntry{Action: ActionRepair, Parent: st.active(), Decision: "resign"}
		for _, f := range st.files {
			entry.Files = append(entry.Files, FileHash{f.Name, f.SHA})
		}
		for _, name := range edited {
			detail := fmt.Sprintf("%s re-signed by hand: sha256 %s -> %s", name, before[name], short(st.file(mustVersion(name)).SHA))
			res.Details = append(res.Details, detail)
		}
		if len(edited) == 0 {
			res.Details = append(res.Details, "re-signed "+SumFile+" (no version file differed from the log)")
		}
		entry.Evidence = res.Details
		entry.Reason = "MANUAL EDIT ACCEPTED (tune repair --resign): " + strings.Join(edited, ", ")
		if len(edited) == 0 {
			entry.Reason = "re-signed " + SumFile + " (tune repair --resign)"
		}
		if reason != "" {
			entry.Reason += ": " + reason
		}
		line, err := s.appendLine(st, entry)
		if err != nil {
			return err
		}
		return unmarshalEntry(line, &res.Entry)
	})
	return res, err
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	if sha == "" {
		return "(none)"
	}
	return sha
}

func mustVersion(name string) int {
	v, _ := weights.ParseVersionName(strings.TrimSuffix(name, ".toml"))
	return v
}
