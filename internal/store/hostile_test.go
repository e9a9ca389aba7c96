package store

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/weights"
)

// readersRefuse checks that every way of reading weights refuses the store with want in the error.
func readersRefuse(t *testing.T, dir, want string) {
	t.Helper()
	s, err := Open(dir, clock)
	if err != nil {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("Open: %v, want %q", err, want)
		}
		return
	}
	for name, read := range map[string]func() error{
		"Active":        func() error { _, err := s.Active(); return err },
		"Version(1)":    func() error { _, err := s.Version(1); return err },
		"ActiveVersion": func() error { _, err := s.ActiveVersion(); return err },
		"ActiveWeights": func() error { _, err := ActiveWeights(dir); return err },
		"OpenActive":    func() error { _, _, err := OpenActive(dir, clock); return err },
	} {
		if err := read(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, want)
		}
	}
}

// An edited version whose checksum was patched into the log breaks the chain: verify says so, and so does
// every reader (score, replay, detect, weights show and diff read through these).
func TestEditedVersionWithPatchedLogHashIsRefusedByReaders(t *testing.T) {
	s, dir := applied(t)
	if err := s.Log(LogEntry{Action: ActionProposeAttempt, Change: "ambiguous +1", Reason: "attempt"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "v0003.toml")
	rewrite(t, path, func(s string) string { return strings.Replace(s, "single-file = -3", "single-file = -2", 1) })
	data, _ := os.ReadFile(path)
	logPath := filepath.Join(dir, LogFile)
	rewrite(t, logPath, func(s string) string {
		lines := strings.Split(s, "\n")
		var e LogEntry
		if err := unmarshalEntry([]byte(lines[3]), &e); err != nil || e.Result != 3 {
			t.Fatalf("line 4 is not the rollback to v0003: %+v %v", e, err)
		}
		lines[3] = strings.Replace(lines[3], e.ResultSHA256, fileSHA(data), 1)
		return strings.Join(lines, "\n")
	})
	if probs := joinProblems(s.Verify()); !strings.Contains(probs, "evolution.jsonl:5: chain: prev_hash does not match line 4") {
		t.Fatalf("verify: %s", probs)
	}
	readersRefuse(t, dir, "does not verify")
}

// Dropping the last log lines is caught by the anchor, also when the older weights.sum is put back.
func TestTruncatedLogIsCaughtByTheAnchor(t *testing.T) {
	for _, drop := range []int{1, 2} {
		s, dir := applied(t)
		if err := s.Log(LogEntry{Action: ActionProposeAttempt, Change: "ambiguous +1", Reason: "attempt"}); err != nil {
			t.Fatal(err)
		}
		mustVerify(t, s)
		logPath := filepath.Join(dir, LogFile)
		rewrite(t, logPath, func(s string) string {
			lines := strings.SplitAfter(s, "\n")
			return strings.Join(lines[:len(lines)-1-drop], "")
		})
		// The command to run names the log from the working directory, the project root here (the first
		// review of the set-up commands: `git checkout -- evolution.jsonl` failed there).
		t.Chdir(filepath.Dir(dir))
		probs := joinProblems(s.Verify())
		if !strings.Contains(probs, "evolution.head: head: anchors serial 5, but evolution.jsonl ends at serial "+string(rune('5'-drop))) ||
			!strings.Contains(probs, "restore evolution.jsonl from version control (git checkout -- "+filepath.Base(dir)+"/evolution.jsonl)") {
			t.Errorf("drop %d: verify says:\n%s", drop, probs)
		}
		want := "lines were removed"
		if drop == 2 {
			want = "v0003.toml: extra" // the rollback's line is gone too: its version is not recorded
		}
		readersRefuse(t, dir, want)
	}
}

// A crash between the log append and the anchor leaves the anchor one line behind: still intact.
func TestAnchorOneLineBehindIsACrashNotATamper(t *testing.T) {
	s, dir := applied(t)
	old, _ := os.ReadFile(filepath.Join(dir, HeadFile))
	if err := s.Log(LogEntry{Action: ActionProposeAttempt, Change: "ambiguous +1", Reason: "attempt"}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, HeadFile), old, 0o644)
	mustVerify(t, s)
	// but a missing anchor is a problem, resolved by --resign once the log is known to be right
	os.Remove(filepath.Join(dir, HeadFile))
	if probs := joinProblems(s.Verify()); !strings.Contains(probs, "evolution.head: missing") {
		t.Fatalf("verify without anchor:\n%s", probs)
	}
	readersRefuse(t, dir, "evolution.head: missing")
	if _, err := s.Resign("anchor lost in a merge"); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, s)
}

// Store files that are not regular files are refused by verify and readers, without hanging.
func TestSymlinkAndFIFOInTheStore(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(t *testing.T, dir string)
		want   string
		reader string
	}{
		{"symlinked version", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "v0003.toml")
			outside := filepath.Join(t.TempDir(), "v.toml")
			data, _ := os.ReadFile(p)
			os.WriteFile(outside, data, 0o644)
			os.Remove(p)
			if err := os.Symlink(outside, p); err != nil {
				t.Fatal(err)
			}
		}, "v0003.toml: not-regular: is a symbolic link", "v0003.toml: not-regular"},
		{"FIFO log", func(t *testing.T, dir string) {
			p := filepath.Join(dir, LogFile)
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}, "evolution.jsonl: not-regular: is a FIFO", "evolution.jsonl: not-regular"},
		{"device as sum", func(t *testing.T, dir string) {
			p := filepath.Join(dir, SumFile)
			os.Remove(p)
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		}, "weights.sum: not-regular", "weights.sum: not-regular"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, dir := applied(t)
			c.setup(t, dir)
			done := make(chan string)
			go func() {
				done <- joinProblems(s.Verify())
			}()
			select {
			case probs := <-done:
				if !strings.Contains(probs, c.want) {
					t.Fatalf("verify:\n%s", probs)
				}
				// said once: a linked file is not also "not on disk" (the first review of the set-up commands)
				if name, _, _ := strings.Cut(c.want, ":"); strings.Contains(probs, name+": missing") {
					t.Errorf("verify says the file is both a link or FIFO and missing:\n%s", probs)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("verify hangs")
			}
			readersRefuse(t, dir, c.reader)
			if _, err := s.Rollback(1); err == nil {
				t.Fatal("a write went ahead")
			}
		})
	}
}

// A temp file left by a killed write is reported by verify, ignored by readers and removed by the next
// write (here: tune repair, which finds nothing else to do).
func TestStaleTempFilesAreReportedAndCleaned(t *testing.T) {
	s, dir := applied(t)
	tmp := filepath.Join(dir, ".evolution.jsonl.tmp-123")
	os.WriteFile(tmp, []byte("half a line"), 0o644)
	os.MkdirAll(filepath.Join(dir, ProposalsDir), 0o755)
	tmp2 := filepath.Join(dir, ProposalsDir, ".p-1.json.tmp-9")
	os.WriteFile(tmp2, []byte("{"), 0o644)
	// a report input whose write was killed (found by TestKilledNightlyRecovers in cli)
	os.MkdirAll(filepath.Join(dir, ProposalsDir, InputsDir), 0o755)
	tmp3 := filepath.Join(dir, ProposalsDir, InputsDir, ".p-1.toml.tmp-7")
	os.WriteFile(tmp3, nil, 0o644)
	probs := joinProblems(s.Verify())
	if !strings.Contains(probs, ".evolution.jsonl.tmp-123: stale") || !strings.Contains(probs, "proposals/.p-1.json.tmp-9: stale") ||
		!strings.Contains(probs, "proposals/inputs/.p-1.toml.tmp-7: stale") {
		t.Fatalf("verify:\n%s", probs)
	}
	if _, err := s.Active(); err != nil {
		t.Fatalf("a reader refused over a temp file: %v", err)
	}
	if _, err := s.Repair(false); !errors.Is(err, ErrNothingToDo) {
		t.Fatal(err)
	}
	for _, p := range []string{tmp, tmp2, tmp3} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s still there", p)
		}
	}
	mustVerify(t, s)
	if w, _ := s.Active(); w.Version != 3 {
		t.Fatal(w.Version)
	}
	_ = weights.Schema
}

// A report or harvested-fixture write killed before its rename leaves a temp file under the reports or
// fixtures directory, which a commit of either would take along (found by TestKilledNightlyRecovers and
// TestKilledApplyRecovers in cli): verify reports it by its path when it is told the directories. Every
// store write removes the fixture's (harvested fixtures are only written under the store lock); only
// repair removes the report's (reports are written outside it). Reports and fixtures themselves stay.
func TestStaleTempFilesOutsideTheStoreAreReportedAndCleaned(t *testing.T) {
	s, _ := applied(t)
	reports, fixtures := filepath.Join(t.TempDir(), "reports"), t.TempDir()
	harvested := filepath.Join(fixtures, HarvestDir)
	os.MkdirAll(filepath.Join(reports, ".dir.tmp-4"), 0o755) // not a file tune writes: left alone
	os.MkdirAll(harvested, 0o755)
	tmp := filepath.Join(reports, ".proposal-p-1.md.tmp-77")
	os.WriteFile(tmp, []byte("# half a rep"), 0o644)
	tmpFixture := filepath.Join(harvested, ".h-0123456789ab.toml.tmp-5")
	os.WriteFile(tmpFixture, nil, 0o644)
	keep := []string{filepath.Join(reports, "proposal-p-1.md"), filepath.Join(reports, ".keep"), filepath.Join(harvested, "h-0123456789ab.toml")}
	for _, p := range keep {
		os.WriteFile(p, []byte("x"), 0o644)
	}
	mustVerify(t, s) // without those directories, verify looks at the store only
	s.ReportsDir, s.FixturesDir = reports, fixtures
	probs := s.Verify()
	if len(probs) != 2 || probs[0].Kind != ProblemStale || probs[0].File != tmpFixture ||
		probs[1].Kind != ProblemStale || probs[1].File != tmp || !strings.Contains(probs[1].Message, "`tune repair` removes it") {
		t.Fatalf("verify:\n%s", joinProblems(probs))
	}
	if _, err := s.Active(); err != nil {
		t.Fatalf("a reader refused over a temp file outside the store: %v", err)
	}
	if _, err := s.Rollback(0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmpFixture); err == nil || !slices.Equal(s.RemovedTemps(), []string{tmpFixture}) {
		t.Errorf("a store write left %s (it says it removed %v)", tmpFixture, s.RemovedTemps())
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Errorf("a store write removed the report's temp file %s", tmp)
	}
	if _, err := s.Repair(false); !errors.Is(err, ErrNothingToDo) {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); err == nil || !slices.Equal(s.RemovedTemps(), []string{tmp}) {
		t.Errorf("%s still there (repair says it removed %v)", tmp, s.RemovedTemps())
	}
	for _, p := range append(keep, filepath.Join(reports, ".dir.tmp-4")) {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("removed %s", p)
		}
	}
	mustVerify(t, s)
}
