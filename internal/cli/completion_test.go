package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/weights"
)

// tune apply completes only the proposals it would write: pending, and measured against the active
// version. A proposal whose parent is no longer active (another change was applied since) is refused
// by apply, so it is not offered; tune report proposal still offers it.
func TestApplyCompletesOnlyProposalsOnTheActiveVersion(t *testing.T) {
	wd, fd := storeTestDirs(t)
	first := storeTestProposal(t)
	first.ID = first.ComputeID()
	writeTestProposal(t, wd, first)
	second := storeTestProposal(t)
	second.Candidate.Signals[weights.Ambiguous] -= weights.Whole(1)
	second.Candidate.Signals[weights.LayerCrossings] += weights.Whole(1)
	second.Steps[0].Signal = "layer-crossings"
	second.ID = second.ComputeID()
	writeTestProposal(t, wd, second)

	complete := func(args ...string) []string {
		t.Helper()
		code, out, errOut := storeRun(t, wd, fd, nil, append([]string{"__complete"}, args...)...)
		if code != 0 {
			t.Fatalf("__complete %v: exit %d: %s", args, code, errOut)
		}
		var ids []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "p-") {
				ids = append(ids, l)
			}
		}
		return ids
	}
	if got := complete("apply", ""); len(got) != 2 {
		t.Fatalf("apply completes %v, want both pending proposals on v0001", got)
	}
	if code, _, errOut := storeRun(t, wd, fd, nil, "apply", first.ID); code != 0 {
		t.Fatalf("apply %s: exit %d: %s", first.ID, code, errOut)
	}
	if got := complete("apply", ""); len(got) != 0 {
		t.Errorf("apply completes %v after v0002 became active: the other proposal was measured against v0001, which apply refuses", got)
	}
	if got := complete("report", "proposal", ""); len(got) != 2 || !strings.Contains(strings.Join(got, " "), second.ID) {
		t.Errorf("report proposal completes %v, want both proposals", got)
	}
	if _, err := store.ReadProposal(filepath.Join(wd, store.ProposalsDir, second.ID+".json")); err != nil {
		t.Errorf("the stale proposal is gone: %v", err)
	}
}
