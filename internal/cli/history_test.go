package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/weights"
)

func TestHistoryGolden(t *testing.T) {
	wd, fd := storeTestDirs(t)
	code, out, errOut := storeRun(t, wd, fd, nil, "history")
	if code != 0 {
		t.Fatal(errOut)
	}
	testutil.Golden(t, "store_history_fresh.txt", []byte(out))
	storeHistoryFixture(t, wd, fd)
	code, out, errOut = storeRun(t, wd, fd, nil, "history")
	if code != 0 {
		t.Fatal(errOut)
	}
	testutil.Golden(t, "store_history.txt", []byte(out))

	code, out, _ = storeRun(t, wd, fd, nil, "history", "--json")
	var rep struct {
		Active  string
		Entries []store.LogEntry
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatal(err, out)
	}
	if rep.Active != "v0003" || len(rep.Entries) != 5 || rep.Entries[3].Action != store.ActionApply || rep.Entries[4].Restores != 1 {
		t.Errorf("history --json: %+v", rep)
	}

	// --limit keeps the latest entries and says how many it left out.
	code, out, _ = storeRun(t, wd, fd, nil, "history", "--limit", "2")
	if code != 0 || strings.Contains(out, "propose-attempt") || !strings.Contains(out, "| rollback") ||
		!strings.Contains(out, "(the 3 earlier entries are not listed; --limit 0 lists all)") {
		t.Errorf("history --limit 2:\n%s", out)
	}
	code, out, _ = storeRun(t, wd, fd, nil, "history", "--limit", "1", "--json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || len(rep.Entries) != 1 || rep.Entries[0].Serial != 5 {
		t.Errorf("history --limit 1 --json: %v %+v", err, rep)
	}
	if code, _, _ := storeRun(t, wd, fd, nil, "history", "--limit", "-1"); code != ExitUsage {
		t.Errorf("--limit -1: exit %d, want 2", code)
	}
}

// storeHistoryFixture logs an evolution run's attempts, then applies the accepted proposal and rolls
// it back.
func storeHistoryFixture(t *testing.T, wd, fd string) {
	t.Helper()
	s, err := store.Open(wd, func() time.Time { return storeTestNow })
	if err != nil {
		t.Fatal(err)
	}
	// an evolution run logs its attempts, then the accepted proposal is applied and rolled back
	if err := s.Log(store.LogEntry{Action: store.ActionProposeAttempt, Change: "greenfield +1", Decision: weights.DecisionRevert,
		SuiteLossBefore: store.Loss(0.4), SuiteLossAfter: store.Loss(0.45), Reason: "scenario loss rose"}); err != nil {
		t.Fatal(err)
	}
	p := storeTestProposal(t)
	if err := s.Log(store.LogEntry{Action: store.ActionAccept, Proposal: p.ComputeID(), Change: "ambiguous +1", Decision: weights.DecisionAccept,
		SuiteLossBefore: store.Loss(0.4), SuiteLossAfter: store.Loss(0.3)}); err != nil {
		t.Fatal(err)
	}
	writeTestProposal(t, wd, p)
	for _, args := range [][]string{{"apply"}, {"rollback"}} {
		if code, _, errOut := storeRun(t, wd, fd, nil, args...); code != 0 {
			t.Fatal(args, errOut)
		}
	}
}
