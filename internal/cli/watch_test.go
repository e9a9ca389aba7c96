package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/watch"
	"github.com/ldd-tools/tune/internal/weights"
)

// watchStore makes a store whose v0002 (contract-rule-hit +1) was applied at 2026-11-01, and returns
// its directory.
func watchStore(t *testing.T) string {
	t.Helper()
	return watchStoreWith(t, func(w *weights.Weights) { w.Signals[weights.ContractRuleHit] += weights.Whole(1) },
		"contract-rule-hit +1", store.ProposalStep{Kind: "signal", Signal: "contract-rule-hit", Delta: weights.Whole(1), Decision: weights.DecisionAccept})
}

// watchStoreWith makes a store whose v0002 = change(v0001) was applied at 2026-11-01.
func watchStoreWith(t *testing.T, change func(*weights.Weights), logged string, step store.ProposalStep) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "weights")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../../weights/v0001.toml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "v0001.toml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	s, err := store.Open(dir, func() time.Time { return at })
	if err != nil {
		t.Fatal(err)
	}
	v1, err := s.Version(1)
	if err != nil {
		t.Fatal(err)
	}
	cand := v1
	change(&cand)
	p := &store.Proposal{Created: at, Parent: 1, Decision: weights.DecisionAccept, Candidate: cand, Reason: logged,
		Steps: []store.ProposalStep{step}}
	if _, _, err := store.WriteProposal(s.ProposalsPath(), p); err != nil {
		t.Fatal(err)
	}
	if err := s.Log(store.LogEntry{Action: store.ActionAccept, Parent: 1, Proposal: p.ID, ProposalSHA256: p.ContentSHA256(), Change: logged, Decision: weights.DecisionAccept}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(p); err != nil {
		t.Fatal(err)
	}
	return dir
}

// watchLog writes 40 tasks before the apply — 20 at L1 that v0002 lifts, 12 of them regressed, and
// 20 other L1 tasks, 1 regressed — and n after it, lifted to L2, of which regressed still regressed.
// v0002 raises only the 20 lifted tasks a level, so it pays from an excess of 20/(2·20 + 20) = 1/3, and
// the "not helping" test's null is 13/22 (Laplace) − 1/3 = 26%.
func watchLog(t *testing.T, n, regressed int) string {
	t.Helper()
	var b strings.Builder
	task := func(at time.Time, level, name, signals string, i int, reg bool) {
		ts := func(s int) string { return at.Add(time.Duration(s) * time.Second).Format(time.RFC3339) }
		fmt.Fprintf(&b, "%s  meta  %s/%s  dispatch=auto  signals=%s  task=\"task %d\"  loops=inner\n", ts(0), level, name, signals, i)
		fmt.Fprintf(&b, "%s  inner  k=1  skill=s  action=a  loss=0.100\n", ts(1))
		extra := ""
		if reg {
			extra = "  regression_followed=true"
		}
		fmt.Fprintf(&b, "%s  inner  close  terminal=complete  loss_final=0.100%s\n", ts(2), extra)
	}
	const lifted = "contract-rule-hit:+2,explicit-bugfix:-5,unknown-file-territory:+1"
	for i := range 20 {
		task(time.Date(2026, 10, 1, i, 0, 0, 0, time.UTC), "L1", "diagnostic", lifted, i, i < 12)
		task(time.Date(2026, 10, 2, i, 0, 0, 0, time.UTC), "L1", "diagnostic", "explicit-bugfix:-5", 100+i, i < 1)
	}
	for i := range n {
		task(time.Date(2026, 11, 2, i, 0, 0, 0, time.UTC), "L2", "deliberate", lifted, 20+i, i < regressed)
	}
	path := filepath.Join(t.TempDir(), "trace.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func watchCLI(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	return watchCLIEnv(t, dir, nil, args...)
}

// watchCLIEnv is watchCLI with more environment (COLUMNS).
func watchCLIEnv(t *testing.T, dir string, more map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	// A week after the last task of nightlyWatchLog: its logs quiet, every task settled (evolve.SettleAfter).
	env := map[string]string{"TUNE_NOW": "2026-11-23T00:00:00Z"}
	maps.Copy(env, more)
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Getenv: func(k string) string { return env[k] }}
	code := Run(f, append([]string{"--weights-dir", dir, "--fixtures-dir", filepath.Join(filepath.Dir(dir), "fixtures")}, args...))
	return code, out.String(), errOut.String()
}

// snapshot maps every file under dir to its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		out[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWatchEndToEnd: a change whose lifted tasks still regress is "not helping"; watch writes the
// rollback proposal and its logged decision (the log line and the log's head record) and nothing else; a second run writes nothing; tune
// apply takes the proposal and the active content is the parent's again.
func TestWatchEndToEnd(t *testing.T) {
	dir := watchStore(t)
	log := watchLog(t, 20, 14)
	before := snapshot(t, dir)
	code, out, errOut := watchCLI(t, dir, "watch", log)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// The proposal id hashes its evidence, which names the temporary log: the golden has it as <id>.
	id := regexp.MustCompile(`p-[0-9a-f]{12}`).FindString(out)
	golden := strings.NewReplacer(log, "trace.log", dir, "weights", id, "<id>").Replace(out)
	testutil.Golden(t, "watch_not_helping.txt", []byte(golden))
	after := snapshot(t, dir)
	var added, changed []string
	for p, c := range after {
		if old, ok := before[p]; !ok {
			added = append(added, p)
		} else if old != c {
			changed = append(changed, p)
		}
	}
	if len(after) != len(before)+1 || len(added) != 1 || !strings.Contains(added[0], string(filepath.Separator)+"proposals"+string(filepath.Separator)) ||
		len(changed) != 2 || !slices.ContainsFunc(changed, func(p string) bool { return filepath.Base(p) == "evolution.jsonl" }) {
		t.Fatalf("watch wrote more than a proposal and its logged decision: added %v, changed %v", added, changed)
	}
	logPath := filepath.Join(dir, "evolution.jsonl")
	if !strings.HasPrefix(after[logPath], before[logPath]) || strings.Count(after[logPath], "\n") != strings.Count(before[logPath], "\n")+1 {
		t.Fatalf("the log was not just appended one line")
	}
	// Again: the same rollback is already pending; nothing is written.
	code, out, _ = watchCLI(t, dir, "watch", "--json", log)
	var res struct {
		Verdict     string `json:"verdict"`
		Proposal    string `json:"proposal"`
		ProposalNew bool   `json:"proposal_new"`
	}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || res.Verdict != "not helping" || res.Proposal == "" || res.ProposalNew {
		t.Fatalf("second run: exit %d, %+v, %v", code, res, err)
	}
	if again := snapshot(t, dir); len(again) != len(after) || again[logPath] != after[logPath] {
		t.Fatalf("the second run wrote to the store")
	}
	// Review and apply it like any other proposal.
	code, out, errOut = watchCLI(t, dir, "apply", res.Proposal)
	if code != 0 {
		t.Fatalf("apply: exit %d: %s %s", code, out, errOut)
	}
	s, err := store.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	active, _ := s.Active()
	v1, _ := s.Version(1)
	if active.Version != 3 || len(store.Changes(&v1, &active)) != 0 {
		t.Fatalf("after apply: active v%d, changes against v0001 %v", active.Version, store.Changes(&v1, &active))
	}
	// v0003 has no tasks yet.
	code, out, _ = watchCLI(t, dir, "watch", log)
	if code != 0 || !strings.Contains(out, "TOO EARLY") || !strings.Contains(out, "10 more") {
		t.Errorf("watch of v0003: exit %d\n%s", code, out)
	}
	// v0002 is no longer active: the verdict stands, no proposal.
	code, out, _ = watchCLI(t, dir, "watch", "--version", "v0002", log)
	if code != 0 || !strings.Contains(out, "NOT HELPING") || !strings.Contains(out, "no longer active") {
		t.Errorf("watch --version v0002: exit %d\n%s", code, out)
	}
}

func TestWatchVerdictsJSON(t *testing.T) {
	dir := watchStore(t)
	for _, c := range []struct {
		name          string
		after, regr   int
		verdict       string
		writesNothing bool
	}{
		{"holding", 20, 0, "holding", true},
		{"too-early", 5, 0, "too early", true},
	} {
		before := snapshot(t, dir)
		log := watchLog(t, c.after, c.regr)
		code, out, errOut := watchCLI(t, dir, "watch", "--json", log)
		if code != 0 || errOut != "" {
			t.Fatalf("%s: exit %d %s", c.name, code, errOut)
		}
		out = strings.ReplaceAll(out, log, "trace.log") // the moved tasks name the temporary log
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil || m["verdict"] != c.verdict {
			t.Fatalf("%s: verdict %v (%v)", c.name, m["verdict"], err)
		}
		delete(m, "logs")
		data, _ := json.MarshalIndent(m, "", "  ")
		testutil.Golden(t, "watch_"+c.name+".json", append(data, '\n'))
		if after := snapshot(t, dir); len(after) != len(before) {
			t.Errorf("%s: watch wrote to the store", c.name)
		}
	}
	if code, _, errOut := watchCLI(t, dir, "watch", "--version", "latest"); code != ExitUsage || !strings.Contains(errOut, "--version") {
		t.Errorf("--version 2: exit %d %s", code, errOut)
	}
}

// harmfulStore is watchStore with contract-rule-hit +6: a change that lifts watchLog's L1 tasks to L3.
func harmfulStore(t *testing.T) string {
	t.Helper()
	return watchStoreWith(t, func(w *weights.Weights) { w.Signals[weights.ContractRuleHit] += weights.Whole(6) },
		"contract-rule-hit +6", store.ProposalStep{Kind: "signal", Signal: "contract-rule-hit", Delta: weights.Whole(6), Decision: weights.DecisionAccept})
}

// harmfulLog is watchLog's 40 tasks before the apply, then 20 after of which 12 were lifted from L1
// to L3 by harmfulStore's change and were overkill (complete, k=1, loss 0). The change was credited
// with the lifted kind's excess, 13/22 − 2/22 = 0.5, so half of their raises were priced as unneeded:
// 12 of 12 is harmful by the overkill test (null 0.5 + 0.10).
func harmfulLog(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(mustRead(t, watchLog(t, 0, 0)))
	for i := range 20 {
		at := time.Date(2026, 11, 3, i, 0, 0, 0, time.UTC)
		ts := func(s int) string { return at.Add(time.Duration(s) * time.Second).Format(time.RFC3339) }
		level, signals := "L2/deliberate", "greenfield:+3"
		if i < 12 {
			level, signals = "L3/structural  creativity=standard", "contract-rule-hit:+2,explicit-bugfix:-5,unknown-file-territory:+1"
		}
		fmt.Fprintf(&b, "%s  meta  %s  dispatch=auto  signals=%s  task=\"after %d\"  loops=inner\n", ts(0), level, signals, i)
		fmt.Fprintf(&b, "%s  inner  k=1  skill=s  action=a  loss=0.000\n%s  inner  close  terminal=complete  loss_final=0.000\n", ts(1), ts(2))
	}
	log := filepath.Join(t.TempDir(), "trace.log")
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return log
}

// TestNightlyWatchHarmful: the nightly runs the watch first; a harmful version stops the evolve, and
// the summary and the EVAL report say what the watch found.
func TestNightlyWatchHarmful(t *testing.T) {
	dir := harmfulStore(t)
	log := harmfulLog(t)
	reports := filepath.Join(t.TempDir(), "reports")
	code, out, errOut := watchCLI(t, dir, "--reports-dir", reports, "nightly", log)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	for _, want := range []string{"watch: v0002 (parent v0001, contract-rule-hit +6) is HARMFUL", "were overkill", "outcome: watch-harmful", "did not evolve", "tune apply p-"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	s, err := store.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := s.Entries()
	for _, e := range entries {
		if e.Action == store.ActionProposeAttempt || e.Action == store.ActionRevert {
			t.Errorf("the evolve ran although the watch found the version harmful: %+v", e)
		}
	}
	mds, _ := filepath.Glob(filepath.Join(reports, "proposal-p-*.md"))
	if len(mds) != 1 {
		t.Fatalf("reports %v, want one EVAL report", mds)
	}
	md := mustRead(t, mds[0])
	for _, want := range []string{"## Watch", "**harmful**", "Rollback proposal p-", "| harmful: overkill | 12/12 | 60% | any worse |", "| 2026-11-03T00:00:00Z | after 0 | L1 → L3 | not helping, harmful: overkill | overkill: k=1, complete |"} {
		if !strings.Contains(md, want) {
			t.Errorf("EVAL report lacks %q:\n%s", want, md)
		}
	}
}

// TestWatchBucketRollback: a bucket-edge change (a downward one: the L1 edge up) found harmful gets a rollback proposal that tune apply
// accepts (its decision is logged in the evolution step's "bucket L1 edge" form).
func TestWatchBucketRollback(t *testing.T) {
	dir := watchStoreWith(t, func(w *weights.Weights) { w.Buckets.Edges[1] += weights.Whole(1) }, "bucket L1 edge +1",
		store.ProposalStep{Kind: "bucket", Edge: "L1", Delta: weights.Whole(1), Decision: weights.DecisionAccept})
	// single-file −3, ambiguous +2 scores −1: L2 under v0001 (L1 edge −2), L1 once the edge is −1.
	// Before, 1 of 20 such tasks regressed at L2; after, 15 of 20 regressed at L1.
	var b strings.Builder
	for i := range 40 {
		at := time.Date(2026, 10, 1, i, 0, 0, 0, time.UTC)
		level, reg := "L2/deliberate", i == 0
		if i >= 20 {
			at, level, reg = time.Date(2026, 11, 3, i-20, 0, 0, 0, time.UTC), "L1/diagnostic", i-20 < 15
		}
		ts := func(s int) string { return at.Add(time.Duration(s) * time.Second).Format(time.RFC3339) }
		extra := ""
		if reg {
			extra = "  regression_followed=true"
		}
		fmt.Fprintf(&b, "%s  meta  %s  dispatch=auto  signals=single-file:-3,ambiguous:+2  task=\"task %d\"  loops=inner\n%s  inner  k=1  loss=0.100\n%s  inner  close  terminal=complete%s\n", ts(0), level, i, ts(1), ts(2), extra)
	}
	log := filepath.Join(t.TempDir(), "trace.log")
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := watchCLI(t, dir, "watch", "--json", log)
	var res struct{ Verdict, Proposal string }
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || res.Verdict != "harmful" || res.Proposal == "" {
		t.Fatalf("exit %d %+v %v %s", code, res, err, errOut)
	}
	if code, out, errOut := watchCLI(t, dir, "apply", res.Proposal); code != 0 {
		t.Fatalf("apply: exit %d: %s %s", code, out, errOut)
	}
	s, err := store.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	active, _ := s.Active()
	v1, _ := s.Version(1)
	if active.Version != 3 || len(store.Changes(&v1, &active)) != 0 {
		t.Fatalf("after apply: v%d, differs from v0001 in %v", active.Version, store.Changes(&v1, &active))
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestReportHistoryAccuracy: given trace logs, the history report has the accuracy section, one row
// per version the tasks ran under, and the calibration chart with an interval per point.
func TestReportHistoryAccuracy(t *testing.T) {
	dir := watchStore(t)
	var b strings.Builder
	b.WriteString(mustRead(t, watchLog(t, 20, 7)))
	for i := range 4 { // two L0 failures and two L4 overkills after the apply
		at := time.Date(2026, 11, 5, i, 0, 0, 0, time.UTC)
		level, term := "L0/reflex", "failed"
		if i >= 2 {
			level, term = "L4/method  creativity=inventive", "complete"
		}
		fmt.Fprintf(&b, "%s  meta  %s  dispatch=auto  task=\"extra %d\"  loops=inner\n", at.Format(time.RFC3339), level, i)
		fmt.Fprintf(&b, "%s  inner  k=1  loss=0.000\n%s  inner  close  terminal=%s\n", at.Add(time.Second).Format(time.RFC3339), at.Add(2*time.Second).Format(time.RFC3339), term)
	}
	log := filepath.Join(t.TempDir(), "trace.log")
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "reports")
	code, stdout, errOut := watchCLI(t, dir, "report", "history", "--out", out, log)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, stdout, errOut)
	}
	mds, _ := filepath.Glob(filepath.Join(out, "history-*.md"))
	svgs, _ := filepath.Glob(filepath.Join(out, "history-*-calibration.svg"))
	if len(mds) != 1 || len(svgs) != 1 {
		t.Fatalf("files %v %v", mds, svgs)
	}
	md := mustRead(t, mds[0])
	for _, want := range []string{"## Dispatch accuracy by weights version", "| v0001 | 40 | 40 |", "| v0002 | 24 | 24 | 2/2 (100%,", "calibration.svg)"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	// Without logs, no section (and the report stays what it was).
	out2 := filepath.Join(t.TempDir(), "reports")
	if code, _, _ := watchCLI(t, dir, "report", "history", "--out", out2); code != 0 {
		t.Fatal(code)
	}
	mds, _ = filepath.Glob(filepath.Join(out2, "history-*.md"))
	if len(mds) != 1 || strings.Contains(mustRead(t, mds[0]), "Dispatch accuracy") {
		t.Errorf("a report without logs has the accuracy section: %v", mds)
	}
}

// nightlyWatchLog is watchLog(t, after, 0) (a change whose lifted tasks did not regress) followed by
// the two-step history of the evolve script moved into the month after the apply: its flagged tasks
// carry layer-crossings, not the changed signal, so the night's evolve has a pattern to propose on.
func nightlyWatchLog(t *testing.T, after int) string {
	t.Helper()
	twostep := string(extractTxtarFile(t, filepath.Join("testdata", "script", "evolve_loop.txtar"), "twostep.log"))
	twostep = strings.NewReplacer("2026-05-01T", "2026-11-11T", "2026-05-02T", "2026-11-12T", "2026-05-03T", "2026-11-13T", "2026-05-04T", "2026-11-14T", "2026-05-05T", "2026-11-15T").Replace(twostep)
	path := filepath.Join(t.TempDir(), "trace.log")
	if err := os.WriteFile(path, []byte(mustRead(t, watchLog(t, after, 0))+twostep), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNightlyWatchLetsTheEvolveRun: a verdict other than harmful (holding; too early, here under a
// tune.toml bound) lets the night's evolve run; the summary starts with the watch line and the
// proposal's EVAL report carries the Watch section, with no rollback proposal.
func TestNightlyWatchLetsTheEvolveRun(t *testing.T) {
	for _, c := range []struct {
		name, config string
		summary, md  []string
	}{
		{name: "holding", summary: []string{"watch: v0002 (parent v0001, contract-rule-hit +1) is HOLDING", "no test reached its threshold over the 20 task(s) v0002 moved"},
			md: []string{"is **holding**: no test reached its threshold", "| not helping | 0/20 | 26% | 59% |", "| 2026-11-02T00:00:00Z | task 20 | L1 → L2 | not helping | – |"}},
		{name: "too early", config: "[watch]\nmin_tasks = 200\n", summary: []string{"is TOO EARLY", "200 needed:"},
			md: []string{"is **too early**:", "200 needed:", "| not helping | 0/20 | 26% | 59% |"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := watchStore(t)
			if err := copyDir(filepath.Join(repoRoot(), "fixtures"), filepath.Join(filepath.Dir(dir), "fixtures")); err != nil {
				t.Fatal(err)
			}
			args := []string{"--reports-dir", filepath.Join(t.TempDir(), "reports"), "nightly"}
			if c.config != "" {
				cfg := filepath.Join(t.TempDir(), "tune.toml")
				if err := os.WriteFile(cfg, []byte(c.config), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--config", cfg)
			}
			code, out, errOut := watchCLI(t, dir, append(args, nightlyWatchLog(t, 20))...)
			if code != 0 {
				t.Fatalf("exit %d: %s %s", code, out, errOut)
			}
			if !strings.HasPrefix(out, "watch: ") || strings.Contains(out, "watch-harmful") || strings.Contains(out, "did not evolve") {
				t.Errorf("summary:\n%s", out)
			}
			for _, want := range append(c.summary, "proposal p-", "report: ") {
				if !strings.Contains(out, want) {
					t.Errorf("summary lacks %q:\n%s", want, out)
				}
			}
			mds, _ := filepath.Glob(filepath.Join(args[1], "proposal-p-*.md"))
			if len(mds) != 1 {
				t.Fatalf("reports %v, want the evolve's EVAL report", mds)
			}
			md := mustRead(t, mds[0])
			for _, want := range append(c.md, "## Watch", "(parent v0001, contract-rule-hit +1)") {
				if !strings.Contains(md, want) {
					t.Errorf("EVAL report lacks %q:\n%s", want, md)
				}
			}
			if strings.Contains(md, "Rollback proposal") {
				t.Errorf("a %s version got a rollback proposal:\n%s", c.name, md)
			}
			// The evolve's proposal is the only one: the watch wrote none.
			s, err := store.Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			pending, _ := s.PendingProposals()
			if len(pending) != 1 || pending[0].Parent != 2 || strings.Contains(pending[0].Reason, "tune watch") {
				t.Errorf("pending proposals %+v, want the evolve's one on v0002", pending)
			}
		})
	}
}

// TestWatchJSONFieldsLocked: the --json fields of tune watch, at every level, are exactly the ones
// --help documents (a new field needs this test and --help updated).
func TestWatchJSONFieldsLocked(t *testing.T) {
	code, out, errOut := watchCLI(t, watchStore(t), "watch", "--json", watchLog(t, 20, 14)) // not helping: a new proposal
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	keys := func(v any) string { return objectKeys(t, v) }
	first := func(v any) any {
		a, ok := v.([]any)
		if !ok || len(a) == 0 {
			t.Fatalf("%v is not a non-empty array", v)
		}
		return a[0]
	}
	rate := "hi k lo n rate"
	for _, c := range []struct {
		what string
		v    any
		want string
	}{
		{"top level", m, "active before changes config evidence logs moved moved_tasks not_counted " +
			"parent proposal proposal_new proposal_path reason tasks_after tasks_before tests verdict version warnings"},
		{"config", m["config"], "alpha min_recurrences min_tasks overkill_bound"},
		{"before", m["before"], "break_even_excess dropped excess lifted_while_low other_low overkill_high raised_levels"},
		{"before.other_low", m["before"].(map[string]any)["other_low"], rate},
		{"tests[0]", first(m["tests"]), "alt_rate basis e_value event k n name need_more null_rate rejected sample threshold"},
		{"moved_tasks[0]", first(m["moved_tasks"]), "event evidence from level line log meta_timestamp regressed task test to"},
		{"evidence[0]", first(m["evidence"]), "level line log meta_timestamp note task"},
	} {
		if got := keys(c.v); got != c.want {
			t.Errorf("%s: fields %q, want %q", c.what, got, c.want)
		}
	}
	help := NewCmdWatch(&Factory{IO: &IOStreams{}}).Long
	for _, k := range strings.Fields(keys(m) + " need_more proposal_note note " + keys(m["config"]) + " " + keys(first(m["tests"])) + " " + keys(first(m["moved_tasks"]))) {
		if !strings.Contains(help, k) {
			t.Errorf("--help does not document the --json field %q", k)
		}
	}
	// Every verdict has its own explanation line, and every [watch] bound of tune.toml is named.
	for _, v := range []string{watch.TooEarly, watch.Harmful, watch.NotHelping, watch.Holding} {
		if !regexp.MustCompile(`(?m)^  ` + v + ` +\S`).MatchString(help) {
			t.Errorf("--help does not explain the verdict %q on a line of its own", v)
		}
	}
	for _, k := range strings.Fields(keys(m["config"])) {
		if !regexp.MustCompile(`(?m)^  ` + k + ` = `).MatchString(help) {
			t.Errorf("--help does not show the tune.toml key %q", k)
		}
	}
}

// TestWatchHarmfulJSON locks the --json of a harmful verdict: the evidence and the new rollback
// proposal (its id and the temporary paths normalised, as in watch_not_helping.txt).
func TestWatchHarmfulJSON(t *testing.T) {
	dir, log := harmfulStore(t), harmfulLog(t)
	code, out, errOut := watchCLI(t, dir, "watch", "--json", log)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil || m["verdict"] != "harmful" || m["proposal_new"] != true {
		t.Fatalf("verdict %v, proposal_new %v (%v)", m["verdict"], m["proposal_new"], err)
	}
	id := regexp.MustCompile(`p-[0-9a-f]{12}`).FindString(out)
	golden := strings.NewReplacer(log, "trace.log", dir, "weights", id, "<id>").Replace(out)
	testutil.Golden(t, "watch_harmful.json", []byte(golden))
}

// TestWatchSaysWhatItCouldNotRead: tune watch names the lines it skipped and a log that gave no task
// (a wrong path read as "too early" before), in text and --json; a --version that does not exist is
// an error naming the versions, not "nothing to watch"; --version active is the default spelled out.
// Review of the watch (F2, F3, F4, F7).
func TestWatchSaysWhatItCouldNotRead(t *testing.T) {
	dir := harmfulStore(t)
	log := harmfulLog(t)
	data := mustRead(t, log)
	if err := os.WriteFile(log, []byte(data+"stray prose line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(t.TempDir(), "junk.log")
	if err := os.WriteFile(junk, []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := watchCLI(t, dir, "watch", log, junk)
	if code != 0 || !strings.Contains(out, "HARMFUL") {
		t.Fatalf("watch: %d %s %s", code, out, errOut)
	}
	lines := strings.Count(data, "\n")
	for _, want := range []string{
		fmt.Sprintf("tune: warning: %s:%d: does not start with a timestamp", log, lines+1),
		"tune: warning: " + junk + ":1: does not start with a timestamp",
		"tune: warning: " + junk + ": no task in this log",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	code, out, _ = watchCLI(t, dir, "watch", "--json", "--version", "active", log, junk)
	if code != 0 || !strings.Contains(out, `"source": "`+junk+`"`) || !strings.Contains(out, `"reason": "no task in this log`) {
		t.Errorf("watch --json --version active: %d, no warnings in\n%s", code, out)
	}
	// a copy of the log: read, but its tasks count once
	copied := filepath.Join(t.TempDir(), "copy.log")
	if err := os.WriteFile(copied, []byte(mustRead(t, log)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, once, _ := watchCLI(t, dir, "watch", "--jq", ".tests", log)
	code, twice, errOut := watchCLI(t, dir, "watch", "--jq", ".tests", log, copied)
	if code != 0 || once != twice || !strings.Contains(errOut, copied+":1: a task of "+log+" again") {
		t.Errorf("watch over a log and its copy: %d\n%s\nwant the tests of the log alone\n%s\nand a warning naming the copy: %s", code, twice, once, errOut)
	}
	code, _, errOut = watchCLI(t, dir, "watch", "--version", "v0042", log)
	if code != 1 || !strings.Contains(errOut, "v0042.toml does not exist (versions: v0001, v0002)") {
		t.Errorf("watch --version v0042: %d %s", code, errOut)
	}
}
