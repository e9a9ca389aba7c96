package app

import (
	"fmt"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/weights"
)

// applyByHand proposes sig +1 on the active version and applies it through the store, as tune apply
// would after an accepted proposal; it returns the store and the version applied.
func applyByHand(t testing.TB, env Env, now time.Time, sig weights.Signal) (*store.Store, weights.Weights) {
	t.Helper()
	return applyStepByHand(t, env, now, sig, 1)
}

// applyStepByHand is applyByHand with a step of whole points.
func applyStepByHand(t testing.TB, env Env, now time.Time, sig weights.Signal, whole int) (*store.Store, weights.Weights) {
	t.Helper()
	return applyCarrying(t, env, now, sig, whole, nil)
}

// applyCarrying is applyStepByHand with the proposal's evidence (and so the apply's ledger): a night's
// real proposal carries every counted flagged task, which is what the store reads again each night.
func applyCarrying(t testing.TB, env Env, now time.Time, sig weights.Signal, whole int, evidence []store.FlaggedTask) (*store.Store, weights.Weights) {
	t.Helper()
	s, err := env.OpenStore()
	if err != nil {
		t.Fatal(err)
	}
	active, err := s.Active()
	if err != nil {
		t.Fatal(err)
	}
	cand := active
	cand.Signals[sig] += weights.Whole(whole)
	change := fmt.Sprintf("%s %+d", sig, whole)
	p := &store.Proposal{Created: now, Parent: active.Version, Decision: weights.DecisionAccept, Candidate: cand, Reason: change, Evidence: evidence,
		Steps: []store.ProposalStep{{Kind: "signal", Signal: sig.String(), Delta: weights.Whole(whole), Decision: weights.DecisionAccept}}}
	if _, _, err := store.WriteProposal(s.ProposalsPath(), p); err != nil {
		t.Fatal(err)
	}
	if err := s.Log(store.LogEntry{Action: store.ActionAccept, Parent: active.Version, Proposal: p.ID, ProposalSHA256: p.ContentSHA256(), Change: change, Decision: weights.DecisionAccept}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(p); err != nil {
		t.Fatal(err)
	}
	return s, cand
}
