package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/weights"
)

// ProblemRewritten: the store at HEAD is not an append-only extension of the store at a base revision
// (tune verify --base): a version, a log entry or a ledger key of the base was changed or dropped, or a
// new version is not what the log entry that wrote it says.
const ProblemRewritten = "rewritten"

// ProblemCommitted: HEAD commits a file of the store that belongs to one machine (the nightly caches,
// a lock or marker file): tune verify --base.
const ProblemCommitted = "committed"

// Snapshot is a store's files as another revision holds them: name (relative to the store directory,
// slash-separated) → bytes. Only version files, the log, the proposals and their saved report inputs
// are looked at.
type Snapshot map[string][]byte

// CheckExtension checks that head is an append-only extension of base (docs/decisions.md#verify-base):
//
//   - every version file of base is in head, byte for byte;
//   - base's log is a prefix of head's log, line for line (no entry changed, dropped or reordered);
//   - every ledger key of base is in head's ledger, for the same version;
//   - every version file head adds was written by a log entry head adds, and equals what that entry
//     says: a rollback restores the content of the version it names, an apply the candidate of its
//     proposal (when head holds the proposal file; its id is a hash of its content);
//   - every saved report input (proposals/inputs/<id>.toml) of base that head holds is byte for byte
//     the same: an input is written once, and one from before inputs were hashed has nothing else to
//     be checked against (a removed one is allowed, as a removed proposal is: the report then says it
//     has no saved input).
//
// It is pure (two snapshots in, problems out), so that it does not depend on where the revisions come
// from; the store's own checks (the hash chain, weights.sum) are Verify's.
func CheckExtension(base, head Snapshot) []Problem {
	var out []Problem
	add := func(kind, file string, line int, format string, a ...any) {
		out = append(out, Problem{Kind: kind, File: file, Line: line, Message: fmt.Sprintf(format, a...)})
	}
	for _, name := range snapshotVersions(base) {
		data, ok := head[name]
		switch {
		case !ok:
			add(ProblemRewritten, name, 0, "the base holds this version; HEAD dropped it (versions are never deleted: a rollback writes a new one)")
		case !bytes.Equal(data, base[name]):
			add(ProblemRewritten, name, 0, "changed since the base (a version file is immutable once written)")
		}
	}
	baseLines, _, _ := parseLog(base[LogFile])
	headLines, _, _ := parseLog(head[LogFile])
	for i, bl := range baseLines {
		if i >= len(headLines) {
			add(ProblemRewritten, LogFile, bl.No, "the base's entry (serial %d) is gone at HEAD: the log was cut", bl.Entry.Serial)
			break
		}
		if !bytes.Equal(bl.Raw, headLines[i].Raw) {
			add(ProblemRewritten, LogFile, bl.No, "the base's entry (serial %d) was rewritten at HEAD: the log only grows", bl.Entry.Serial)
			break
		}
	}
	baseLedger, headLedger := ledgerOf(entriesOf(baseLines)), ledgerOf(entriesOf(headLines))
	keys := make([]string, 0, len(baseLedger))
	for k := range baseLedger {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v, ok := headLedger[k]; !ok || v != baseLedger[k] {
			add(ProblemRewritten, LogFile, 0, "ledger key %s (spent by %s at the base) is %s at HEAD", k, baseLedger[k], orGone(v))
		}
	}
	inputs := make([]string, 0)
	for name := range base {
		if strings.HasPrefix(name, ProposalsDir+"/"+InputsDir+"/") {
			inputs = append(inputs, name)
		}
	}
	sort.Strings(inputs)
	for _, name := range inputs {
		if data, ok := head[name]; ok && !bytes.Equal(data, base[name]) {
			add(ProblemRewritten, name, 0, "changed since the base (a saved report input is written once, with its proposal)")
		}
	}
	if len(out) > 0 {
		return out // the new entries cannot be told apart from rewritten ones
	}
	written := map[string]bool{}
	for _, l := range headLines[min(len(baseLines), len(headLines)):] {
		e := l.Entry
		if !l.OK || (e.Action != ActionApply && e.Action != ActionRollback) {
			continue
		}
		name := weights.VersionName(e.Result) + ".toml"
		written[name] = true
		if _, inBase := base[name]; inBase {
			add(ProblemRewritten, LogFile, l.No, "serial %d writes %s, which the base already holds", e.Serial, name)
			continue
		}
		got, err := snapshotWeights(head, name)
		if err != nil {
			add(ProblemRewritten, name, 0, "written by log serial %d but %v", e.Serial, err)
			continue
		}
		switch e.Action {
		case ActionRollback:
			want, err := snapshotWeights(head, weights.VersionName(e.Restores)+".toml")
			if err != nil {
				add(ProblemRewritten, LogFile, l.No, "serial %d restores %s: %v", e.Serial, weights.VersionName(e.Restores), err)
			} else if ch := Changes(&want, &got); len(ch) > 0 {
				add(ProblemRewritten, name, 0, "log serial %d says it restores %s, but it differs from it: %s", e.Serial, weights.VersionName(e.Restores), describeChanges(ch))
			}
		case ActionApply:
			pname := path.Join(ProposalsDir, e.Proposal+".json")
			data, ok := head[pname]
			if !ok {
				continue // a proposal file may be left out of the repository; Verify checks the version's hash
			}
			p, err := ParseProposal(pname, data)
			if err != nil {
				add(ProblemRewritten, pname, 0, "the proposal applied by log serial %d does not read: %v", e.Serial, err)
			} else if ch := Changes(&p.Candidate, &got); len(ch) > 0 {
				add(ProblemRewritten, name, 0, "log serial %d says it applies %s, but it differs from its candidate: %s", e.Serial, e.Proposal, describeChanges(ch))
			}
		}
		if got.Parent != e.Parent {
			add(ProblemRewritten, name, 0, "its parent is %s, but log serial %d wrote it on %s", weights.VersionName(got.Parent), e.Serial, weights.VersionName(e.Parent))
		}
	}
	for _, name := range snapshotVersions(head) {
		if _, inBase := base[name]; !inBase && !written[name] {
			add(ProblemRewritten, name, 0, "new at HEAD, but no log entry HEAD adds wrote it")
		}
	}
	return out
}

func orGone(v string) string {
	if v == "" {
		return "gone"
	}
	return "credited to " + v
}

// HarvestAdded maps each fixture the entries head's log adds beyond base's harvested (its path relative to
// the fixtures directory) to the sha256 the entry records for it: what a branch that only extends the
// base may add under the fixtures.
func HarvestAdded(base, head Snapshot) map[string]string {
	out := map[string]string{}
	for _, e := range addedEntries(base, head) {
		for i, name := range e.Harvested {
			if i < len(e.HarvestedSHA256) {
				out[name] = e.HarvestedSHA256[i]
			}
		}
	}
	return out
}

// ProposalsAdded maps each proposal the entries head's log adds beyond base's name (its attempts, the
// apply or rollback of it) to the sha256 of the report input logged with it ("" when none is: a watch's
// rollback saves no input): the proposals a branch that only extends the base may add, with their inputs.
func ProposalsAdded(base, head Snapshot) map[string]string {
	out := map[string]string{}
	for _, e := range addedEntries(base, head) {
		if e.Proposal != "" && out[e.Proposal] == "" {
			out[e.Proposal] = e.InputSHA256
		}
	}
	return out
}

// addedEntries are the entries of head's log past base's (none when head's is shorter).
func addedEntries(base, head Snapshot) []LogEntry {
	baseLines, _, _ := parseLog(base[LogFile])
	headLines, _, _ := parseLog(head[LogFile])
	if len(headLines) < len(baseLines) {
		return nil
	}
	return entriesOf(headLines[len(baseLines):])
}

func entriesOf(lines []logLine) []LogEntry {
	var out []LogEntry
	for _, l := range lines {
		if l.OK {
			out = append(out, l.Entry)
		}
	}
	return out
}

// snapshotVersions lists the version file names of a snapshot, sorted.
func snapshotVersions(s Snapshot) []string {
	var names []string
	for name := range s {
		if !strings.Contains(name, "/") {
			if _, ok := VersionFileName(name); ok {
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	return names
}

func snapshotWeights(s Snapshot, name string) (weights.Weights, error) {
	data, ok := s[name]
	if !ok {
		return weights.Weights{}, fmt.Errorf("%s is missing", name)
	}
	return weights.Parse(name, data)
}

// SnapshotLimit is the size limit of a snapshot's file by its name: the log's, a saved report input's,
// a proposal's, a version file's.
func SnapshotLimit(name string) regular.Limit {
	switch {
	case name == LogFile:
		return regular.StoreLog
	case strings.HasPrefix(name, ProposalsDir+"/"+InputsDir+"/"):
		return regular.ProposalInput
	case strings.HasPrefix(name, ProposalsDir+"/"):
		return regular.ProposalFile
	}
	return regular.WeightsFile
}

// SnapshotDir reads the snapshot of the store directory dir on disk: its version files, its log and its
// proposals.
func SnapshotDir(dir string) (Snapshot, error) {
	st, err := loadState(dir)
	if err != nil {
		return nil, err
	}
	snap := Snapshot{}
	for _, f := range st.files {
		snap[f.Name] = f.Data
	}
	names := []string{LogFile}
	proposals, err := filepath.Glob(filepath.Join(dir, ProposalsDir, "p-*.json"))
	if err != nil {
		return nil, err
	}
	for _, p := range proposals {
		names = append(names, path.Join(ProposalsDir, filepath.Base(p)))
	}
	inputs, err := filepath.Glob(filepath.Join(dir, ProposalsDir, InputsDir, "p-*.toml"))
	if err != nil {
		return nil, err
	}
	for _, p := range inputs {
		names = append(names, path.Join(ProposalsDir, InputsDir, filepath.Base(p)))
	}
	for _, name := range names {
		lim := SnapshotLimit(name)
		data, err := regular.ReadLimitedNoFollow(filepath.Join(dir, filepath.FromSlash(name)), lim)
		var notRegular *regular.Error
		switch {
		case err == nil:
			snap[name] = data
		case errors.As(err, &notRegular):
			// a link or a device where a proposal should be: Verify lists it (not-regular) beside the rest
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
	}
	return snap, nil
}
