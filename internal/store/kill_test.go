package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ldd-tools/tune/internal/weights"
)

// TestKillAtEveryFileOperation is the crash-injection harness at file-operation granularity: a life of
// propose → apply → rollback is killed before its k-th write or removal, for every k, then recovered the
// way the docs say (tune repair when a marker is left, then the interrupted command run again). Nothing
// is lost: the store verifies, every version is on disk and logged once, the attempts are logged once,
// and the end state is the one an uninterrupted run reaches.
func TestKillAtEveryFileOperation(t *testing.T) {
	life := func(s *Store) error {
		if _, _, _, err := s.Propose(sampleProposal(t), []LogEntry{{Action: ActionAccept, Change: "ambiguous +1", Decision: weights.DecisionAccept}}, nil); err != nil {
			return err
		}
		if _, err := s.Apply(sampleProposal(t)); err != nil && !errors.Is(err, ErrNothingToDo) {
			return err
		}
		// the rollback, unless the killed run committed it already (a rollback is not idempotent: run
		// again it would roll back further)
		if v, err := s.ActiveVersion(); err != nil || v != 2 {
			return err
		}
		_, err := s.Rollback(0)
		return err
	}
	for k := 1; ; k++ {
		s, dir := freshStore(t)
		err := crashAt(atOperation(k), func() error { return life(s) })
		if err == nil {
			if k < 10 {
				t.Fatalf("the life finished after %d file operations: the hook does not fire", k-1)
			}
			break // k is past the last operation: every kill point has been tried
		}
		if !errors.Is(err, ErrInjectedCrash) {
			t.Fatalf("kill at %d: %v", k, err)
		}
		t.Run(fmt.Sprintf("kill-%d", k), func(t *testing.T) {
			r, _ := reopen(t, dir)
			if _, err := os.Stat(filepath.Join(dir, PendingFile)); err == nil {
				if _, err := r.Repair(false); err != nil {
					t.Fatalf("repair: %v", err)
				}
			}
			r, _ = reopen(t, dir)
			if err := life(r); err != nil {
				t.Fatalf("re-run: %v", err)
			}
			mustVerify(t, r)
			entries, _ := r.Entries()
			counts := map[string]int{}
			for _, e := range entries {
				counts[e.Action]++
			}
			// one accept, one apply, one rollback: the re-run repeats nothing the killed run committed
			if counts[ActionInit] != 1 || counts[ActionAccept] != 1 || counts[ActionApply] != 1 || counts[ActionRollback] != 1 {
				t.Fatalf("log actions %v", counts)
			}
			if vs, _ := r.Versions(); len(vs) != 3 {
				t.Fatalf("versions %v, want v0001..v0003", vs)
			}
			if v := activeVersion(t, dir); v != 3 {
				t.Fatalf("active %d, want the rollback v0003", v)
			}
		})
	}
}
