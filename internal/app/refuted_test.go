package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/weights"
)

// TestRefutedRaisesAreTheWatchsNotHelpingRollback: once the watch's rollback of a raise it found not
// helping is applied, that raise is refuted for the evolve while the rollback is active; a raise that is
// only active (no rollback) refutes nothing.
func TestRefutedRaisesAreTheWatchsNotHelpingRollback(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	env := referenceProject(t, &now)
	s, cand := applyByHand(t, env, now, weights.ContractRuleHit)
	if got, err := refutedRaises(s, &cand); err != nil || len(got) != 0 {
		t.Fatalf("the raise itself active: refuted %v (%v), want none", got, err)
	}
	// 20 tasks at L1 that v0002 lifts, 12 regressed, 20 others 1 regressed; after it, 20 lifted, 14
	// still regressed: not helping.
	var b strings.Builder
	task := func(at time.Time, level, signals string, i int, reg bool) {
		writeAutoTask(&b, at, level, signals, i, reg)
	}
	const lifted = "contract-rule-hit:+2,explicit-bugfix:-5,unknown-file-territory:+1"
	for i := range 20 {
		task(time.Date(2026, 10, 1, i, 0, 0, 0, time.UTC), "L1/diagnostic", lifted, i, i < 12)
		task(time.Date(2026, 10, 2, i, 0, 0, 0, time.UTC), "L1/diagnostic", "explicit-bugfix:-5", 100+i, i < 1)
		task(time.Date(2026, 11, 2, i, 0, 0, 0, time.UTC), "L2/deliberate", lifted, 200+i, i < 14)
	}
	log := filepath.Join(t.TempDir(), "trace.log")
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	now = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	w, err := Watch(env, WatchOptions{Logs: []string{log}})
	if err != nil || w.Verdict != "not helping" || w.Proposal == "" {
		t.Fatalf("watch: %v, %+v", err, w)
	}
	if _, err := Apply(env, w.Proposal, -1); err != nil {
		t.Fatal(err)
	}
	active, err := s.Active()
	if err != nil {
		t.Fatal(err)
	}
	got, err := refutedRaises(s, &active)
	if err != nil || len(got) != 1 || got[0].Signal != weights.ContractRuleHit || got[0].Delta != weights.Whole(1) {
		t.Fatalf("after the watch's rollback: refuted %v (%v), want contract-rule-hit +1", got, err)
	}
}

// writeAutoTask writes task i ("task i"), dispatched auto at level with signals at time at, one
// iteration, closed complete; reg marks it regression_followed.
func writeAutoTask(b *strings.Builder, at time.Time, level, signals string, i int, reg bool) {
	ts := func(sec int) string { return at.Add(time.Duration(sec) * time.Second).Format(time.RFC3339) }
	fmt.Fprintf(b, "%s  meta  %s  dispatch=auto  signals=%s  task=\"task %d\"  loops=inner\n%s  inner  k=1  skill=s  action=a  loss=0.100\n", ts(0), level, signals, i, ts(1))
	close := ts(2) + "  inner  close  terminal=complete  loss_final=0.100"
	if reg {
		close += "  regression_followed=true"
	}
	b.WriteString(close + "\n")
}

// referenceProject is a project in a temporary directory with the reference store and fixtures, its
// clock at *now (the test moves it).
func referenceProject(t *testing.T, now *time.Time) Env {
	t.Helper()
	dir := t.TempDir()
	if err := testutil.CopyReference(dir); err != nil {
		t.Fatal(err)
	}
	return Env{Now: func() time.Time { return *now }, WeightsDir: filepath.Join(dir, "weights"),
		FixturesDir: filepath.Join(dir, "fixtures"), ReportsDir: filepath.Join(dir, "reports")}
}
