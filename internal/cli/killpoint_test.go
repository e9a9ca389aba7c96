package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/exitcode"
	"github.com/ldd-tools/tune/internal/faultpoint"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/tools/genhistory"
	"github.com/ldd-tools/tune/internal/weights"
)

// installKillPoint arms the kill point of the tune-killable command (docs/decisions.md#crash-injection-in-a-real-process):
// TUNE_TEST_KILL_AT=N kills the process with SIGKILL at its N-th file operation (faultpoint.Reach), and
// TUNE_TEST_KILL_AT="rename v0002.toml" at the first operation of that name (op and base name), and
// TUNE_TEST_KILL_AT="step version" right after the store's write step of that name.
// TUNE_TEST_KILL_LOG=FILE appends the name of every operation reached to FILE, one a line, before the kill.
func installKillPoint() {
	at, logPath := os.Getenv("TUNE_TEST_KILL_AT"), os.Getenv("TUNE_TEST_KILL_LOG")
	if at == "" && logPath == "" {
		return
	}
	nth, _ := strconv.Atoi(at)
	count := 0
	h := faultpoint.Hook(func(op, path string) {
		name := op + " " + tempSuffix.ReplaceAllString(filepath.Base(path), ".tmp-*")
		if op == faultpoint.Step {
			// The end of a store's write step ("step version"): a point to kill at by name; counted
			// among the file operations it would only repeat the kill before the next one.
			if name == at {
				killSelf()
			}
			return
		}
		count++
		if logPath != "" {
			if f, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				fmt.Fprintln(f, name)
				f.Close()
			}
		}
		if count == nth || name == at {
			killSelf()
		}
	})
	faultpoint.Installed.Store(&h)
}

// killSelf ends the process with SIGKILL: no deferred function, no cleanup runs.
func killSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill()
	}
	time.Sleep(time.Minute)
}

// tempSuffix is the random part of a temp file's name, left out of the names of kill points so that they
// are the same in every run.
var tempSuffix = regexp.MustCompile(`\.tmp-[0-9]+$`)

// killEnv is the environment of a tune child process working on the project in dir.
func killEnv(dir string, extra ...string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TUNE_") })
	return append(env, append([]string{"TUNE_NOW=2026-12-01T03:00:00Z",
		"TUNE_WEIGHTS_DIR=" + filepath.Join(dir, "weights"), "TUNE_FIXTURES_DIR=" + filepath.Join(dir, "fixtures"),
		"TUNE_REPORTS_DIR=" + filepath.Join(dir, "reports")}, extra...)...)
}

// runKillable runs tune-killable in dir and says whether the kill point killed it.
func runKillable(t *testing.T, dir string, env []string, args ...string) (killed bool, out string) {
	t.Helper()
	cmd := exec.Command("tune-killable", args...)
	cmd.Dir, cmd.Env = dir, env
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == -1 {
		return true, buf.String()
	}
	if errors.As(err, &exit) && exit.ExitCode() == exitcode.Escalation {
		return false, buf.String() // an escalation is a run that finished
	}
	if err != nil {
		t.Fatalf("tune-killable %v: %v\n%s", args, err, buf.String())
	}
	return false, buf.String()
}

// activeOf is the active version the log of the store in dir names; with intact, the store must verify.
func activeOf(t *testing.T, dir string, intact bool) string {
	t.Helper()
	code, out, errOut := projectRun(t, dir, "verify", "--json")
	if intact && code != 0 {
		t.Fatalf("verify after recovery: exit %d\n%s%s", code, out, errOut)
	}
	var v struct{ Active string }
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	return v.Active
}

// projectRun runs tune in-process on the project in dir (its weights, fixtures and reports).
func projectRun(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	return storeRun(t, filepath.Join(dir, "weights"), filepath.Join(dir, "fixtures"), nil,
		append([]string{"--reports-dir", filepath.Join(dir, "reports")}, args...)...)
}

// storeState is what must survive a kill: the active version, every version file and the sum, the
// harvested fixtures, the proposals, their saved inputs and reports, and how often the log records each
// applied proposal. No temp file of a killed write may be left anywhere in the project.
func storeState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "active %s\n", activeOf(t, dir, true))
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			fmt.Fprintf(&b, "left over: %s\n", strings.TrimPrefix(path, dir))
		}
		return nil
	})
	for _, pattern := range []string{"weights/v*.toml", "weights/" + store.SumFile, "fixtures/harvested/*.toml",
		"weights/" + store.ProposalsDir + "/*.json", "weights/" + store.ProposalsDir + "/inputs/*", "reports/*"} {
		files, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s sha256 %x\n", filepath.Base(f), sha256.Sum256(data))
		}
	}
	log, err := os.ReadFile(filepath.Join(dir, "weights", store.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	// every logged action about a proposal (its attempts, its apply), once each
	acts := regexp.MustCompile(`"action":"(accept|halve|revert|apply)"[^\n]*"proposal":"(p-[0-9a-f]{12})"`).FindAllStringSubmatch(string(log), -1)
	for _, m := range acts {
		fmt.Fprintf(&b, "%s %s\n", m[1], m[2])
	}
	return b.String()
}

// A real tune apply, started as a child process, is killed (SIGKILL) at each of its file operations in
// turn. After every kill, tune verify and tune repair bring the store back, a re-run of apply finishes
// the job, and the store ends exactly as an uninterrupted apply leaves it: the same versions and sum,
// the proposal applied once, no version lost.
func TestKilledApplyRecovers(t *testing.T) {
	base, id := harvestProject(t)
	want := killEachOperation(t, base, "apply", id)
	if !strings.Contains(want, "active v0002\n") || !strings.Contains(want, "apply "+id+"\n") ||
		strings.Count(want, "\nh-") != 2 {
		t.Fatalf("the uninterrupted apply (two harvested fixtures):\n%s", want)
	}
}

// harvestProject is a project with the bundled weights and fixtures and an accepted proposal whose
// apply also harvests two flagged tasks into fixtures/harvested/ (so its fixture writes are killed at
// too); it returns the proposal's id.
func harvestProject(t *testing.T) (string, string) {
	t.Helper()
	base, _ := bundledProject(t)
	p := storeTestProposal(t)
	writeTestProposal(t, filepath.Join(base, "weights"), p)
	return base, p.ComputeID()
}

// The same for a rollback of the applied version, and for the repair of an apply killed after its
// marker: a killed repair is repaired again, and no version is lost.
func TestKilledRollbackAndRepairRecover(t *testing.T) {
	applied, id := killProject(t, true)
	if killed, out := runKillable(t, applied, killEnv(applied), "apply", id); killed {
		t.Fatalf("apply was killed:\n%s", out)
	}
	t.Run("rollback", func(t *testing.T) {
		want := killEachOperation(t, applied, "rollback")
		if !strings.Contains(want, "active v0003\n") || !strings.Contains(want, "v0003.toml sha256") {
			t.Fatalf("the uninterrupted rollback:\n%s", want)
		}
	})
	t.Run("repair", func(t *testing.T) {
		pending, id := harvestProject(t)
		if killed, out := runKillable(t, pending, killEnv(pending, "TUNE_TEST_KILL_AT=rename v0002.toml"), "apply", id); !killed {
			t.Fatalf("apply was not killed:\n%s", out)
		}
		want := killEachOperation(t, pending, "repair")
		if !strings.Contains(want, "active v0002\n") || !strings.Contains(want, "apply "+id+"\n") || strings.Count(want, "\nh-") != 2 {
			t.Fatalf("the uninterrupted repair:\n%s", want)
		}
	})
	// repair --abort of an apply killed once its version and fixtures were written: a killed abort is
	// aborted again, and ends with neither the version nor the fixtures, the sum restored
	t.Run("repair-abort", func(t *testing.T) {
		pending, id := harvestProject(t)
		if killed, out := runKillable(t, pending, killEnv(pending, "TUNE_TEST_KILL_AT=rename weights.sum"), "apply", id); !killed {
			t.Fatalf("apply was not killed:\n%s", out)
		}
		want := killEachOperation(t, pending, "repair", "--abort")
		if !strings.Contains(want, "active v0001\n") || strings.Contains(want, "v0002.toml") || strings.Contains(want, "\nh-") ||
			strings.Contains(want, "apply "+id) {
			t.Fatalf("the uninterrupted repair --abort:\n%s", want)
		}
	})
}

// The same for a nightly run (it proposes, never applies): killed at any of its writes (the attempt
// entries, the proposal, its report input and report), the re-run night writes the same proposal, and the
// log holds its attempts once; none is lost.
func TestKilledNightlyRecovers(t *testing.T) {
	base, _ := killProject(t, false)
	killEachOperation(t, base, "nightly", "--logs", "api.trace.log")
}

// A nightly run that escalates (exit 3: a history that needs two steps, capped at one) also writes the
// escalation state dump under reports/: killed at any of its writes, it recovers in the same way. By
// default only the writes from the state dump on are killed at (those before are TestKilledNightlyRecovers').
func TestKilledEscalatingNightlyRecovers(t *testing.T) {
	base, w := bundledProject(t)
	// Since issue 28 the two-step history converges in one +2; its deep twin (flagged tasks at -6) keeps
	// the trigger after it, so the capped run escalates.
	h, _ := genhistory.TwoStep(1, &w)
	if err := os.WriteFile(filepath.Join(base, "api.trace.log"), h.Render(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "deep.trace.log"), genhistory.DeepStep(1, &w).Render(), 0o644); err != nil {
		t.Fatal(err)
	}
	want := killOperationsFrom(t, base, "evolve-state-", "nightly", "--max-steps", "1", "--logs", "api.trace.log", "--logs", "deep.trace.log")
	if !strings.Contains(want, "evolve-state-p-") {
		t.Fatalf("the uninterrupted nightly did not escalate:\n%s", want)
	}
}

// tune repair says which temp files of killed writes it removed (nothing is repaired silently), in text
// and in --json, also when there is nothing else to repair.
func TestRepairNamesTheTempFilesItRemoves(t *testing.T) {
	dir, _ := bundledProject(t)
	os.MkdirAll(filepath.Join(dir, "reports"), 0o755)
	temps := []string{filepath.Join(dir, "reports", ".proposal-p-1.md.tmp-1"), filepath.Join(dir, "weights", ".weights.sum.tmp-2")}
	for _, p := range temps {
		os.WriteFile(p, nil, 0o644)
	}
	code, out, _ := projectRun(t, dir, "verify")
	if code != 1 || strings.Count(out, ": stale: ") != 2 {
		t.Fatalf("verify: exit %d\n%s", code, out)
	}
	code, out, errOut := projectRun(t, dir, "repair")
	if code != 0 || !strings.Contains(out, "removed 2 temp file(s) left by killed writes:\n  "+temps[1]+"\n  "+temps[0]+"\n") ||
		!strings.Contains(out, "nothing else to repair: the weights store is intact") {
		t.Fatalf("repair: exit %d\n%s%s", code, out, errOut)
	}
	os.WriteFile(temps[0], nil, 0o644)
	code, out, _ = projectRun(t, dir, "repair", "--json")
	var rep struct{ Removed []string }
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || !slices.Equal(rep.Removed, temps[:1]) {
		t.Fatalf("repair --json: exit %d\n%s", code, out)
	}
	if code, out, _ := projectRun(t, dir, "verify"); code != 0 {
		t.Fatalf("verify after repair: exit %d\n%s", code, out)
	}
}

// bundledProject is a fresh directory holding copies of the bundled weights and fixtures, and v0001.
func bundledProject(t *testing.T) (string, weights.Weights) {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"weights", "fixtures"} {
		if err := copyDir(filepath.Join(repoRoot(), d), filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	w, err := weights.Load(filepath.Join(dir, "weights", "v0001.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, w
}

// killProject is a project with the bundled weights and fixtures and a phase-3 trace log (api.trace.log)
// that proposes one change; with propose, the proposal is written and its id returned.
func killProject(t *testing.T, propose bool) (string, string) {
	t.Helper()
	base, w := bundledProject(t)
	h, _ := genhistory.Phase3Gate(1, &w)
	logPath := filepath.Join(base, "api.trace.log")
	if err := os.WriteFile(logPath, h.Render(), 0o644); err != nil {
		t.Fatal(err)
	}
	if !propose {
		return base, ""
	}
	code, out, errOut := storeRun(t, filepath.Join(base, "weights"), filepath.Join(base, "fixtures"), nil,
		"--reports-dir", filepath.Join(base, "reports"), "propose", logPath)
	if code != 0 {
		t.Fatalf("propose: exit %d\n%s", code, errOut)
	}
	id := regexp.MustCompile(`proposal (p-[0-9a-f]{12}):`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("propose wrote no proposal:\n%s", out)
	}
	return base, id[1]
}

// killEachOperation runs tune-killable ARGS once uninterrupted (the state every recovery must reach, and
// the list of its file operations), then once per operation, killed there, in a fresh copy of base:
// verify, repair when verify fails, verify again, run ARGS again, and compare. A rollback is not run
// again when the active version already moved (it is not idempotent: a user reads tune history first).
func killEachOperation(t *testing.T, base string, args ...string) (want string) {
	t.Helper()
	return killOperationsFrom(t, base, "", args...)
}

// killOperationsFrom is killEachOperation that, unless TUNE_TEST_KILL_ALL is set, kills only from the
// first operation on a file named from: the operations before it are another test's.
func killOperationsFrom(t *testing.T, base, from string, args ...string) (want string) {
	t.Helper()
	ref := t.TempDir()
	if err := copyDir(base, ref); err != nil {
		t.Fatal(err)
	}
	points := filepath.Join(t.TempDir(), "points")
	if killed, out := runKillable(t, ref, killEnv(ref, "TUNE_TEST_KILL_LOG="+points), args...); killed {
		t.Fatalf("%v without a kill point was killed:\n%s", args, out)
	}
	want = storeState(t, ref)
	if !strings.Contains(want, "accept p-") {
		t.Fatalf("the uninterrupted %v:\n%s", args, want)
	}
	data, err := os.ReadFile(points)
	if err != nil {
		t.Fatal(err)
	}
	ops := strings.Split(strings.TrimSpace(string(data)), "\n")
	if !slices.Contains(ops, "rename evolution.jsonl") {
		t.Fatalf("%v never appends to the log; it reaches %v", args, ops)
	}
	// apply's marker: from its rename to its removal an interrupted apply is visible (-1, -1 without one)
	marked, unmarked := slices.Index(ops, "rename .pending.json"), slices.Index(ops, "remove .pending.json")
	before := activeOf(t, base, false)
	all := os.Getenv("TUNE_TEST_KILL_ALL") != ""
	first := 0
	if from != "" && !all {
		first = slices.IndexFunc(ops, func(op string) bool { return strings.HasPrefix(strings.SplitN(op, " ", 2)[1], from) })
		if first < 0 {
			t.Fatalf("%v reaches no operation on %s*: %v", args, from, ops)
		}
	}
	for _, k := range killSample(ops, all) {
		if k < first {
			continue
		}
		t.Run(fmt.Sprintf("%02d-%s", k+1, strings.ReplaceAll(ops[k], " ", "-")), func(t *testing.T) {
			dir := t.TempDir()
			if err := copyDir(base, dir); err != nil {
				t.Fatal(err)
			}
			if killed, out := runKillable(t, dir, killEnv(dir, "TUNE_TEST_KILL_AT="+strconv.Itoa(k+1)), args...); !killed {
				t.Fatalf("not killed at operation %d (%s):\n%s", k+1, ops[k], out)
			}
			code, out, _ := projectRun(t, dir, "verify")
			if k > marked && k <= unmarked && (code == 0 || !strings.Contains(out, "pending: an interrupted ")) {
				t.Fatalf("killed between writing and removing the marker (%s), verify does not report it:\n%s", ops[k], out)
			}
			if code != 0 { // repair completes; a killed repair --abort is aborted again
				recovery := []string{"repair"}
				if args[0] == "repair" {
					recovery = args
				}
				if code, out, errOut := projectRun(t, dir, recovery...); code != 0 {
					t.Fatalf("repair after a kill at %s: exit %d\n%s%s", ops[k], code, out, errOut)
				}
			}
			if code, out, _ := projectRun(t, dir, "verify"); code != 0 {
				t.Fatalf("the store does not verify after repair (kill at %s):\n%s", ops[k], out)
			}
			if args[0] != "rollback" || activeOf(t, dir, true) == before {
				// in this process, in the project as the child ran (no kill point; the same clock and
				// directories as killEnv's): a child costs twice the CPU
				t.Chdir(dir)
				if code, out, errOut := projectRun(t, dir, args...); code != 0 && code != exitcode.Escalation {
					t.Fatalf("the re-run after a kill at %s: exit %d\n%s%s", ops[k], code, out, errOut)
				}
			}
			if got := storeState(t, dir); got != want {
				t.Errorf("after a kill at %s and recovery:\n%s\nwant (uninterrupted):\n%s", ops[k], got, want)
			}
		})
	}
	return want
}

// killSample is the indexes of ops the kill tests kill at: with all, every one; otherwise one kill per
// state of the disk a kill can leave (docs/decisions.md#crash-injection-in-a-real-process). Every create
// (the temp file there, empty), rename (the temp file whole, synced) and remove is killed at. write and
// fsync leave the disk as the create and rename around them do, and dirsync (renamed, the directory not
// yet synced) as the next create does, less its empty temp file: of those, the first of each kind is
// killed at (so each kind is shown to be reached and survived), and every dirsync that no create follows
// (before a removal, or the command's last operation). TUNE_TEST_KILL_ALL=1 kills at all of them.
func killSample(ops []string, all bool) []int {
	kind := func(k int) string {
		if k >= len(ops) {
			return ""
		}
		op, _, _ := strings.Cut(ops[k], " ")
		return op
	}
	var out []int
	seen := map[string]bool{}
	for k := range ops {
		op := kind(k)
		switch {
		case all, !seen[op], op == faultpoint.Create, op == faultpoint.Rename, op == faultpoint.Remove,
			op == faultpoint.DirSync && kind(k+1) != faultpoint.Create:
			out = append(out, k)
		}
		seen[op] = true
	}
	return out
}

// tune verify runs repair's own marker check: a marker left by a killed apply and then edited (the
// version it would write gets another weight) is named as forged, with the reason, where verify used
// to say "run tune repair", which then refused. The genuine marker still sends the user to repair.
func TestVerifyNamesAForgedMarker(t *testing.T) {
	base, id := killProject(t, true)
	if killed, out := runKillable(t, base, killEnv(base, "TUNE_TEST_KILL_AT=rename v0002.toml"), "apply", id); !killed {
		t.Fatalf("apply was not killed:\n%s", out)
	}
	wd, fd := filepath.Join(base, "weights"), filepath.Join(base, "fixtures")
	code, out, _ := storeRun(t, wd, fd, nil, "verify")
	if code != 1 || !strings.Contains(out, ".pending.json: pending: an interrupted apply") || !strings.Contains(out, "run `tune repair`") {
		t.Fatalf("verify of the genuine marker: exit %d\n%s", code, out)
	}
	marker := filepath.Join(wd, store.PendingFile)
	data, err := os.ReadFile(marker)
	if err != nil {
		t.Fatal(err)
	}
	forged := strings.Replace(string(data), `layer-crossings = 4`, `layer-crossings = 9`, 1)
	if forged == string(data) {
		t.Fatalf("the marker does not hold the new version's weights:\n%s", data)
	}
	if err := os.WriteFile(marker, []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = storeRun(t, wd, fd, nil, "verify")
	if code != 1 || !strings.Contains(out, ".pending.json: forged: does not match an operation recorded in evolution.jsonl: the content it writes to v0002.toml does not hash to the result_sha256") ||
		strings.Contains(out, "run `tune repair`") {
		t.Fatalf("verify of the forged marker: exit %d\n%s", code, out)
	}
	code, out, _ = storeRun(t, wd, fd, nil, "verify", "--json")
	if code != 1 || !strings.Contains(out, `"kind": "forged"`) {
		t.Fatalf("verify --json of the forged marker: exit %d\n%s", code, out)
	}
	code, _, errOut := storeRun(t, wd, fd, nil, "repair")
	if code != 1 || !strings.Contains(errOut, "does not hash to the result_sha256") {
		t.Fatalf("repair of the forged marker: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(wd, "v0002.toml")); err == nil {
		t.Fatal("v0002.toml was written from the forged marker")
	}
}
