package app

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/fixtures"
	"github.com/ldd-tools/tune/internal/gitcmd"
	"github.com/ldd-tools/tune/internal/project"
	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/textfmt"
	"github.com/ldd-tools/tune/internal/weights"
)

// AddHoldoutChanges names what the range from the base (AddBase's commit) to the work tree changes in
// what the frozen holdout holds a night's decisions to: its scenarios under fixturesDir/holdout (added,
// removed, or with another prompt, levels or expectation) and tune.toml's [evolve] holdout rule at
// configPath. No rule of tune may change either, and the evidence's verdict depends on both; a
// reviewed change may (docs/escalation.md, "A change the holdout holds"), so they are named for the
// reviewer, not counted as problems (docs/decisions.md#verify-base-names-a-change-of-the-holdout).
// Both are read in the repository of the store (weightsDir), whose commit the base is: a fixtures
// directory or a tune.toml outside it (another work tree, a submodule) is not compared. A base whose
// holdout does not read is named as such: the pull request may be the one that repairs it. With no
// tune.toml now (configPath ""), the one beside the store is compared, so deleting it is named too.
func (r *VerifyResult) AddHoldoutChanges(weightsDir, fixturesDir, configPath string) {
	if r.Base == "" {
		return
	}
	top, err := gitcmd.Toplevel(weightsDir)
	if err != nil {
		return
	}
	repo := gitcmd.Repo{Dir: top}
	if ft, err := gitcmd.Toplevel(fixturesDir); err == nil && ft == top {
		if rel, err := repoPath(top, filepath.Join(fixturesDir, fixtures.HoldoutDir)); err == nil {
			before, err := holdoutAt(repo, r.Base, rel)
			switch {
			case err != nil:
				r.HoldoutChanged = append(r.HoldoutChanged, fmt.Sprintf("the holdout at the base does not read, so it is not compared: %s", textfmt.OneLine(err.Error())))
			default:
				// the work tree's holdout as every replay reads it; a suite that does not load is
				// AddFixtures' problem already, and its holdout is not compared
				if suite, err := fixtures.LoadSuite(fixturesDir); err == nil {
					r.HoldoutChanged = append(r.HoldoutChanged, holdoutDiff(before, suite.Holdout)...)
				}
			}
		}
	}
	if configPath == "" {
		configPath = filepath.Join(filepath.Dir(weightsDir), project.ConfigFile)
	}
	rel, err := repoPath(top, configPath)
	if err != nil {
		return
	}
	rule := func(data []byte, ok bool) evolve.HoldoutRule {
		cfg, err := parseConfig(rel, data)
		if !ok || err != nil || cfg.Evolve.Holdout == "" {
			return evolve.HoldoutVeto // what a night does without the key (an unreadable file is AddConfig's problem)
		}
		return cfg.Evolve.Holdout
	}
	data, ok, err := repo.Show(r.Base, rel, regular.ConfigFile)
	if err != nil {
		r.HoldoutChanged = append(r.HoldoutChanged, fmt.Sprintf("%s at the base does not read, so its holdout rule is not compared: %s", rel, textfmt.OneLine(err.Error())))
		return
	}
	headData, headErr := project.ReadConfig(configPath, false)
	if was, is := rule(data, ok), rule(headData, headErr == nil); was != is {
		r.HoldoutChanged = append(r.HoldoutChanged, fmt.Sprintf("%s: [evolve] holdout %q → %q", rel, was, is))
	}
}

// holdoutAt reads the holdout scenarios of the *.toml files directly under rel at commit, as
// fixtures.LoadSuite reads a holdout directory.
func holdoutAt(repo gitcmd.Repo, commit, rel string) ([]fixtures.Scenario, error) {
	files, err := repo.Files(commit, rel)
	if err != nil {
		return nil, err
	}
	var out []fixtures.Scenario
	for _, f := range files {
		if path.Dir(f) != rel || !strings.HasSuffix(f, ".toml") {
			continue
		}
		data, _, err := repo.Show(commit, f, regular.FixtureFile)
		if err != nil {
			return nil, err
		}
		scs, err := fixtures.Parse(gitcmd.Short(commit)+":"+f, data)
		if err != nil {
			return nil, err
		}
		out = append(out, scs...)
	}
	return out, nil
}

// holdoutDiff lists, by scenario name, the holdout scenarios added, removed or changed from before to
// after, and which of their fields changed.
func holdoutDiff(before, after []fixtures.Scenario) []string {
	was := map[string]fixtures.Scenario{}
	for _, s := range before {
		was[s.Name] = s
	}
	var out []string
	for _, s := range after {
		old, ok := was[s.Name]
		delete(was, s.Name)
		switch fields := changedFields(old, s); {
		case !ok:
			out = append(out, fmt.Sprintf("holdout scenario %q added (%s)", s.Name, levels(s.Levels)))
		case len(fields) > 0:
			out = append(out, fmt.Sprintf("holdout scenario %q: %s changed", s.Name, strings.Join(fields, ", ")))
		}
	}
	for _, s := range before {
		if _, gone := was[s.Name]; gone {
			out = append(out, fmt.Sprintf("holdout scenario %q removed (%s)", s.Name, levels(s.Levels)))
		}
	}
	slices.Sort(out)
	return out
}

// changedFields names the fields of a scenario a replay reads that differ between a and b (the levels
// with their values).
func changedFields(a, b fixtures.Scenario) []string {
	var out []string
	if a.Prompt != b.Prompt {
		out = append(out, "prompt")
	}
	if !slices.Equal(a.Levels, b.Levels) {
		out = append(out, "levels "+levels(a.Levels)+" → "+levels(b.Levels))
	}
	if !slices.Equal(a.History, b.History) {
		out = append(out, "history")
	}
	if a.DispatchSource != b.DispatchSource || a.Creativity != b.Creativity || a.Fragment != b.Fragment || !slices.Equal(a.Top2, b.Top2) {
		out = append(out, "expected dispatch")
	}
	return out
}

func levels(ls []weights.Level) string {
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = l.String()
	}
	return strings.Join(names, ",")
}
