package app

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/weights"
)

// TestReviewOf: what a night leaves to review, as the recipes read it: a change for an accepted or
// halved proposal, nothing for a refused night's revert or none, and the watch's rollback over both.
func TestReviewOf(t *testing.T) {
	for _, c := range []struct {
		decision weights.Decision
		rollback string
		want     string
	}{
		{weights.DecisionAccept, "", ReviewChange},
		{weights.DecisionHalve, "", ReviewChange},
		{weights.DecisionRevert, "", ""},
		{weights.DecisionNone, "", ""},
		{weights.DecisionAccept, "p-0123", ReviewRollback},
		{weights.DecisionNone, "p-0123", ReviewRollback},
	} {
		out := &EvolveResult{Stored: &store.Proposal{ID: "p-9999", Decision: c.decision}}
		var wr *WatchResult
		if c.rollback != "" {
			wr = &WatchResult{Proposal: c.rollback}
		}
		r := reviewOf(out, wr)
		if r.Review != c.want {
			t.Errorf("%s, rollback %q: review %q, want %q", c.decision, c.rollback, r.Review, c.want)
		}
	}
	if r := reviewOf(&EvolveResult{}, nil); r.Review != "" || r.ReviewProposal != "" {
		t.Errorf("no proposal: %+v", r)
	}
}

// TestLogsEmptyOnlyAfterEvolving: no task read is "nothing to do" in a project that never evolved, and
// an error once its log holds more than its init.
func TestLogsEmptyOnlyAfterEvolving(t *testing.T) {
	dir := t.TempDir()
	if err := testutil.CopyReferenceWeights(filepath.Join(dir, "weights")); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	env := Env{Now: func() time.Time { return now }, WeightsDir: filepath.Join(dir, "weights"), Root: dir}
	if err := checkLogsEmpty(env, []string{filepath.Join(dir, "t.log")}); err != nil {
		t.Fatalf("a fresh store: %v", err)
	}
	s, err := env.OpenStore()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Log(store.LogEntry{Action: store.ActionRevert, Change: "ambiguous +1", Decision: weights.DecisionRevert}); err != nil {
		t.Fatal(err)
	}
	err = checkLogsEmpty(env, []string{filepath.Join(dir, "t.log")})
	var empty *LogsEmptyError
	if !errors.As(err, &empty) || empty.Logs[0] != "t.log" {
		t.Fatalf("an evolved store: %v", err)
	}
}
