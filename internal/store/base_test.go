package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func snapshot(t *testing.T, dir string) Snapshot {
	t.Helper()
	s, err := SnapshotDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCheckExtensionAcceptsWhatTuneWrites: every state tune's own writes go through (an apply, a
// rollback, attempts) extends every earlier state.
func TestCheckExtensionAcceptsWhatTuneWrites(t *testing.T) {
	s, dir := freshStore(t)
	fresh := snapshot(t, dir)
	if _, err := s.Apply(decide(t, s, sampleProposal(t))); err != nil {
		t.Fatal(err)
	}
	afterApply := snapshot(t, dir)
	if _, err := s.Rollback(0); err != nil {
		t.Fatal(err)
	}
	afterRollback := snapshot(t, dir)
	for name, pair := range map[string][2]Snapshot{
		"fresh → apply": {fresh, afterApply}, "apply → rollback": {afterApply, afterRollback},
		"fresh → rollback": {fresh, afterRollback}, "same": {afterRollback, afterRollback},
	} {
		if probs := CheckExtension(pair[0], pair[1]); len(probs) > 0 {
			t.Errorf("%s: %s", name, joinProblems(probs))
		}
	}
}

// TestCheckExtensionRefusesRewrites: a history rewritten and re-signed verifies on its own, but not
// as an extension of its base; each rewrite is named.
func TestCheckExtensionRefusesRewrites(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(t *testing.T, s *Store, dir string)
		want   string
	}{
		{"a version edited and re-signed", func(t *testing.T, s *Store, dir string) {
			rewrite(t, filepath.Join(dir, "v0002.toml"), func(x string) string { return strings.Replace(x, "single-file = -3", "single-file = -2", 1) })
			if _, err := s.Resign("hand edit"); err != nil {
				t.Fatal(err)
			}
		}, "v0002.toml: rewritten: changed since the base"},
		{"the log's apply entry rewritten and re-chained", func(t *testing.T, s *Store, dir string) {
			relink(t, dir, func(e *LogEntry) {
				if e.Action == ActionApply {
					e.Reason = "a better story"
				}
			})
		}, "was rewritten at HEAD: the log only grows"},
		{"the log cut", func(t *testing.T, s *Store, dir string) {
			rewrite(t, filepath.Join(dir, LogFile), func(x string) string { return strings.Join(strings.SplitAfter(x, "\n")[:1], "") })
		}, "the log was cut"},
		{"a version dropped", func(t *testing.T, s *Store, dir string) {
			os.Remove(filepath.Join(dir, "v0002.toml"))
		}, "v0002.toml: rewritten: the base holds this version; HEAD dropped it"},
		// an input from before inputs were hashed (no input_sha256 to check it against) is still
		// written once: a pull request that edits it is caught against the base (the PR-loop review)
		{"a saved report input edited", func(t *testing.T, s *Store, dir string) {
			in := filepath.Join(dir, ProposalsDir, InputsDir, "p-000000000001.toml")
			if err := os.WriteFile(in, []byte("Reason = \"forged\"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "proposals/inputs/p-000000000001.toml: rewritten: changed since the base"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, dir := freshStore(t)
			if _, err := s.Apply(decide(t, s, sampleProposal(t))); err != nil {
				t.Fatal(err)
			}
			inputs := filepath.Join(dir, ProposalsDir, InputsDir)
			if err := os.MkdirAll(inputs, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(inputs, "p-000000000001.toml"), []byte("Reason = \"as decided\"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			base := snapshot(t, dir)
			c.tamper(t, s, dir)
			probs := CheckExtension(base, snapshot(t, dir))
			if !strings.Contains(joinProblems(probs), c.want) {
				t.Errorf("want %q in:\n%s", c.want, joinProblems(probs))
			}
		})
	}
}

// TestCheckExtensionNewVersionsEqualTheirEntries: a version added at HEAD must be what its log entry
// says, even when the file and the log agree on its hash (both rewritten together).
func TestCheckExtensionNewVersionsEqualTheirEntries(t *testing.T) {
	s, dir := freshStore(t)
	if _, err := s.Apply(decide(t, s, sampleProposal(t))); err != nil {
		t.Fatal(err)
	}
	base := snapshot(t, dir)
	if _, err := s.Rollback(0); err != nil {
		t.Fatal(err)
	}
	head := snapshot(t, dir)
	// v0003 claims to restore v0001 but carries another weight; the snapshot is edited directly, as a
	// branch would carry it (its own hashes re-signed).
	head["v0003.toml"] = []byte(strings.Replace(string(head["v0003.toml"]), "single-file = -3", "single-file = -1", 1))
	if got := joinProblems(CheckExtension(base, head)); !strings.Contains(got, "v0003.toml: rewritten: log serial 4 says it restores v0001, but it differs from it") {
		t.Errorf("rollback content: %s", got)
	}
	// an apply whose candidate differs from the version it wrote
	base = snapshot(t, dir)
	s2, dir2 := freshStore(t)
	base2 := snapshot(t, dir2)
	p := decide(t, s2, sampleProposal(t))
	if _, err := s2.Apply(p); err != nil {
		t.Fatal(err)
	}
	head2 := snapshot(t, dir2)
	head2["v0002.toml"] = []byte(strings.Replace(string(head2["v0002.toml"]), "single-file = -3", "single-file = -1", 1))
	if got := joinProblems(CheckExtension(base2, head2)); !strings.Contains(got, "says it applies "+p.ID+", but it differs from its candidate") {
		t.Errorf("apply content: %s", got)
	}
	// a version no new entry wrote
	head3 := snapshot(t, dir)
	head3["v0009.toml"] = head3["v0001.toml"]
	if got := joinProblems(CheckExtension(base, head3)); !strings.Contains(got, "v0009.toml: rewritten: new at HEAD, but no log entry HEAD adds wrote it") {
		t.Errorf("unlogged version: %s", got)
	}
}
