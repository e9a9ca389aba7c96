package store

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestVerifyNamesLinksAmongTheStoresFiles: a pull request can commit a lock file, a proposal or a saved
// report input as a link (to /dev/zero, outside the project); every night after the merge then refuses
// it (the nightly lock, tune apply, weights show). Verify, and so verify --base, the pull request's
// check, names each one; before, verify said "intact" and verify --base stopped at the first proposal
// link with a bare error (the ninth review).
func TestVerifyNamesLinksAmongTheStoresFiles(t *testing.T) {
	s, dir := freshStore(t)
	mustVerify(t, s)
	if err := os.MkdirAll(filepath.Join(dir, ProposalsDir, InputsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	links := []string{NightlyLockFile, LockFile, ProposalsDir + "/p-cccccccccccc.json", ProposalsDir + "/" + InputsDir + "/p-cccccccccccc.toml"}
	for _, l := range links {
		if err := os.Symlink("/dev/zero", filepath.Join(dir, filepath.FromSlash(l))); err != nil {
			t.Fatal(err)
		}
	}
	// A plain directory beside the proposals is no reader's: not reported (the tenth review).
	if err := os.MkdirAll(filepath.Join(dir, ProposalsDir, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range s.Verify() {
		if p.Kind == ProblemNotRegular {
			got = append(got, p.File)
		}
	}
	slices.Sort(got)
	slices.Sort(links)
	if !slices.Equal(got, links) {
		t.Errorf("not-regular problems for %v, want %v", got, links)
	}
	if _, err := SnapshotDir(dir); err != nil {
		t.Errorf("the snapshot verify --base compares stops at a link instead of leaving it to Verify: %v", err)
	}
	for _, l := range links {
		os.Remove(filepath.Join(dir, filepath.FromSlash(l)))
	}
	mustVerify(t, s)
	// fixtures/suite is read, never written, and a link there is reported too.
	s.FixturesDir = filepath.Join(t.TempDir(), "fixtures")
	if err := os.MkdirAll(s.FixturesDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(s.FixturesDir, "suite")); err != nil {
		t.Fatal(err)
	}
	if probs := s.Verify(); len(probs) != 1 || probs[0].Kind != ProblemNotRegular || probs[0].File != filepath.Join(s.FixturesDir, "suite") {
		t.Errorf("fixtures/suite linked outside: %v", probs)
	}
	// A fixture file that is a link, in the suite or among the harvested ones (the tenth review).
	os.Remove(filepath.Join(s.FixturesDir, "suite"))
	for _, sub := range []string{"suite", "harvested"} {
		if err := os.MkdirAll(filepath.Join(s.FixturesDir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/dev/zero", filepath.Join(s.FixturesDir, sub, "x.toml")); err != nil {
			t.Fatal(err)
		}
	}
	if probs := s.Verify(); len(probs) != 2 || probs[0].Kind != ProblemNotRegular || probs[1].Kind != ProblemNotRegular {
		t.Errorf("fixture files linked: %v", probs)
	}
}

// TestVerifyNamesMisnamedAndBrokenProposals: a proposal copied under another proposal's name, and a file
// that is no proposal, pass nothing (the tenth review: the copy made tune apply of its name say the other
// one was applied already; the garbage stopped tune apply after the merge).
func TestVerifyNamesMisnamedAndBrokenProposals(t *testing.T) {
	s, dir := freshStore(t)
	p := sampleProposal(t)
	path, _, err := WriteProposal(filepath.Join(dir, ProposalsDir), p)
	if err != nil {
		t.Fatal(err)
	}
	mustVerify(t, s)
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(filepath.Join(dir, ProposalsDir, "p-cccccccccccc.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ProposalsDir, "p-dddddddddddd.json"), []byte("[[[["), 0o644); err != nil {
		t.Fatal(err)
	}
	probs := s.Verify()
	if len(probs) != 2 || probs[0].File != "proposals/p-cccccccccccc.json" || probs[0].Kind != ProblemInvalid ||
		!strings.Contains(probs[0].Message, "holds proposal "+p.ComputeID()+" under another name") ||
		probs[1].File != "proposals/p-dddddddddddd.json" || !strings.Contains(probs[1].Message, "does not read as a proposal") {
		t.Errorf("problems %v", probs)
	}
}
