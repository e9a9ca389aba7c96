package app

import (
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/evolve"
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
	return applyChangeByHand(t, env, now, evolve.Change{Kind: weights.ChangeSignal, Signal: sig, Delta: weights.Whole(whole)}, evidence)
}

// applyChangeByHand applies change c (a signal or a bucket edge) on the active version through the
// store, as tune apply would after an accepted proposal carrying evidence.
func applyChangeByHand(t testing.TB, env Env, now time.Time, c evolve.Change, evidence []store.FlaggedTask) (*store.Store, weights.Weights) {
	t.Helper()
	s, err := env.OpenStore()
	if err != nil {
		t.Fatal(err)
	}
	active, err := s.Active()
	if err != nil {
		t.Fatal(err)
	}
	cand := c.Apply(active)
	step := proposalStepOf(&evolve.Attempt{Change: c, Decision: weights.DecisionAccept}, nil)
	p := &store.Proposal{Created: now, Parent: active.Version, Decision: weights.DecisionAccept, Candidate: cand, Reason: c.String(), Evidence: evidence,
		Steps: []store.ProposalStep{step}}
	if _, _, err := store.WriteProposal(s.ProposalsPath(), p); err != nil {
		t.Fatal(err)
	}
	if err := s.Log(store.LogEntry{Action: store.ActionAccept, Parent: active.Version, Proposal: p.ID, ProposalSHA256: p.ContentSHA256(), Change: c.String(), Decision: weights.DecisionAccept}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(p); err != nil {
		t.Fatal(err)
	}
	return s, cand
}
