package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ldd-tools/tune/internal/faultpoint"
	"github.com/ldd-tools/tune/internal/fixtures"
	"github.com/ldd-tools/tune/internal/regular"
)

// Two directories outside the store receive tune's atomic writes and are committed like it: the reports
// directory (nightly's reports, the escalation state dumps) and the harvested fixtures (apply). A write
// killed there leaves a temp file that a commit would take along, so Verify reports such files as stale,
// named by their path, and Repair removes them. The harvested fixtures are only written under the store
// lock, so every store writer removes their temp files too, as it does the store's own; reports are
// written outside the lock, so only Repair touches them
// (docs/decisions.md#crash-injection-in-a-real-process).

// harvestedDir is where Apply writes harvested fixtures ("" without a fixtures directory).
func (s *Store) harvestedDir() string {
	if s.FixturesDir == "" {
		return ""
	}
	return filepath.Join(s.FixturesDir, HarvestDir)
}

// staleIn lists the temp files of killed writes in dir (paths; none when dir is "" or absent). Only
// regular files with a temp file's name count.
func staleIn(dir string) []string {
	if dir == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if isTemp(e.Name()) && e.Type().IsRegular() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

// staleOutsideProblems are Verify's findings in the reports and harvested fixtures directories.
func (s *Store) staleOutsideProblems() []Problem {
	var out []Problem
	for _, p := range staleIn(s.harvestedDir()) {
		out = append(out, Problem{Kind: ProblemStale, File: p,
			Message: "a temp file left by a harvested fixture's write that was killed before it finished; the next write or `tune repair` removes it"})
	}
	for _, p := range staleIn(s.ReportsDir) {
		out = append(out, Problem{Kind: ProblemStale, File: p,
			Message: "a temp file left by a report write that was killed before it finished (a commit of the reports would take it along); `tune repair` removes it"})
	}
	return out
}

// removeStale removes the given temp files and remembers them for RemovedTemps.
func (s *Store) removeStale(paths []string) error {
	for _, p := range paths {
		faultpoint.Reach(faultpoint.Remove, p)
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		s.removedTemps = append(s.removedTemps, p)
	}
	return nil
}

// RemovedTemps lists the temp files of killed writes that the last write through this Store removed
// (paths), so that `tune repair` can say what it cleaned instead of cleaning silently.
func (s *Store) RemovedTemps() []string { return s.removedTemps }

// writeDirs are the directories the store's writers write into (or remove temp files from), each level
// by its path: the store, its proposals and saved report inputs, the fixtures and their harvested/, and
// the reports. Each must be a real directory, not a symbolic link (regular.RealDirs).
func (s *Store) writeDirs() []string {
	dirs := []string{s.Dir, s.path(ProposalsDir), filepath.Join(s.Dir, ProposalsDir, InputsDir)}
	if s.FixturesDir != "" {
		dirs = append(dirs, s.FixturesDir, s.harvestedDir())
	}
	if s.ReportsDir != "" {
		dirs = append(dirs, s.ReportsDir)
	}
	return dirs
}

// dirProblems is Verify's finding when a write directory is not a real directory, and when an entry
// tune reads or locks among the store's own files is not a regular file: the lock files, the proposals
// and their saved report inputs. A pull request can commit any of them as a link or a device; each
// then refuses a writer or a reader on every night after the merge, so verify --base must name them
// (ninth review).
func (s *Store) dirProblems() []Problem {
	dirs := s.writeDirs()
	if s.FixturesDir != "" {
		// read, never written: a link there makes every replay read the fixtures from elsewhere
		dirs = append(dirs, filepath.Join(s.FixturesDir, fixtures.SuiteDir), filepath.Join(s.FixturesDir, fixtures.HoldoutDir))
	}
	err := regular.RealDirs(dirs...)
	var de *regular.DirError
	if errors.As(err, &de) {
		return []Problem{{Kind: ProblemNotRegular, File: de.Path, Message: fmt.Sprintf("is %s: tune reads and writes only real directories inside the project, so every run that needs it refuses; replace it with a directory", de.What)}}
	}
	var out []Problem
	check := func(abs, name, what string) {
		if p, bad := NotRegular(abs, name, what); bad {
			out = append(out, p)
		}
	}
	for _, lock := range []string{LockFile, NightlyLockFile} {
		check(s.path(lock), lock, "every run that takes this lock refuses it; remove it")
	}
	// The entries a reader opens by their name: a plain directory beside them (notes/) trips nobody.
	each := func(dir, suffix string, visit func(abs, name string)) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if name := e.Name(); strings.HasSuffix(name, suffix) && !strings.HasPrefix(name, ".") {
				visit(filepath.Join(dir, name), name)
			}
		}
	}
	inputs := path.Join(ProposalsDir, InputsDir)
	each(filepath.Join(s.Dir, filepath.FromSlash(inputs)), ".toml", func(abs, name string) {
		check(abs, path.Join(inputs, name), "tune report proposal refuses it; remove it")
	})
	// A proposal must be a regular file, and is named by its id: a copy under another name
	// (p-cccccccccccc.json holding p-dc5479cb3ce1) made `tune apply p-cccccccccccc` report the other one
	// applied already, and a file that is no proposal at all stopped tune apply after the merge (the ninth
	// and tenth reviews). The heads only are decoded, as tune apply lists them (proposalHeads).
	each(s.ProposalsPath(), ".json", func(abs, name string) {
		name = path.Join(ProposalsDir, name)
		data, err := regular.ReadLimitedNoFollow(abs, regular.ProposalFile)
		var notRegular *regular.Error
		var tooLarge *regular.TooLargeError
		switch {
		case errors.As(err, &notRegular):
			out = append(out, notRegularProblem(name, notRegular.What, "tune apply, weights show and diff refuse it; remove it"))
			return
		case errors.As(err, &tooLarge):
			out = append(out, Problem{Kind: ProblemTooLarge, File: name, Message: err.Error()})
			return
		case err != nil:
			out = append(out, Problem{Kind: ProblemInvalid, File: name, Message: err.Error()})
			return
		}
		var h proposalHead
		switch err := json.Unmarshal(data, &h); {
		case err != nil:
			out = append(out, Problem{Kind: ProblemInvalid, File: name, Message: fmt.Sprintf("does not read as a proposal (%v): tune apply refuses it; remove it", err)})
		case h.ID != "" && path.Join(ProposalsDir, h.ID+".json") != name:
			out = append(out, Problem{Kind: ProblemInvalid, File: name, Message: fmt.Sprintf("holds proposal %s under another name: tune apply %s would act on %s; remove the copy", h.ID, strings.TrimSuffix(path.Base(name), ".json"), h.ID)})
		}
	})
	if s.FixturesDir != "" {
		for _, sub := range []string{fixtures.SuiteDir, fixtures.HoldoutDir, fixtures.HarvestedDir} {
			each(filepath.Join(s.FixturesDir, sub), ".toml", func(abs, _ string) {
				check(abs, abs, "every replay of the suite refuses it; remove it")
			})
		}
	}
	return out
}

// NotRegular is the not-regular problem of the file at abs, named name in the report, when it is there
// and is a link, a FIFO, a device, a socket or a directory; what says who refuses it then and what to do. Verify uses it
// for every file tune opens by name, and tune verify for the project's tune.toml.
func NotRegular(abs, name, what string) (Problem, bool) {
	fi, err := os.Lstat(abs)
	if err != nil {
		return Problem{}, false
	}
	if k := regular.Kind(fi.Mode()); k != "" {
		return notRegularProblem(name, k, what), true
	}
	return Problem{}, false
}

func notRegularProblem(name, kind, what string) Problem {
	return Problem{Kind: ProblemNotRegular, File: name, Message: fmt.Sprintf("is %s, not a regular file: %s", kind, what)}
}
