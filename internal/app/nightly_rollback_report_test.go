package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/weights"
)

// TestNightlyReportsTheWatchsRollback: a night whose watch leaves a rollback proposal writes that
// proposal's EVAL report, with its step, the tasks behind it and the replay, whether the verdict was
// "not helping" (the night goes on to evolve) or "harmful" (it stops); and once the rollback is done
// by hand, applying the stale proposal is nothing to do (exit 0), not "propose again". Review of the
// watch: the harmful report said "no change; nothing was replayed", the not-helping night wrote none.
func TestNightlyReportsTheWatchsRollback(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	env := referenceProject(t, &now)
	applyByHand(t, env, now, weights.ContractRuleHit) // v0002: contract-rule-hit +1 lifts these L1 tasks to L2
	var b strings.Builder
	// lifted are the signals v0002 lifts, with contract-rule-hit's weight crh when the task ran.
	lifted := func(crh int) string {
		return fmt.Sprintf("contract-rule-hit:+%d,explicit-bugfix:-5,unknown-file-territory:+1", crh)
	}
	task := func(at time.Time, level, signals string, i int, reg bool) {
		writeAutoTask(&b, at, level, signals, i, reg)
	}
	for i := range 20 {
		task(time.Date(2026, 10, 1, i, 0, 0, 0, time.UTC), "L1/diagnostic", lifted(2), i, i < 12)
		task(time.Date(2026, 10, 2, i, 0, 0, 0, time.UTC), "L1/diagnostic", "explicit-bugfix:-5", 100+i, i < 1)
		task(time.Date(2026, 11, 2, i, 0, 0, 0, time.UTC), "L2/deliberate", lifted(3), 200+i, i < 14)
	}
	log := filepath.Join(t.TempDir(), "trace.log")
	write := func() {
		if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write()
	// checkReport: the night listed the rollback's report, and the report shows its step and tasks.
	checkReport := func(out *NightlyResult, verdict, step string, tasks int) {
		t.Helper()
		id := out.ReviewProposal
		if out.Review != ReviewRollback || id == "" {
			t.Fatalf("review %q %q, want a rollback", out.Review, id)
		}
		path := filepath.Join(env.ReportsDir, "proposal-"+id+".md")
		listed := false
		for _, r := range out.Reports {
			listed = listed || r == path
		}
		data, err := os.ReadFile(path)
		if err != nil || !listed {
			t.Fatalf("the rollback's report %s: listed %v in %v, read: %v", path, listed, out.Reports, err)
		}
		md := string(data)
		for _, want := range []string{"**Decision: accept** — " + step, "The applied version", "**" + verdict + "**", "## Replay"} {
			if !strings.Contains(md, want) {
				t.Errorf("%s report: no %q in\n%s", verdict, want, md)
			}
		}
		if strings.Contains(md, "nothing was replayed") || strings.Count(md, "regression_followed") < tasks {
			t.Errorf("%s report: says nothing was replayed, or lists fewer than the %d tasks behind the rollback:\n%s", verdict, tasks, md)
		}
	}

	now = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	night1, err := Nightly(env, EvolveOptions{Logs: []string{log}})
	if err != nil || night1.Watch == nil || night1.Watch.Verdict != "not helping" {
		t.Fatalf("night 1: %v, %+v", err, night1.EvolveResult)
	}
	checkReport(night1, "not helping", "contract-rule-hit -1 (v0002 → candidate)", 14)
	if _, err := Apply(env, night1.ReviewProposal, -1); err != nil {
		t.Fatal(err)
	}

	// v0003 (the rollback) moves the same tasks back down to L1, where 24 of 24 regress: harmful (they
	// regressed 14 of 20 times at L2).
	for i := range 24 {
		task(time.Date(2026, 11, 21, i, 0, 0, 0, time.UTC), "L1/diagnostic", lifted(2), 400+i, true)
	}
	write()
	now = time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	night2, err := Nightly(env, EvolveOptions{Logs: []string{log}})
	if err != nil || night2.Outcome != OutcomeWatchHarmful {
		t.Fatalf("night 2: %v, %+v", err, night2.EvolveResult)
	}
	checkReport(night2, "harmful", "contract-rule-hit +1 (v0003 → candidate)", 24)

	// The rollback done by hand: the proposal the watch left asks for what is already active.
	if _, err := Rollback(env, 0, -1); err != nil {
		t.Fatal(err)
	}
	_, err = Apply(env, night2.ReviewProposal, -1)
	if !errors.Is(err, store.ErrNothingToDo) || !strings.Contains(err.Error(), "already has its weights") {
		t.Errorf("applying the watch's rollback after the same rollback by hand: %v, want nothing to do", err)
	}
}
