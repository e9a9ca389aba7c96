package view

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/weights"
)

// The branch line says whether the night wrote the branch, found its own proposal there, or found the
// same change under the proposal the pull request was opened with (the night's evidence grew).
func TestBranchLines(t *testing.T) {
	branch := func(updated bool, holds string) *app.NightlyResult {
		return &app.NightlyResult{Review: app.ReviewChange, ReviewProposal: "p-222222222222", BranchResult: &app.BranchResult{
			Branch: "tune/v0001-0123456789ab", BranchProposal: holds, Title: "tune: weights change", BodyFile: "/r/.git/tune/b.pr.md",
			Base: "b0b0b0b0b0b0b0b0", Commit: "c1c1c1c1c1c1c1c1", BranchUpdated: updated, Supersedes: []string{}}}
	}
	for _, c := range []struct {
		out  *app.NightlyResult
		want string
	}{
		{branch(true, "p-222222222222"), "branch: tune/v0001-0123456789ab written (commit c1c1c1c1c1c1 on b0b0b0b0b0b0)\n"},
		{branch(false, "p-222222222222"), "branch: tune/v0001-0123456789ab unchanged (it already holds this proposal on this base) (commit c1c1c1c1c1c1 on b0b0b0b0b0b0)\n"},
		{branch(false, "p-111111111111"), "branch: tune/v0001-0123456789ab unchanged (it already holds this change on this base, as p-111111111111) (commit c1c1c1c1c1c1 on b0b0b0b0b0b0)\n"},
	} {
		var b bytes.Buffer
		branchLines(&b, c.out)
		want := c.want + "title: tune: weights change\nbody: /r/.git/tune/b.pr.md\n"
		if b.String() != want {
			t.Errorf("got\n%s\nwant\n%s", b.String(), want)
		}
	}
	var b bytes.Buffer
	if branchLines(&b, &app.NightlyResult{}); b.Len() != 0 {
		t.Errorf("no branch printed %q", b.String())
	}
}

// A declined branch is named before the review line, with what it means and how to undo it.
func TestNightlyNamesTheDeclined(t *testing.T) {
	out := &app.NightlyResult{EvolveResult: &app.EvolveResult{Outcome: "converged"}, Declined: []string{"tune/v0001-0123456789ab"}, Tasks: 3}
	var b bytes.Buffer
	if err := Nightly(&b, out); err != nil {
		t.Fatal(err)
	}
	want := "declined: tune/v0001-0123456789ab (a reviewer closed its pull request unmerged): not proposed again on this version; reopen it to ask again\nreview: nothing (3 task(s) read)\n"
	if !bytes.HasSuffix(b.Bytes(), []byte(want)) {
		t.Errorf("got\n%s\nwant it to end with\n%s", b.String(), want)
	}
}

// ambiguousOnTheHoldout is ambiguous +2 making the frozen holdout's L2 ambiguous scenario worse.
func ambiguousOnTheHoldout() []evolve.HoldoutChange {
	return []evolve.HoldoutChange{{Change: evolve.Change{Kind: weights.ChangeSignal, Signal: weights.Ambiguous, Delta: weights.Whole(2)},
		From: weights.Whole(2), To: weights.Whole(4), LossBefore: 0, LossAfter: 0.25, Worse: []string{"holdout-L2-ambiguous L2 → L3"}}}
}

// A change only the frozen holdout refused is said under the outcome, with the scenarios it makes
// worse and who decides (docs/escalation.md, "A change the holdout holds").
func TestNightlySaysWhatTheHoldoutHolds(t *testing.T) {
	out := &app.NightlyResult{EvolveResult: &app.EvolveResult{Outcome: "stalled", Reason: "no change left to try", Held: ambiguousOnTheHoldout()}, Tasks: 3}
	var b bytes.Buffer
	if err := Nightly(&b, out); err != nil {
		t.Fatal(err)
	}
	want := "outcome: stalled — no change left to try\nheld: ambiguous +2 (+2 → +4; holdout loss 0.000 → 0.250: holdout-L2-ambiguous L2 → L3) by the frozen holdout: " +
		"the project's evidence and the stated losses want it, the holdout refuses it whatever the evidence; a human decides (tune help escalation, \"A change the holdout holds\")\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("got\n%s\nwant it to hold\n%s", b.String(), want)
	}
}

// A kept change whose holdout loss the history paid for (tune.toml [evolve] holdout = "priced") is said
// under the outcome, with the scenarios it overrules and the setting that allowed it.
func TestNightlySaysWhatThePricedHoldoutLetThrough(t *testing.T) {
	out := &app.NightlyResult{EvolveResult: &app.EvolveResult{Outcome: "converged", Reason: "1 accepted step(s)", HoldoutPaid: ambiguousOnTheHoldout()}, Tasks: 3}
	var b bytes.Buffer
	if err := Nightly(&b, out); err != nil {
		t.Fatal(err)
	}
	want := "outcome: converged — 1 accepted step(s)\nholdout paid: ambiguous +2 (+2 → +4; holdout loss 0.000 → 0.250: holdout-L2-ambiguous L2 → L3): " +
		"the history's expected gain pays for the loss added on the frozen holdout, as tune.toml's [evolve] holdout = \"priced\" asks (docs/decisions.md, \"The holdout, priced on request\")\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("got\n%s\nwant it to hold\n%s", b.String(), want)
	}
}

// The held line escalation.md shows ("A drift bound a human has read", wrapped there) is the line a
// night prints: the doc is read and its block compared, so that a change of the words changes the
// playbook too.
func TestEscalationDocShowsTheDriftHeldLine(t *testing.T) {
	doc, err := os.ReadFile("../../docs/escalation.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "```text\nheld: layer-crossings")
	block, _, closed := strings.Cut(after, "```")
	if !ok || !closed {
		t.Fatal("docs/escalation.md has no text block with the held line of layer-crossings")
	}
	d := evolve.Drift{Change: evolve.Change{Kind: weights.ChangeSignal, Signal: weights.LayerCrossings, Delta: weights.Whole(1)},
		Knob: "layer-crossings", Origin: weights.Whole(2), Would: weights.Whole(5), Bound: weights.Whole(2), Active: weights.Whole(4)}
	out := &app.NightlyResult{EvolveResult: &app.EvolveResult{Outcome: "stalled", Reason: "no change left to try",
		DriftHeld: []evolve.HeldDrift{{Drift: d, From: weights.Whole(4)}}}, Tasks: 3}
	var b bytes.Buffer
	if err := Nightly(&b, out); err != nil {
		t.Fatal(err)
	}
	want := strings.Join(strings.Fields("held: layer-crossings"+block), " ") + "\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("the night prints\n%s\nthe playbook shows\n%s", b.String(), want)
	}
}
