package store

import (
	"testing"

	"github.com/ldd-tools/tune/internal/weights"
)

// Stores that share reads serve one read while the store is unchanged, and read afresh after any write:
// by another Store (another process), by one of them, and after a rollback.
func TestSharedReadsSeeEveryWrite(t *testing.T) {
	s, dir := freshStore(t)
	reads := &SharedReads{}
	a, err := OpenSharing(dir, clock, reads)
	if err != nil {
		t.Fatal(err)
	}
	first, err := reads.load(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := reads.load(dir, true); again != first {
		t.Fatal("an unchanged store was read again")
	}
	active := func(st *Store) int {
		t.Helper()
		w, err := st.Active()
		if err != nil {
			t.Fatal(err)
		}
		return w.Version
	}
	if v := active(a); v != 1 {
		t.Fatalf("active v%d", v)
	}
	// another Store (as another process would) applies a proposal
	p := decide(t, s, sampleProposal(t))
	if _, err := s.Apply(p); err != nil {
		t.Fatal(err)
	}
	b, err := OpenSharing(dir, clock, reads)
	if err != nil {
		t.Fatal(err)
	}
	if va, vb := active(a), active(b); va != 2 || vb != 2 {
		t.Fatalf("after another Store's apply: a sees v%d, b v%d; want v2", va, vb)
	}
	if again, _ := reads.load(dir, true); again == first {
		t.Fatal("the read before the apply was served after it")
	}
	// one of the sharing Stores rolls back: both see it at once
	if _, err := b.Rollback(1); err != nil {
		t.Fatal(err)
	}
	if va, vb := active(a), active(b); va != 3 || vb != 3 {
		t.Fatalf("after the rollback: a sees v%d, b v%d; want v3", va, vb)
	}
	w, err := a.Active()
	if err != nil || w.Signals[weights.Ambiguous] != loadReference(t).Signals[weights.Ambiguous] {
		t.Fatalf("v3 is not v1's content: %v %v", w.Signals, err)
	}
}
