package store

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// interrupted returns a store whose apply of the sample proposal stopped right after writing its marker,
// and the marker.
func interrupted(t *testing.T) (*Store, string, *pendingOp) {
	t.Helper()
	s, dir := freshStore(t)
	decide(t, s, sampleProposal(t))
	if err := crashAt(afterStep("pending"), func() error { _, err := s.Apply(sampleProposal(t)); return err }); !errors.Is(err, ErrInjectedCrash) {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, PendingFile))
	if err != nil {
		t.Fatal(err)
	}
	op, err := parsePending(data)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := reopen(t, dir)
	return r, dir, op
}

func writeMarker(t *testing.T, dir string, op *pendingOp) {
	t.Helper()
	data, err := encodeIndented(op)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, PendingFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// reentry re-marshals the marker's log entry after f changed it, keeping everything else.
func reentry(t *testing.T, op *pendingOp, f func(e *LogEntry)) {
	t.Helper()
	var e LogEntry
	if err := json.Unmarshal([]byte(op.Entry), &e); err != nil {
		t.Fatal(err)
	}
	f(&e)
	op.Entry = string(e.marshalLine())
}

// A forged marker is refused by repair, repair --abort and --resign, and nothing it names is written or
// deleted: not outside the store, not through "..", not through a symbolic link, not with content other
// than its log entry records, not for a decision the log never made.
func TestForgedMarkersAreRefused(t *testing.T) {
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.txt")
	cases := []struct {
		name  string
		forge func(t *testing.T, s *Store, dir string, op *pendingOp)
		want  string
	}{
		{"absolute path", func(t *testing.T, s *Store, dir string, op *pendingOp) {
			op.Writes[0].Path = victim
		}, "its first write must be the new version v0002.toml"},
		{"dot-dot path", func(t *testing.T, s *Store, dir string, op *pendingOp) {
			rel, _ := filepath.Rel(dir, victim)
			op.Writes[0].Path = filepath.ToSlash(rel)
		}, "its first write must be the new version v0002.toml"},
		{"dot-dot fixture recorded in the entry too", func(t *testing.T, s *Store, dir string, op *pendingOp) {
			op.Writes[1].Path = "harvested/../../../victim.txt"
			op.Writes[1].Step = "fixture:victim.txt"
			reentry(t, op, func(e *LogEntry) { e.Harvested[0] = op.Writes[1].Path })
		}, "not a clean relative path"},
		{"absolute fixture recorded in the entry too", func(t *testing.T, s *Store, dir string, op *pendingOp) {
			op.Writes[1].Path = victim
			op.Writes[1].Step = "fixture:victim.txt"
			reentry(t, op, func(e *LogEntry) { e.Harvested[0] = victim })
		}, "not a clean relative path"},
		{"fixture outside", func(t *testing.T, s *Store, dir string, op *pendingOp) {
			op.Writes[1].Path = "harvested/../../../victim.txt"
		}, "not the fixture its log entry records"},
		{"other store file", func(t *testing.T, s *Store, dir string, op *pendingOp) {
			op.Writes[0].Path = HeadFile
		}, "its first write must be the new version v0002.toml"},
		{"hash mismatch", func(t *testing.T, s *Store, dir string, op *pendingOp) {
			op.Writes[0].Content = strings.Replace(op.Writes[0].Content, "ambiguous = 3", "ambiguous = 9", 1)
		}, "does not hash to the result_sha256"},
		{"fixture hash mismatch", func(t *testing.T, s *Store, dir string, op *pendingOp) {
			op.Writes[1].Content += "\n# more\n"
		}, "does not hash to the sha256 its log entry records"},
		{"consistent but not decided", func(t *testing.T, s *Store, dir string, op *pendingOp) {
			// content, its hash in the entry and the new sum all agree; the log decided ambiguous +1, not +7
			op.Writes[0].Content = strings.Replace(op.Writes[0].Content, "ambiguous = 3", "ambiguous = 9", 1)
			reentry(t, op, func(e *LogEntry) { e.ResultSHA256 = fileSHA([]byte(op.Writes[0].Content)) })
		}, "not v0001 plus the changes logged for proposal"},
		{"undecided proposal", func(t *testing.T, s *Store, dir string, op *pendingOp) {
			reentry(t, op, func(e *LogEntry) { e.Proposal = "p-000000000000" })
		}, `records no accept or halve decision`},
		{"empty", func(t *testing.T, s *Store, dir string, op *pendingOp) {
			op.Writes = nil
		}, "its first write must be the new version"},
		{"not chained", func(t *testing.T, s *Store, dir string, op *pendingOp) {
			reentry(t, op, func(e *LogEntry) { e.PrevHash = strings.Repeat("0", 64) })
		}, "does not chain to the log's last line"},
		{"symlink escape", func(t *testing.T, s *Store, dir string, op *pendingOp) {
			if err := os.MkdirAll(s.FixturesDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(s.FixturesDir, HarvestDir)); err != nil {
				t.Fatal(err)
			}
		}, "a symbolic link leads out of it"},
	}
	for _, c := range cases {
		for _, mode := range []string{"repair", "abort", "resign", "verify"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				s, dir, op := interrupted(t)
				c.forge(t, s, dir, op)
				writeMarker(t, dir, op)
				before, _ := os.ReadFile(filepath.Join(dir, LogFile))
				var err error
				switch mode {
				case "repair":
					_, err = s.Repair(false)
				case "abort":
					_, err = s.Repair(true)
				case "resign":
					_, err = s.Resign("forged")
				case "verify":
					// verify runs repair's check and names the forgery instead of sending the user to repair
					err = errors.New("verify found no forged marker")
					for _, p := range s.Verify() {
						if p.Kind == ProblemForged && p.File == PendingFile {
							err = errors.New(p.Message)
						}
						if strings.Contains(p.Message, "run `tune repair` to complete it") {
							t.Errorf("verify sends the user to repair: %s", p)
						}
					}
				}
				want := c.want
				switch {
				case c.name == "symlink escape" && mode != "verify":
					// a linked harvested/ is refused before any marker is read (regular.RealDirs)
					want = "harvested is a symbolic link, not a directory"
				case mode == "resign":
					want = "an interrupted operation is pending"
				}
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("%s: %v, want an error containing %q", mode, err, want)
				}
				if after, _ := os.ReadFile(filepath.Join(dir, LogFile)); string(after) != string(before) {
					t.Error("the log changed")
				}
				if _, err := os.Stat(filepath.Join(dir, "v0002.toml")); err == nil {
					t.Error("v0002.toml was written")
				}
				if entries, _ := os.ReadDir(outside); len(entries) > 0 {
					t.Errorf("something was written outside the store: %v", entries)
				}
			})
		}
	}
}

// The unforged marker of the same interruption completes (and, separately, aborts) as before.
func TestGenuineMarkerStillRepairs(t *testing.T) {
	for _, abort := range []bool{false, true} {
		s, dir, _ := interrupted(t)
		ps := s.Verify()
		if len(ps) == 0 || ps[0].Kind != ProblemPending || !strings.Contains(ps[0].Message, "run `tune repair` to complete it") {
			t.Fatalf("verify of a genuine marker: %v", ps)
		}
		if _, err := s.Repair(abort); err != nil {
			t.Fatal(err)
		}
		mustVerify(t, s)
		want := 2
		if abort {
			want = 1
		}
		if v := activeVersion(t, dir); v != want {
			t.Fatalf("abort=%v: active %d", abort, v)
		}
	}
}

// An edited proposal never applies: without its id it is a new proposal the log never decided; with its
// id the id no longer matches; a proposal the log decided with another change does not match its log.
func TestEditedProposalIsRefused(t *testing.T) {
	s, dir := freshStore(t)
	p := decide(t, s, sampleProposal(t))
	path, _, err := WriteProposal(filepath.Join(dir, ProposalsDir), p)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	edited := strings.Replace(string(data), `"ambiguous": 3`, `"ambiguous": 4`, 1)
	lines := strings.Split(edited, "\n")
	var noID []string
	for _, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), `"id":`) {
			noID = append(noID, l)
		}
	}
	os.WriteFile(path, []byte(strings.Join(noID, "\n")), 0o644)
	q, err := ReadProposal(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(q); err == nil || !strings.Contains(err.Error(), "records no accept or halve decision") {
		t.Fatalf("edited proposal without id: %v", err)
	}
	os.WriteFile(path, []byte(edited), 0o644)
	if _, err := ReadProposal(path); err == nil || !strings.Contains(err.Error(), "does not match the content") {
		t.Fatalf("edited proposal with id: %v", err)
	}
	// a decision logged for the id, but with another change than the candidate makes
	r := sampleProposal(t)
	r.Reason = "another"
	if err := s.Log(LogEntry{Action: ActionAccept, Proposal: r.ComputeID(), ProposalSHA256: r.ContentSHA256(), Change: "greenfield +1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(r); err == nil || !strings.Contains(err.Error(), "not v0001 plus the changes logged") {
		t.Fatalf("candidate off its log: %v", err)
	}
	// a decision logged with another content hash
	u := sampleProposal(t)
	u.Reason = "third"
	if err := s.Log(LogEntry{Action: ActionAccept, Proposal: u.ComputeID(), ProposalSHA256: strings.Repeat("a", 64), Change: "ambiguous +1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(u); err == nil || !strings.Contains(err.Error(), "was edited after it was decided") {
		t.Fatalf("hash off its log: %v", err)
	}
	// the genuine one still applies
	if _, err := s.Apply(sampleProposal(t)); err != nil {
		t.Fatal(err)
	}
	// The file beside it is still the edited one: verify says so (weights show and diff refuse it), and
	// the decided bytes put back verify.
	if probs := s.Verify(); len(probs) != 1 || !strings.Contains(probs[0].Message, "is no longer the file that was decided") {
		t.Fatalf("an applied proposal's file edited: %v", probs)
	}
	os.WriteFile(path, data, 0o644)
	mustVerify(t, s)
	// Gone is not edited: a decided proposal's file may be removed.
	os.Remove(path)
	mustVerify(t, s)
}
