package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/ldd-tools/tune/internal/app"
)

// nightlyFixture lays out a weights store, the fixture suite and the two-step and deep histories from the
// evolve script in a temporary directory.
func nightlyFixture(t *testing.T) (dir string, f *Factory, out, errOut *bytes.Buffer) {
	t.Helper()
	dir = t.TempDir()
	root := repoRoot()
	for _, d := range []string{"weights", "fixtures"} {
		if err := copyDir(filepath.Join(root, d), filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"twostep.log", "deep.log"} {
		log := extractTxtarFile(t, filepath.Join("testdata", "script", "evolve_loop.txtar"), name)
		if err := os.WriteFile(filepath.Join(dir, name), log, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut = &bytes.Buffer{}, &bytes.Buffer{}
	env := map[string]string{"TUNE_WEIGHTS_DIR": filepath.Join(dir, "weights"), "TUNE_FIXTURES_DIR": filepath.Join(dir, "fixtures"),
		"TUNE_REPORTS_DIR": filepath.Join(dir, "reports")}
	f = &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}, Getenv: func(k string) string { return env[k] },
		Now:        func() time.Time { return time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC) },
		WeightsDir: env["TUNE_WEIGHTS_DIR"], FixturesDir: env["TUNE_FIXTURES_DIR"], ReportsDir: env["TUNE_REPORTS_DIR"]}
	return dir, f, out, errOut
}

func runNightly(f *Factory, args ...string) int {
	root := NewRootCmd(f)
	root.SetArgs(append([]string{"nightly"}, args...))
	_, err := root.ExecuteC()
	return exitCode(err, f.IO.ErrOut)
}

func TestNightlyRefusesASecondConcurrentRun(t *testing.T) {
	dir, f, out, errOut := nightlyFixture(t)
	held := flock.New(filepath.Join(f.WeightsDir, app.NightlyLockName))
	if ok, err := held.TryLock(); !ok || err != nil {
		t.Fatalf("taking the lock: %v", err)
	}
	code := runNightly(f, filepath.Join(dir, "twostep.log"))
	if code != ExitError || !strings.Contains(errOut.String(), "another tune nightly is running") {
		t.Fatalf("exit %d, stderr %q: want 1 and a clear refusal", code, errOut.String())
	}
	if out.Len() != 0 {
		t.Fatalf("a refused run printed %q", out.String())
	}
	if _, err := os.Stat(filepath.Join(f.WeightsDir, "proposals")); !os.IsNotExist(err) {
		t.Fatal("a refused run wrote a proposal")
	}
	held.Unlock()
	if code := runNightly(f, filepath.Join(dir, "twostep.log")); code != ExitOK {
		t.Fatalf("after the lock is released: exit %d, stderr %s", code, errOut.String())
	}
}

func TestNightlyTwiceGivesOneProposalAndTheSameReport(t *testing.T) {
	dir, f, out, errOut := nightlyFixture(t)
	logs := filepath.Join(dir, "*.log")
	if code := runNightly(f, "--logs", logs); code != ExitOK {
		t.Fatalf("first run: exit %d: %s", code, errOut.String())
	}
	first := readDir(t, f.ReportsDir)
	logBytes, err := os.ReadFile(filepath.Join(f.WeightsDir, "evolution.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	firstOut := out.String()
	out.Reset()
	f.Now = func() time.Time { return time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC) } // the next night
	if code := runNightly(f, "--logs", logs); code != ExitOK {
		t.Fatalf("second run: exit %d: %s", code, errOut.String())
	}
	second := readDir(t, f.ReportsDir)
	if len(first) == 0 || len(first) != len(second) {
		t.Fatalf("reports %v then %v", keys(first), keys(second))
	}
	for name, data := range first {
		if !bytes.Equal(data, second[name]) {
			t.Errorf("report %s changed between two runs on the same inputs", name)
		}
	}
	proposals, _ := filepath.Glob(filepath.Join(f.WeightsDir, "proposals", "*.json"))
	if len(proposals) != 1 {
		t.Fatalf("proposals %v, want exactly one", proposals)
	}
	again, _ := os.ReadFile(filepath.Join(f.WeightsDir, "evolution.jsonl"))
	if !bytes.Equal(logBytes, again) {
		t.Fatal("the second run appended to the evolution log")
	}
	if !strings.Contains(firstOut, "written") || !strings.Contains(out.String(), "unchanged (same proposal already pending)") {
		t.Fatalf("outputs do not say written / unchanged:\n%s\n%s", firstOut, out.String())
	}
}

func TestNightlyEscalatesWithExitThree(t *testing.T) {
	dir, f, out, errOut := nightlyFixture(t)
	// twostep.log converges in one step (+2); deep.log's tasks (-6) still trigger after it.
	code := runNightly(f, filepath.Join(dir, "twostep.log"), filepath.Join(dir, "deep.log"), "--max-steps", "1")
	if code != ExitEscalation {
		t.Fatalf("exit %d, want 3; stderr %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "state dump: ") || !strings.Contains(out.String(), app.EscalationDoc) {
		t.Fatalf("output does not point to the state dump and the playbook:\n%s", out.String())
	}
	dumps, _ := filepath.Glob(filepath.Join(f.ReportsDir, "evolve-state-*.json"))
	if len(dumps) != 1 {
		t.Fatalf("state dumps %v", dumps)
	}
	// Reports and the state dump are reviewed and committed: readable by everyone, like the store.
	written, _ := filepath.Glob(filepath.Join(f.ReportsDir, "*"))
	for _, p := range written {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", p, fi.Mode().Perm())
		}
	}
}

func TestNightlyGlobMatchingNothingIsAnError(t *testing.T) {
	dir, f, _, errOut := nightlyFixture(t)
	if code := runNightly(f, "--logs", filepath.Join(dir, "missing-*.log")); code != ExitError {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(errOut.String(), "matches no trace log") {
		t.Fatalf("stderr %q", errOut.String())
	}
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = data
	}
	return out
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// extractTxtarFile reads one file section of a txtar archive.
func extractTxtarFile(t *testing.T, archive, name string) []byte {
	t.Helper()
	a, err := txtar.ParseFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range a.Files {
		if f.Name == name {
			return f.Data
		}
	}
	t.Fatalf("%s has no file %s", archive, name)
	return nil
}

// tune report proposal after tune nightly rewrites the very bytes nightly wrote: it renders the input
// saved with the proposal and never re-runs a step (it used to, and wrote a poorer report over it).
func TestReportProposalAfterNightlyKeepsTheReportByteIdentical(t *testing.T) {
	dir, f, out, errOut := nightlyFixture(t)
	if code := runNightly(f, "--logs", filepath.Join(dir, "*.log")); code != ExitOK {
		t.Fatalf("nightly: exit %d: %s", code, errOut.String())
	}
	nightly := readDir(t, f.ReportsDir)
	if len(nightly) == 0 {
		t.Fatal("nightly wrote no report")
	}
	// The trace log is gone: a report that re-ran the step could not find it.
	if err := os.Remove(filepath.Join(dir, "twostep.log")); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	root := NewRootCmd(f)
	root.SetArgs([]string{"report", "proposal"})
	_, err := root.ExecuteC()
	if code := exitCode(err, f.IO.ErrOut); code != ExitOK || errOut.Len() != 0 {
		t.Fatalf("report proposal: exit %d, stderr %q", code, errOut.String())
	}
	after := readDir(t, f.ReportsDir)
	if len(after) != len(nightly) {
		t.Fatalf("reports %v, then %v", keys(nightly), keys(after))
	}
	for name, data := range nightly {
		if !bytes.Equal(data, after[name]) {
			t.Errorf("report %s changed: tune report proposal did not regenerate nightly's bytes", name)
		}
	}
}

// TestNightlyBranchJSONFieldsLocked: the fields --branch adds to tune nightly --json are exactly these,
// and --help names each (the recipes of docs/nightly.md read them with jq; a new field needs this test
// and --help updated).
func TestNightlyBranchJSONFieldsLocked(t *testing.T) {
	data, err := json.Marshal(app.BranchResult{})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	const want = "base body_file body_path branch branch_proposal branch_updated commit supersedes title"
	if got := objectKeys(t, m); got != want {
		t.Errorf("fields %q, want %q", got, want)
	}
	help := NewCmdNightly(&Factory{IO: &IOStreams{}}).Long
	for _, k := range strings.Fields(want) {
		if !strings.Contains(help, `"`+k+`"`) {
			t.Errorf("--help does not document the --json field %q", k)
		}
	}
}
