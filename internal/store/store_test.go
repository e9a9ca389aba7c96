package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/weights"
)

var testNow = time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)

func clock() time.Time { return testNow }

// freshStore copies the shipped weights/v0001.toml into a temp dir: the store as a user gets it.
func freshStore(t *testing.T) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "weights")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(testutil.ReferenceWeightsPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "v0001.toml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, clock)
	if err != nil {
		t.Fatal(err)
	}
	s.FixturesDir = filepath.Join(filepath.Dir(dir), "fixtures")
	return s, dir
}

func mustVerify(t *testing.T, s *Store) {
	t.Helper()
	if probs := s.Verify(); len(probs) > 0 {
		t.Fatalf("store does not verify:\n%s", joinProblems(probs))
	}
}

func joinProblems(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.String() + "\n")
	}
	return b.String()
}

func activeVersion(t *testing.T, dir string) int {
	t.Helper()
	w, err := ActiveWeights(dir)
	if err != nil {
		t.Fatal(err)
	}
	return w.Version
}

func TestFreshStoreVerifiesAndIsActive(t *testing.T) {
	s, dir := freshStore(t)
	mustVerify(t, s)
	if v := activeVersion(t, dir); v != 1 {
		t.Fatalf("active = %d, want 1", v)
	}
	if serial, lineage := s.Head(); serial != 0 || lineage != "" {
		t.Fatalf("head of a fresh store = %d %q", serial, lineage)
	}
}

func TestApplyVerifyRollbackVerify(t *testing.T) {
	s, dir := freshStore(t)
	p := decide(t, s, sampleProposal(t))
	out, err := s.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	if out.Weights.Version != 2 || out.Weights.Parent != 1 || out.Weights.Signals[weights.Ambiguous] != weights.Whole(3) {
		t.Fatalf("applied %+v", out.Weights)
	}
	mustVerify(t, s)
	if v := activeVersion(t, dir); v != 2 {
		t.Fatalf("active after apply = %d", v)
	}
	// harvest: the one flagged task with a prompt, dispatched L1, expected L2
	if len(out.Harvested) != 1 {
		t.Fatalf("harvested %v", out.Harvested)
	}
	fx, _ := os.ReadFile(out.Harvested[0])
	if !bytes.Contains(fx, []byte(`levels = ["L2"]`)) || !bytes.Contains(fx, []byte(`prompt = "maybe refactor the auth flow somehow"`)) {
		t.Errorf("harvested fixture:\n%s", fx)
	}
	// applying again is nothing to do
	if _, err := s.Apply(p); !errors.Is(err, ErrNothingToDo) {
		t.Errorf("second apply: %v", err)
	}
	rb, err := s.Rollback(0)
	if err != nil {
		t.Fatal(err)
	}
	mustVerify(t, s)
	ref := loadReference(t)
	if rb.Weights.Version != 3 || rb.Weights.Parent != 2 || !sameContent(&rb.Weights, &ref) || rb.Weights.Reason != "rollback to v0001" {
		t.Fatalf("rollback wrote %+v", rb.Weights)
	}
	if v := activeVersion(t, dir); v != 3 {
		t.Fatalf("active after rollback = %d", v)
	}
	for _, n := range []string{"v0001.toml", "v0002.toml", "v0003.toml"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s: %v (nothing may be deleted)", n, err)
		}
	}
	// the proposal measured against v0001 no longer applies
	q := sampleProposal(t)
	q.Candidate.Signals[weights.Greenfield]++
	q.Parent = 3
	decide(t, s, q)
	q.Parent = 1
	if _, err := s.Apply(q); err == nil || !strings.Contains(err.Error(), "the active version is v0003") {
		t.Errorf("stale-parent apply: %v", err)
	}
	entries, _ := s.Entries()
	var actions []string
	for _, e := range entries {
		actions = append(actions, fmt.Sprintf("%d:%s:%d->%d", e.Serial, e.Action, e.Parent, e.Result))
	}
	if got := strings.Join(actions, " "); got != "1:init:0->1 2:accept:1->0 3:apply:1->2 4:rollback:2->3 5:accept:3->0 6:accept:3->0" {
		t.Errorf("log = %s", got)
	}
}

func TestApplyRefusesRevertedAndNone(t *testing.T) {
	s, _ := freshStore(t)
	for _, d := range []weights.Decision{weights.DecisionRevert, weights.DecisionNone} {
		p := sampleProposal(t)
		p.Decision = d
		if _, err := s.Apply(p); err == nil || !strings.Contains(err.Error(), "nothing to apply") {
			t.Errorf("%s: %v", d, err)
		}
	}
}

func TestRollbackOfFirstVersionIsNothingToDo(t *testing.T) {
	s, _ := freshStore(t)
	if _, err := s.Rollback(0); !errors.Is(err, ErrNothingToDo) {
		t.Fatalf("got %v", err)
	}
	if _, err := s.Rollback(7); err == nil || !strings.Contains(err.Error(), "v0007.toml does not exist") {
		t.Fatalf("got %v", err)
	}
}

// applied returns a store with v0001 (init), v0002 (apply) and v0003 (rollback).
func applied(t *testing.T) (*Store, string) {
	s, dir := freshStore(t)
	if _, err := s.Apply(decide(t, s, sampleProposal(t))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Rollback(0); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, s)
	return s, dir
}

func rewrite(t *testing.T, path string, f func(string) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := f(string(data))
	if out == string(data) {
		t.Fatalf("tamper of %s changed nothing", path)
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

// relink rewrites the log lines with f and then recomputes the hash chain, so that only the check under
// test (serial, lineage) can catch the change.
func relink(t *testing.T, dir string, f func(*LogEntry)) {
	data, _ := os.ReadFile(filepath.Join(dir, LogFile))
	lines, _, _ := parseLog(data)
	var out bytes.Buffer
	prev := ""
	for _, l := range lines {
		e := l.Entry
		f(&e)
		e.PrevHash = prev
		raw := e.marshalLine()
		prev = lineHash(raw)
		out.Write(raw)
		out.WriteByte('\n')
	}
	os.WriteFile(filepath.Join(dir, LogFile), out.Bytes(), 0o644)
}

func TestVerifyNamesEveryTamper(t *testing.T) {
	cases := []struct {
		name   string
		tamper func(t *testing.T, dir string)
		want   []string // substrings of the problem list
	}{
		{"edit version", func(t *testing.T, dir string) {
			rewrite(t, filepath.Join(dir, "v0002.toml"), func(s string) string { return strings.Replace(s, "ambiguous = 3", "ambiguous = 4", 1) })
		}, []string{"v0002.toml: edited: content differs from the sha256 recorded in evolution.jsonl line 3"}},
		{"edit first version", func(t *testing.T, dir string) {
			rewrite(t, filepath.Join(dir, "v0001.toml"), func(s string) string { return strings.Replace(s, "greenfield = 3", "greenfield = 3.5", 1) })
		}, []string{"v0001.toml: edited"}},
		{"delete version", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "v0002.toml")) },
			[]string{"v0002.toml: missing: recorded in evolution.jsonl line 3 but not on disk"}},
		{"extra version", func(t *testing.T, dir string) {
			data, _ := os.ReadFile(filepath.Join(dir, "v0003.toml"))
			os.WriteFile(filepath.Join(dir, "v0004.toml"), bytes.Replace(data, []byte("version = 3"), []byte("version = 4"), 1), 0o644)
		}, []string{"v0004.toml: extra: not recorded in evolution.jsonl"}},
		{"edit sum entry", func(t *testing.T, dir string) {
			rewrite(t, filepath.Join(dir, SumFile), func(s string) string {
				lines := strings.Split(s, "\n")
				lines[2] = "v0002.toml h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
				return strings.Join(lines, "\n")
			})
		}, []string{"weights.sum:1: sum: the header checksum does not match", "weights.sum:3: sum: the entry for v0002.toml does not match, but the file matches evolution.jsonl line 3"}},
		{"delete sum", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, SumFile)) },
			[]string{"weights.sum: missing"}},
		{"malformed sum", func(t *testing.T, dir string) { os.WriteFile(filepath.Join(dir, SumFile), []byte("hello\n"), 0o644) },
			[]string{"weights.sum: sum: malformed: line 1"}},
		{"edit log line", func(t *testing.T, dir string) {
			rewrite(t, filepath.Join(dir, LogFile), func(s string) string { return strings.Replace(s, `"decision":"accept"`, `"decision":"halve"`, 1) })
		}, []string{"evolution.jsonl:3: chain: prev_hash does not match line 2"}},
		{"delete log line", func(t *testing.T, dir string) {
			rewrite(t, filepath.Join(dir, LogFile), func(s string) string {
				lines := strings.SplitAfter(s, "\n")
				return lines[0] + lines[1] + lines[3] // the apply
			})
		}, []string{"evolution.jsonl:3: chain: prev_hash does not match line 2", "evolution.jsonl:3: serial: serial 4 follows serial 2", "v0002.toml: extra: not recorded"}},
		{"truncate log", func(t *testing.T, dir string) {
			rewrite(t, filepath.Join(dir, LogFile), func(s string) string { return s[:len(s)-20] })
		}, []string{"evolution.jsonl:4: log: not a log entry", "evolution.jsonl:4: log: the last line has no newline"}},
		{"serial gap", func(t *testing.T, dir string) {
			relink(t, dir, func(e *LogEntry) {
				if e.Serial == 3 {
					e.Serial = 5
				}
			})
		}, []string{"evolution.jsonl:3: serial: serial 5 follows serial 2"}},
		{"lineage change", func(t *testing.T, dir string) {
			relink(t, dir, func(e *LogEntry) {
				if e.Serial == 3 {
					e.Lineage = "0123456789abcdef"
				}
			})
		}, []string{"evolution.jsonl:3: lineage: lineage changed from"}},
		{"delete log", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, LogFile)) },
			[]string{"evolution.jsonl: missing: not found, but v0002.toml has a parent (v0001)"}},
		{"pending marker", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, PendingFile), []byte("{"), 0o644)
		}, []string{".pending.json: pending: unreadable marker"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, dir := applied(t)
			c.tamper(t, dir)
			got := joinProblems(s.Verify())
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in\n%s", w, got)
				}
			}
			// a tampered store refuses new writes, and every reader of weights refuses it too (an
			// interrupted operation's marker alone does not stop a reader: the log still names the active version)
			if _, err := s.Rollback(1); err == nil {
				t.Errorf("rollback on a tampered store succeeded")
			}
			if c.name != "pending marker" {
				readersRefuse(t, dir, "does not verify")
			}
		})
	}
}

func TestHandEditRefusedByActiveWeightsAndBlessedByResign(t *testing.T) {
	s, dir := applied(t)
	rewrite(t, filepath.Join(dir, "v0003.toml"), func(s string) string { return strings.Replace(s, "single-file = -3", "single-file = -2", 1) })
	if _, err := ActiveWeights(dir); err == nil || !strings.Contains(err.Error(), "v0003.toml: edited: content differs") {
		t.Fatalf("ActiveWeights on an edited file: %v", err)
	}
	res, err := s.Resign("tuned by hand after review")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Entry.Reason, "MANUAL EDIT ACCEPTED") || !strings.Contains(res.Entry.Reason, "v0003.toml") {
		t.Errorf("resign entry: %+v", res.Entry)
	}
	mustVerify(t, s)
	w, err := ActiveWeights(dir)
	if err != nil || w.Signals[weights.SingleFile] != weights.Whole(-2) {
		t.Fatalf("after resign: %v %v", w.Signals, err)
	}
	// once re-signed, nothing differs: a second --resign has nothing to do and logs nothing
	logBefore, _ := os.ReadFile(filepath.Join(dir, LogFile))
	if _, err := s.Resign("again"); !errors.Is(err, ErrNothingToDo) {
		t.Errorf("resign of a store that verifies: %v, want nothing to do", err)
	}
	if logAfter, _ := os.ReadFile(filepath.Join(dir, LogFile)); !bytes.Equal(logAfter, logBefore) {
		t.Errorf("resign with nothing to re-sign wrote the log:\n%s", logAfter[len(logBefore):])
	}
	os.Remove(filepath.Join(dir, "v0002.toml"))
	if _, err := s.Resign(""); err == nil || !strings.Contains(err.Error(), "a deleted version is not an edit") {
		t.Errorf("resign over a deleted file: %v", err)
	}
}

func TestStaleSerialIsRefused(t *testing.T) {
	s1, dir := freshStore(t)
	s2, err := Open(dir, clock)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Log(LogEntry{Action: ActionProposeAttempt, Change: "ambiguous +1", Decision: weights.DecisionRevert}); err != nil {
		t.Fatal(err)
	}
	err = s1.Log(LogEntry{Action: ActionProposeAttempt, Change: "greenfield +1"})
	var stale *StaleError
	if !errors.As(err, &stale) || stale.ExpectedSerial != 0 || stale.HeadSerial != 2 {
		t.Fatalf("stale writer: %v", err)
	}
	if !strings.Contains(err.Error(), "expected the evolution log at serial 0, but it is at serial 2") {
		t.Errorf("message: %v", err)
	}
	// s2 moved its own head forward and may keep writing
	if err := s2.Log(LogEntry{Action: ActionAccept, Change: "ambiguous +1"}); err != nil {
		t.Fatal(err)
	}
	// an explicit expectation works too
	s2.Expect(1)
	if err := s2.Log(LogEntry{Action: ActionAccept}); !errors.As(err, &stale) {
		t.Fatalf("Expect(1): %v", err)
	}
	mustVerify(t, s2)
	if err := s2.Log(LogEntry{Action: ActionApply}); err == nil {
		t.Error("Log accepted an apply entry")
	}
}

func TestConcurrentAppliesExactlyOneWins(t *testing.T) {
	s0, dir := freshStore(t)
	const n = 6
	for i := range n {
		p := sampleProposal(t)
		p.Candidate.Signals[weights.Signal(i%int(weights.NumSignals))] += 2
		decide(t, s0, p)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s, err := Open(dir, clock)
			if err != nil {
				errs[i] = err
				return
			}
			p := sampleProposal(t)
			p.Candidate.Signals[weights.Signal(i%int(weights.NumSignals))] += 2 // six different proposals on v0001
			_, errs[i] = s.Apply(p)
		}(i)
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		}
	}
	if ok != 1 {
		t.Fatalf("%d applies succeeded, want exactly 1: %v", ok, errs)
	}
	s, _ := Open(dir, clock)
	mustVerify(t, s)
	if vs, _ := s.Versions(); len(vs) != 2 {
		t.Fatalf("versions %v", vs)
	}
}

// applySteps lists the crash points of an apply on a fresh store that harvests one fixture.
func applySteps(t *testing.T) []string {
	p := sampleProposal(t)
	h, err := harvestFixtures("fx", p, 2)
	if err != nil || len(h) != 1 {
		t.Fatal(h, err)
	}
	return Steps(h[0].Path)
}

func TestCrashBetweenEveryStepThenRepair(t *testing.T) {
	for _, abort := range []bool{false, true} {
		for _, step := range applySteps(t) {
			t.Run(fmt.Sprintf("%s/abort=%v", step, abort), func(t *testing.T) {
				s, dir := freshStore(t)
				decide(t, s, sampleProposal(t))
				if err := crashAt(afterStep(step), func() error { _, err := s.Apply(sampleProposal(t)); return err }); !errors.Is(err, ErrInjectedCrash) {
					t.Fatalf("crash hook at %s did not fire: %v", step, err)
				}
				s2, err := reopen(t, dir)
				if err != nil {
					t.Fatal(err)
				}
				probs := s2.Verify()
				marker := false
				for _, p := range probs {
					marker = marker || p.Kind == ProblemPending
				}
				switch {
				case len(probs) == 0:
					// the crash hit before the marker or after it was removed: the store is consistent
				case marker:
					if _, err := s2.Apply(sampleProposal(t)); err == nil || !strings.Contains(err.Error(), "interrupted operation") {
						t.Fatalf("apply on a dirty store: %v", err)
					}
					res, err := s2.Repair(abort)
					if abort && step == "log" {
						// the apply is committed: abort is refused, completing works
						if err == nil || !strings.Contains(err.Error(), "already logged") {
							t.Fatalf("abort after log: %v", err)
						}
						res, err = s2.Repair(false)
					}
					if err != nil {
						t.Fatal(err)
					}
					if res.Entry.Action != ActionRepair {
						t.Fatalf("repair logged %+v", res.Entry)
					}
				default:
					t.Fatalf("after a crash at %s the store has problems but no marker:\n%s", step, joinProblems(probs))
				}
				mustVerify(t, s2)
				want := 2
				if abort && step != "log" && step != "done" && marker {
					want = 1 // aborted before commit
				}
				if v := activeVersion(t, dir); v != want {
					t.Fatalf("active = %d, want %d", v, want)
				}
				// the store still works afterwards
				if _, err := s2.Apply(sampleProposal(t)); want == 1 && err != nil {
					t.Fatalf("apply after recovery: %v", err)
				}
				mustVerify(t, s2)
				if _, err := os.Stat(filepath.Join(dir, PendingFile)); err == nil {
					t.Fatal("marker left behind")
				}
			})
		}
	}
}

func TestRollbackCrashThenRepair(t *testing.T) {
	for _, step := range Steps() {
		t.Run(step, func(t *testing.T) {
			s, dir := freshStore(t)
			if _, err := s.Apply(decide(t, s, sampleProposal(t))); err != nil {
				t.Fatal(err)
			}
			if err := crashAt(afterStep(step), func() error { _, err := s.Rollback(0); return err }); !errors.Is(err, ErrInjectedCrash) {
				t.Fatal(err)
			}
			s2, _ := reopen(t, dir)
			if len(s2.Verify()) > 0 {
				if _, err := s2.Repair(false); err != nil {
					t.Fatal(err)
				}
			}
			mustVerify(t, s2)
			if v := activeVersion(t, dir); v != 3 {
				t.Fatalf("active %d, want the rollback v0003", v)
			}
		})
	}
}

func TestRepairWithoutMarkerIsNothingToDo(t *testing.T) {
	s, _ := freshStore(t)
	if _, err := s.Repair(false); !errors.Is(err, ErrNothingToDo) {
		t.Fatal(err)
	}
}

func TestSumFileFormat(t *testing.T) {
	_, dir := applied(t)
	data, _ := os.ReadFile(filepath.Join(dir, SumFile))
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "h1:") || !strings.HasPrefix(lines[1], "v0001.toml h1:") || !strings.HasPrefix(lines[3], "v0003.toml h1:") {
		t.Fatalf("sum file:\n%s", data)
	}
	// each entry commits to the files before it: changing v0001 changes every entry
	files := []versionFile{{Name: "a", Data: []byte("1")}, {Name: "b", Data: []byte("2")}}
	e1 := sumOf(files)
	files[0].Data = []byte("x")
	e2 := sumOf(files)
	if e1[0].Hash == e2[0].Hash || e1[1].Hash == e2[1].Hash {
		t.Error("running hash does not chain")
	}
}

func TestVersionFilesReadWell(t *testing.T) {
	_, dir := applied(t)
	data, _ := os.ReadFile(filepath.Join(dir, "v0002.toml"))
	for _, want := range []string{
		"# tune weights v0002 (parent v0001)\n",
		"# reason: +1 ambiguous: 2 low-side regressions\n",
		"# evidence: proposal p-",
		"2 flagged task(s); suite loss 0.500 -> 0.250",
		"ambiguous = 3\n",
	} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("v0002.toml lacks %q:\n%s", want, data)
		}
	}
	data, _ = os.ReadFile(filepath.Join(dir, "v0003.toml"))
	if !bytes.Contains(data, []byte("# reason: rollback to v0001\n")) {
		t.Errorf("v0003.toml:\n%s", data)
	}
}

// TestHelperApplyProcess is not a test: TestConcurrentAppliesAcrossProcesses runs the test binary with
// STORE_HELPER_DIR set, and this function then applies one proposal and exits 0 (applied) or 1.
func TestHelperApplyProcess(t *testing.T) {
	dir := os.Getenv("STORE_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	s, err := Open(dir, clock)
	if err == nil {
		p := sampleProposal(t)
		p.Reason += " from " + os.Getenv("STORE_HELPER_ID")
		_, err = s.Apply(p)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func TestConcurrentAppliesAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	s0, dir := freshStore(t)
	const n = 3
	for i := range n {
		p := sampleProposal(t)
		p.Reason += fmt.Sprintf(" from %d", i)
		decide(t, s0, p)
	}
	cmds := make([]*exec.Cmd, n)
	outs := make([]bytes.Buffer, n)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestHelperApplyProcess$")
		cmds[i].Env = append(os.Environ(), "STORE_HELPER_DIR="+dir, fmt.Sprintf("STORE_HELPER_ID=%d", i))
		cmds[i].Stderr = &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	ok := 0
	for i, c := range cmds {
		if err := c.Wait(); err == nil {
			ok++
		} else if !strings.Contains(outs[i].String(), "refusing to write") && !strings.Contains(outs[i].String(), "active version is v0002") &&
			// the proposals ask for the same weights: once one is applied, the others are nothing to do
			!strings.Contains(outs[i].String(), "active version v0002 already has its weights") {
			t.Errorf("process %d failed for an unexpected reason: %s", i, outs[i].String())
		}
	}
	if ok != 1 {
		t.Fatalf("%d processes applied, want exactly 1", ok)
	}
	s, _ := Open(dir, clock)
	mustVerify(t, s)
}

// TestCrashDuringRepairThenRepairAgain: repair itself can be interrupted (after it logged the operation, or
// after it logged its own entry); running it again finishes without a second copy of anything.
func TestCrashDuringRepairThenRepairAgain(t *testing.T) {
	for _, step := range []string{"version", "sum", "log", "repair-log"} {
		t.Run(step, func(t *testing.T) {
			s, dir := freshStore(t)
			decide(t, s, sampleProposal(t))
			if err := crashAt(afterStep("pending"), func() error { _, err := s.Apply(sampleProposal(t)); return err }); !errors.Is(err, ErrInjectedCrash) {
				t.Fatal(err)
			}
			r, _ := reopen(t, dir)
			if err := crashAt(afterStep(step), func() error { _, err := r.Repair(false); return err }); !errors.Is(err, ErrInjectedCrash) {
				t.Fatalf("repair crash at %s: %v", step, err)
			}
			r2, _ := reopen(t, dir)
			res, err := r2.Repair(false)
			if err != nil {
				t.Fatal(err)
			}
			if step == "repair-log" && res.Action != "cleared" {
				t.Errorf("second repair after the repair entry: %+v", res)
			}
			mustVerify(t, r2)
			entries, _ := r2.Entries()
			var actions []string
			for _, e := range entries {
				actions = append(actions, e.Action)
			}
			if got := strings.Join(actions, ","); got != "init,accept,apply,repair" {
				t.Errorf("log actions %s", got)
			}
			if v := activeVersion(t, dir); v != 2 {
				t.Errorf("active %d", v)
			}
		})
	}
}

// decide logs p's decision as tune propose does (Store.Propose: one accept entry per change from its
// parent, with the proposal's content hash), so that Apply accepts it.
func decide(t testing.TB, s *Store, p *Proposal) *Proposal {
	t.Helper()
	parent, err := s.Version(p.Parent)
	if err != nil {
		t.Fatal(err)
	}
	var attempts []LogEntry
	for _, c := range Changes(&parent, &p.Candidate) {
		change := c.Name + " " + c.Delta().String()
		if c.Kind == "bucket" {
			change = "bucket " + c.Name + " edge " + c.Delta().String()
		}
		attempts = append(attempts, LogEntry{Action: ActionAccept, Change: change, Decision: weights.DecisionAccept, Reason: "test"})
	}
	if _, _, _, err := s.Propose(p, attempts, nil); err != nil {
		t.Fatal(err)
	}
	return p
}

// reopen opens the store in dir as a new run of tune would, with the fixtures directory of freshStore.
func reopen(t *testing.T, dir string) (*Store, error) {
	t.Helper()
	s, err := Open(dir, clock)
	if err == nil {
		s.FixturesDir = filepath.Join(filepath.Dir(dir), "fixtures")
	}
	return s, err
}

// Propose saves the report input beside a proposal under the store lock, so another writer's removal
// of temp files left by killed writes cannot remove it mid-write, and logs its sha256 with the
// attempts; a re-run (the proposal exists) encodes it from the stored proposal and rewrites it only
// when it is the logged one.
func TestProposeSavesTheInputUnderTheLockAndLogsItsHash(t *testing.T) {
	s, dir := freshStore(t)
	attempts := []LogEntry{{Action: ActionAccept, Change: "ambiguous +1", Decision: weights.DecisionAccept}}
	for run, body := range []string{"first", "first", "second"} {
		called := false
		p, _, created, err := s.Propose(sampleProposal(t), attempts,
			func(stored *Proposal) ([]byte, error) {
				called = true
				if ok, err := flock.New(filepath.Join(dir, LockFile)).TryLock(); ok || err != nil {
					t.Errorf("run %d: input ran without the store lock (%v)", run, err)
				}
				if stored.ID == "" {
					t.Errorf("run %d: input got a proposal without an id", run)
				}
				return []byte(body), nil
			})
		if err != nil || !called || created != (run == 0) {
			t.Fatalf("run %d: created %v, called %v, %v", run, created, called, err)
		}
		logged, err := s.LoggedInputSHA256(p.ID)
		if err != nil || logged != fileSHA([]byte("first")) {
			t.Errorf("run %d: logged input sha %q (%v), want the first run's", run, logged, err)
		}
		if got, _ := os.ReadFile(s.InputPath(p.ID)); string(got) != "first" {
			t.Errorf("run %d: saved input %q, want the logged one kept", run, got)
		}
	}
	// A logged proposal's missing input is written again when it is the logged one, and only then (a
	// re-run after a kill between the log and the proposal encodes another created time).
	p := sampleProposal(t)
	for _, c := range []struct{ body, want string }{{"other", ""}, {"first", "first"}} {
		os.Remove(s.InputPath(p.ComputeID()))
		if _, _, _, err := s.Propose(sampleProposal(t), attempts, func(*Proposal) ([]byte, error) { return []byte(c.body), nil }); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(s.InputPath(p.ComputeID())); string(got) != c.want {
			t.Errorf("input %q after a re-run encoding %q: want %q", got, c.body, c.want)
		}
	}
	if _, _, _, err := s.Propose(sampleProposal(t), nil, func(*Proposal) ([]byte, error) { return nil, errors.New("disk full") }); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("input's error was not returned: %v", err)
	}
}

// OpenActive must be Open followed by Active: the same Store head, weights and errors, and no Store
// exactly when Open fails.
func TestOpenActiveIsOpenThenActive(t *testing.T) {
	cases := map[string]func(t *testing.T) string{
		"fresh":   func(t *testing.T) string { _, dir := freshStore(t); return dir },
		"applied": func(t *testing.T) string { _, dir := applied(t); return dir },
		"edited version": func(t *testing.T) string {
			_, dir := applied(t)
			rewrite(t, filepath.Join(dir, "v0003.toml"), func(s string) string { return strings.Replace(s, "single-file = -3", "single-file = -2", 1) })
			return dir
		},
		"pending marker": func(t *testing.T) string {
			_, dir := applied(t)
			os.WriteFile(filepath.Join(dir, PendingFile), []byte("{"), 0o644)
			return dir
		},
		"no versions": func(t *testing.T) string { return t.TempDir() },
		"missing":     func(t *testing.T) string { return filepath.Join(t.TempDir(), "weights") },
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			dir := mk(t)
			s, w, err := OpenActive(dir, clock)
			want, openErr := Open(dir, clock)
			if openErr != nil {
				if s != nil || err == nil || err.Error() != openErr.Error() {
					t.Fatalf("OpenActive = %v, %v; Open failed with %v", s, err, openErr)
				}
				return
			}
			wantW, wantErr := want.Active()
			if s == nil {
				t.Fatalf("OpenActive gave no Store (%v); Open gave one", err)
			}
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Errorf("OpenActive error %v, Active's %v", err, wantErr)
			}
			if w != wantW {
				t.Errorf("OpenActive weights %+v, Active's %+v", w, wantW)
			}
			if s.serial != want.serial || s.lineage != want.lineage || s.Dir != want.Dir {
				t.Errorf("OpenActive's Store %d %q %q, Open's %d %q %q", s.serial, s.lineage, s.Dir, want.serial, want.lineage, want.Dir)
			}
			if name == "applied" && (err != nil || w.Version < 2) {
				t.Errorf("applied store: active %d, %v", w.Version, err)
			}
			if name == "edited version" && err == nil {
				t.Error("an edited version was read without an error")
			}
		})
	}
}
