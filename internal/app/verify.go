package app

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/ldd-tools/tune"
	"github.com/ldd-tools/tune/internal/project"
	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/textfmt"
	"github.com/ldd-tools/tune/internal/weights"
)

// VerifyResult is what tune verify reports (and its --json shape).
type VerifyResult struct {
	Dir      string `json:"dir"`
	Intact   bool   `json:"intact"`
	Versions int    `json:"versions"`
	Active   string `json:"active"`
	Serial   int    `json:"serial"`
	Lineage  string `json:"lineage,omitempty"`
	// Base is the commit --base named: the store was also checked as an append-only extension of it.
	Base     string          `json:"base,omitempty"`
	Problems []store.Problem `json:"problems"`
	// HoldoutChanged names what the range from Base changes in the frozen holdout and its rule
	// (AddHoldoutChanges): for the reviewer, not problems.
	HoldoutChanged []string `json:"holdout_changed,omitempty"`
}

// AddConfig reports the project's tune.toml (path, "" when none was found) when it is there but not a
// regular file: every command reads it without following a link (project.ReadConfig), so such a file
// merged from a pull request refuses every night after; verify --base is where it must show (the tenth
// review).
func (r *VerifyResult) AddConfig(path string) {
	if path == "" {
		return
	}
	if p, bad := store.NotRegular(path, path, "every command refuses the project's tune.toml then; make it a regular file"); bad {
		r.Problems = append(r.Problems, p)
		r.Intact = false
		return
	}
	// Read as every night reads it: a duplicate key, a value out of range or an unknown key merged from
	// a pull request passed verify --base, then refused every nightly (the first review of the set-up
	// commands).
	if _, err := readConfig(Env{}, path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.Problems = append(r.Problems, configProblem(path, err, "every tune nightly refuses it: fix it in the pull request"))
		r.Intact = false
	}
}

// AddNamedConfig reads the config TUNE_CONFIG names, which every command reads instead of the
// project's tune.toml (the re-review: verify passed a TUNE_CONFIG every nightly then refused). Unlike
// the project's file it must exist.
func (r *VerifyResult) AddNamedConfig(path string) {
	if _, err := readConfig(Env{}, path); err != nil {
		r.Problems = append(r.Problems, configProblem(path, err, "every command refuses TUNE_CONFIG's file: fix it, or unset TUNE_CONFIG"))
		r.Intact = false
	}
}

// AddFixtures reads the fixture suite (suite/, harvested/ and holdout/) as every replay reads it: a
// duplicate scenario name, a level that is none, an unknown key, a suite removed or past the size bound
// merged from a pull request passed verify --base, then failed every night (the review of the reports
// and fixtures). Only the first problem is named: the loader stops there, as a night does. A store
// checked on its own (no project, no fixtures directory) has no suite to read.
func (r *VerifyResult) AddFixtures(env Env) {
	if env.Config == "" && missing(env.FixturesDir) {
		return
	}
	if _, err := env.LoadSuite(); err != nil {
		r.Problems = append(r.Problems, store.Problem{Kind: store.ProblemInvalid, File: project.Shown(env.FixturesDir),
			Message: textfmt.OneLine(err.Error()) + "; every replay, tune propose and tune nightly refuse the suite: fix it in the pull request"})
		r.Intact = false
	}
}

// configProblem is the invalid problem of the config at path (its line when the error names one),
// with what follows from it and what to do.
func configProblem(path string, err error, advice string) store.Problem {
	p := store.ProblemOf(store.ProblemInvalid, project.Shown(path), "config "+path, err) // readConfig's prefix
	p.Message += "; " + advice
	return p
}

// AddBase checks the store against the git revision rev (VerifyBase) and adds what it finds.
func (r *VerifyResult) AddBase(weightsDir, rev string) error {
	commit, problems, err := VerifyBase(weightsDir, rev)
	if err != nil {
		return err
	}
	r.Base = commit
	r.Problems = append(r.Problems, problems...)
	r.Intact = len(r.Problems) == 0
	return nil
}

// Verify checks the weights store in weightsDir: version files against weights.sum and the log, the
// log's hash chain, and the marker of an interrupted operation, checked as repair checks it (its
// fixture writes against fixturesDir; "" checks them by name and hash only), and temp files of killed
// report writes in reportsDir ("" skips them).
func Verify(weightsDir, fixturesDir, reportsDir string) (*VerifyResult, error) {
	s, err := store.Open(weightsDir, nil)
	var linked *regular.DirError
	if errors.As(err, &linked) {
		// a store that is a link is a finding, listed as the others are (verify --base, --json)
		return &VerifyResult{Dir: weightsDir, Problems: []store.Problem{{Kind: store.ProblemNotRegular, File: project.Shown(weightsDir),
			Message: fmt.Sprintf("is %s, not a directory: tune reads and writes only real directories inside the project, so every command refuses the store; replace it with the directory", linked.What)}}}, nil
	}
	if err != nil {
		return nil, err
	}
	s.FixturesDir, s.ReportsDir = fixturesDir, reportsDir
	s.Reference = tune.ReferenceWeights // an unsigned hand edit of v0001 is reported too
	problems := s.Verify()
	versions, err := s.Versions()
	if err != nil {
		return nil, err
	}
	active, err := s.LoggedActive()
	if err != nil {
		return nil, err
	}
	serial, lineage := s.Head()
	rep := &VerifyResult{Dir: weightsDir, Intact: len(problems) == 0, Versions: len(versions), Active: weights.VersionName(active),
		Serial: serial, Lineage: lineage, Problems: problems}
	if rep.Problems == nil {
		rep.Problems = []store.Problem{}
	}
	return rep, nil
}

// NothingToResign is the note of a tune repair --resign that found nothing to re-sign.
const NothingToResign = "nothing to re-sign: every version file, weights.sum and the log agree"

// RepairResult is what tune repair reports (and its --json shape).
type RepairResult struct {
	Repaired bool     `json:"repaired"`
	Op       string   `json:"op,omitempty"`
	Action   string   `json:"action,omitempty"`
	Details  []string `json:"details"`
	Serial   int      `json:"serial,omitempty"`
	Note     string   `json:"note,omitempty"`
	// Removed lists the temp files of killed writes repair removed (the store's, the harvested
	// fixtures', the reports'): nothing is cleaned silently.
	Removed []string `json:"removed,omitempty"`
}

// Repair resolves an interrupted apply or rollback (completes it, or undoes it with abort), or with
// resign re-signs the store after an intended hand edit (reason goes into the log). Without a marker
// the result is not Repaired and its Details list what verify finds.
func Repair(env Env, abort, resign bool, reason string) (*RepairResult, error) {
	s, err := env.OpenStore()
	if err != nil {
		return nil, err
	}
	var res *store.RepairResult
	if resign {
		res, err = s.Resign(reason)
	} else {
		res, err = s.Repair(abort)
	}
	if errors.Is(err, store.ErrNothingToDo) {
		// No marker: say whether anything else is wrong.
		note := "nothing to repair: no interrupted operation"
		if resign {
			note = NothingToResign
		}
		rep := &RepairResult{Details: []string{}, Note: note, Removed: s.RemovedTemps()}
		for _, p := range s.Verify() {
			rep.Details = append(rep.Details, p.String())
		}
		return rep, nil
	}
	if err != nil {
		return nil, err
	}
	rep := &RepairResult{Repaired: true, Op: res.Op, Action: res.Action, Details: res.Details, Serial: res.Entry.Serial, Removed: s.RemovedTemps()}
	if rep.Details == nil {
		rep.Details = []string{}
	}
	return rep, nil
}
