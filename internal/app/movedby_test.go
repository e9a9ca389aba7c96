package app

import (
	"testing"

	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/weights"
)

// A declined branch refuses what its candidate moves, never what its proposal's steps list: the name
// hashes the candidate alone, so a forged proposal with no change and a listed contract-rule-hit step
// refused contract-rule-hit on the active version (the review of the pull-request loop).
func TestMovedByReadsTheCandidate(t *testing.T) {
	load := func() weights.Weights {
		w, err := weights.Load(testutil.ReferenceWeightsPath())
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	parent := load()
	forged := &store.Proposal{Candidate: load(), Steps: []store.ProposalStep{
		{Kind: weights.ChangeSignal, Signal: weights.ContractRuleHit.String(), Delta: weights.Whole(2), Decision: weights.DecisionAccept}}}
	if got := movedBy(forged, &parent, nil); len(got) != 0 {
		t.Errorf("a proposal that changes nothing refuses %v", got)
	}
	real := &store.Proposal{Candidate: load()}
	real.Candidate.Signals[weights.Greenfield] += weights.Whole(1)
	got := movedBy(real, &parent, nil)
	if len(got) != 1 || got[0].Kind != weights.ChangeSignal || got[0].Signal != weights.Greenfield {
		t.Errorf("a candidate that raises greenfield refuses %v, want greenfield alone", got)
	}
	if again := movedBy(real, &parent, got); len(again) != 0 {
		t.Errorf("a knob already refused is refused again: %v", again)
	}
}

// The report files a kept branch may hold are the ones report.RenderProposal writes for a proposal,
// and its pull request body; nothing else.
func TestNightReportNamesTheReportsFiles(t *testing.T) {
	id := "p-0123456789ab"
	for _, name := range []string{report.ProposalBase(id) + ".md", report.ProposalBase(id) + "-loss.svg", report.ProposalBase(id) + "-decision.svg", id + ".pr.md"} {
		if !nightReport.MatchString(name) {
			t.Errorf("%s, a file a night writes, is refused", name)
		}
	}
	for _, name := range []string{"extra.md", "proposal-p-0123456789ab.md.bak", "sub/" + id + ".pr.md", "proposal-p-aaaa.md"} {
		if nightReport.MatchString(name) {
			t.Errorf("%s is taken for a night's report", name)
		}
	}
}
