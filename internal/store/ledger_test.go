package store

import (
	"maps"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/weights"
)

// The evidence ledger (docs/decisions.md#evidence-ledger): apply writes the supporting tasks' keys into
// its log entry; a later proposal that names one of them is refused, also after a rollback, while a
// proposal supported by other tasks applies.
func TestApplyRefusesATaskTheLedgerUsed(t *testing.T) {
	s, dir := freshStore(t)
	first := sampleProposal(t)
	first.Evidence[0].Key, first.Evidence[1].Key = "k-auth", "k-tweak"
	if _, err := s.Apply(decide(t, s, first)); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"k-auth": "v0002", "k-tweak": "v0002"}
	if got, err := s.Ledger(); err != nil || !maps.Equal(got, want) {
		t.Fatalf("ledger after the first apply = %v (%v), want %v", got, err, want)
	}

	// A second change from v0002, supported by one new task and one the first apply used.
	next := func(keys ...string) *Proposal {
		p := sampleProposal(t)
		v2, err := s.Version(2)
		if err != nil {
			t.Fatal(err)
		}
		p.Parent, p.Candidate = 2, v2
		p.Candidate.Signals[weights.Greenfield] += weights.Whole(1)
		p.Steps[0].Signal = "greenfield"
		p.Evidence = p.Evidence[:0]
		for _, k := range keys {
			p.Evidence = append(p.Evidence, FlaggedTask{MetaTimestamp: "2026-11-25T10:00:00Z", Title: k, Level: "L1", Source: "b/trace.log", Key: k})
		}
		return decide(t, s, p)
	}
	reused := next("k-new", "k-tweak")
	_, err := s.Apply(reused)
	if err == nil || !strings.Contains(err.Error(), "task k-tweak, which already supported the change applied as v0002") {
		t.Fatalf("apply of a proposal reusing a ledgered task: %v", err)
	}
	if v := activeVersion(t, dir); v != 2 {
		t.Fatalf("active after the refused apply = v%d, want v2", v)
	}
	mustVerify(t, s)

	// A rollback undoes the weights, not the spent evidence.
	if _, err := s.Rollback(0); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Ledger(); !maps.Equal(got, want) {
		t.Fatalf("ledger after the rollback = %v, want %v", got, want)
	}
	again := sampleProposal(t)
	again.Parent = 3
	again.Evidence[0].Key = "k-auth"
	_, err = s.Apply(decide(t, s, again))
	if err == nil || !strings.Contains(err.Error(), "task k-auth, which already supported") {
		t.Fatalf("apply after the rollback, reusing a ledgered task: %v", err)
	}
	mustVerify(t, s)
}
