package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/tools/genhistory"
	"github.com/ldd-tools/tune/internal/weights"
)

// An acknowledgement covers the knob at its value in the active version: a night whose own kept step
// brings the knob to the acknowledged value from elsewhere (here after a rollback to +3 of an
// acknowledged +4) and then stops at the drift bound pages again, keeping its step for review (the
// independent review's probe); acknowledged at the active value, the stop is held and the kept step is
// still proposed; once that step is applied, the page comes back (docs/escalation.md, "A drift bound a
// human has read").
func TestANightThatReachesAnAcknowledgedValueStillPages(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	p := newStateProject(t, &now, 1)
	_, active := applyByHand(t, p.env, now, weights.LayerCrossings) // layer-crossings +2 → +3
	// Carriers of layer-crossings that a +1 lifts (with unknown-file-territory) and carriers that need a
	// point more: the night keeps +1 (to +4) and then wants +5, past the bound.
	h := genhistory.Carriers(&active, time.Date(2026, 5, 31, 4, 0, 0, 0, time.UTC), 60, [][]weights.Signal{
		{weights.Components, weights.LayerCrossings, weights.UnknownFileTerritory}, {weights.Components, weights.LayerCrossings}}, []int{4, 4})
	now = time.Date(2026, 6, 5, 0, 0, 0, 0, time.UTC)
	if err := os.WriteFile(p.logs[0], h.Render(), 0o644); err != nil {
		t.Fatal(err)
	}
	night := func(ack string) *NightlyResult {
		t.Helper()
		p.env.Config = filepath.Join(p.dir, "tune.toml")
		if err := os.WriteFile(p.env.Config, []byte("[evolve.drift_acknowledged]\nlayer-crossings = "+ack+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := Nightly(p.env, EvolveOptions{Logs: p.logs})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	out := night("4")
	if out.Escalation() == nil || out.Drift == nil || len(out.DriftHeld) != 0 {
		t.Fatalf("active +3, acknowledged +4, the night keeps +1 and stops at the bound: outcome %s (%s), held %v; want the page", out.Outcome, out.Reason, out.DriftHeld)
	}
	if out.Review != ReviewChange || out.Stored == nil || out.Stored.Candidate.Signals[weights.LayerCrossings] != weights.Whole(4) {
		t.Errorf("the kept +1 is not left for review: review %q", out.Review)
	}
	// Acknowledged at the active value, the same night holds the stop: its kept +1 is a proposal like any
	// other, left for review, and its reason says what was held.
	out = night("3")
	if out.Escalation() != nil || len(out.DriftHeld) != 1 || out.DriftHeld[0].Active != weights.Whole(3) || out.DriftHeld[0].From != weights.Whole(4) {
		t.Fatalf("acknowledged at the active +3, the night's steps at +4: outcome %s (%s), held %+v; want the stop held", out.Outcome, out.Reason, out.DriftHeld)
	}
	if out.Review != ReviewChange || out.Stored == nil || out.Stored.Candidate.Signals[weights.LayerCrossings] != weights.Whole(4) ||
		!strings.Contains(out.Stored.Reason, "leaves layer-crossings at +3, its active value") {
		t.Fatalf("the kept +1 is not left for review with the held line: review %q", out.Review)
	}
	// Once the +4 is applied, the acknowledgement of +3 no longer covers the active value: the next stop,
	// on new carriers that still need a point more, pages again.
	now = now.Add(time.Hour)
	if _, err := Apply(p.env, out.ReviewProposal, -1); err != nil {
		t.Fatal(err)
	}
	applied, _, err := activeAt(p.env.WeightsDir)
	if err != nil {
		t.Fatal(err)
	}
	more := genhistory.Carriers(&applied, time.Date(2026, 6, 6, 4, 0, 0, 0, time.UTC), 60, [][]weights.Signal{
		{weights.Components, weights.LayerCrossings}}, []int{6})
	appendFile(t, p.logs[0], more.Render())
	now = time.Date(2026, 6, 12, 0, 0, 0, 0, time.UTC)
	if out := night("3"); out.Escalation() == nil || len(out.DriftHeld) != 0 {
		t.Errorf("active +4 after the apply, acknowledged +3: outcome %s (%s), held %v; want the page", out.Outcome, out.Reason, out.DriftHeld)
	}
}

// The page names the value to acknowledge: the knob's active value, not the one its step starts from or
// would reach; and when tune.toml names the knob at another value, it says that this is why it pages (the
// review's probe wrote the step's +4 from the playbook's example and was paged every night after).
func TestThePageNamesTheValueToAcknowledge(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	p := newStateProject(t, &now, 1)
	_, active := applyByHand(t, p.env, now, weights.LayerCrossings) // +2 → +3
	h := genhistory.Carriers(&active, time.Date(2026, 5, 31, 4, 0, 0, 0, time.UTC), 60, [][]weights.Signal{
		{weights.Components, weights.LayerCrossings, weights.UnknownFileTerritory}, {weights.Components, weights.LayerCrossings}}, []int{4, 4}).Render()
	now = time.Date(2026, 6, 5, 0, 0, 0, 0, time.UTC)
	if err := os.WriteFile(p.logs[0], h, 0o644); err != nil {
		t.Fatal(err)
	}
	p.env.Config = filepath.Join(p.dir, "tune.toml")
	for night, ack := range []string{"", "4", "4"} {
		body := ""
		if ack != "" {
			body = "[evolve.drift_acknowledged]\nlayer-crossings = " + ack + "\n"
		}
		if err := os.WriteFile(p.env.Config, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := Nightly(p.env, EvolveOptions{Logs: p.logs})
		if err != nil {
			t.Fatal(err)
		}
		page := out.Escalation()
		if page == nil || out.Drift == nil || out.Drift.Active != weights.Whole(3) {
			t.Fatalf("night %d, acknowledged %q: outcome %s, drift %+v; want the page with the active +3", night, ack, out.Outcome, out.Drift)
		}
		if want := "layer-crossings is +3 in the active weights (v0002): to leave it there, name it at +3"; !strings.Contains(page.Error(), want) {
			t.Errorf("night %d: the page %q does not say %q", night, page, want)
		}
		if mismatch := strings.Contains(page.Error(), "tune.toml names it at +4, not its active +3, so this stop pages"); mismatch != (ack != "") {
			t.Errorf("night %d, acknowledged %q: the page %q says the mismatch: %v", night, ack, page, mismatch)
		}
		now = now.Add(24 * time.Hour)
	}
}

// tune propose holds an acknowledged stop from the bucket rule (a signal change measured and reverted
// first): the proposal it writes carries the held line, as a night's does, and what the held step
// measured (the review found neither, and the same proposal id as a night that paged).
func TestProposeKeepsTheHeldLineInTheProposal(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	p := newStateProject(t, &now, 1)
	_, active := applyChangeByHand(t, p.env, now, evolve.Change{Kind: weights.ChangeBucket, Edge: weights.L1, Delta: weights.Whole(-2)}, nil) // L1 edge -2 → -4: at the bound
	// Five scenarios on the L2 upper edge (3) that carry contract-rule-hit pin it: its +1 costs too_high.
	pin := ""
	for i := 0; i < 5; i++ {
		pin += fmt.Sprintf("[[scenario]]\nname = \"pin-crh-%d\"\nprompt = \"update the JSON schema for orders in src/a.py, see the R12 validator\"\nhistory = [\"x.md\"]\nlevels = [\"L2\"]\ndispatch_source = \"auto-level\"\norigin = \"review44\"\n\n", i)
	}
	if err := os.WriteFile(filepath.Join(p.dir, "fixtures", "suite", "pin.toml"), []byte(pin), 0o644); err != nil {
		t.Fatal(err)
	}
	if active.Buckets.Edges[weights.L1] != weights.Whole(-4) {
		t.Fatalf("setup: the active L1 edge is %s, want -4", active.Buckets.Edges[weights.L1])
	}
	// Thirty eligible L1 fixes with a few signals each, then three regressed carriers of contract-rule-hit
	// and cross-layer, recorded at L1.
	h := &genhistory.History{Weights: &active, Start: time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC)}
	bugfix, single := weights.ExplicitBugfix, weights.SingleFile
	extra := [][]weights.Signal{{single}, {single}, {single}, {single, weights.CrossLayer}, {single, weights.CrossLayer},
		{single, weights.Greenfield}, {single, weights.Greenfield}, {single, weights.UnknownFileTerritory}, {single, weights.LayerCrossings}, {single, weights.LayerCrossings}}
	for i := range 30 {
		sigs := []weights.Signal{bugfix}
		if i < len(extra) {
			sigs = append(sigs, extra[i]...)
		}
		task := genhistory.NewTask(&active, "filler", 0, sigs...)
		task.Level = weights.L1
		h.Tasks = append(h.Tasks, task)
	}
	for i := range 3 {
		task := genhistory.NewTask(&active, fmt.Sprintf("t%c", 'a'+i), 0, bugfix, single, weights.ContractRuleHit, weights.CrossLayer)
		task.Level, task.RegressionFollowed = weights.L1, true
		h.Tasks = append(h.Tasks, task)
	}
	if err := os.WriteFile(p.logs[0], h.Render(), 0o644); err != nil {
		t.Fatal(err)
	}
	p.env.Config = filepath.Join(p.dir, "tune.toml")
	if err := os.WriteFile(p.env.Config, []byte("[evolve.drift_acknowledged]\n\"L1 edge\" = -4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := Propose(p.env, p.logs)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.DriftHeld) != 1 || out.DriftHeld[0].Knob != "L1 edge" || out.ProposalFile == nil {
		t.Fatalf("setup: held %v, proposal %v, reason %s; want the L1 edge held and a proposal written", out.DriftHeld, out.ProposalFile, out.Reason)
	}
	data, err := os.ReadFile(*out.ProposalFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := "held: bucket L1 edge -1 at the drift bound"; !strings.Contains(string(data), want) {
		t.Errorf("tune propose held the L1 edge and wrote proposal %s without %q in its reason:\n%s", out.ProposalID, want, data)
	}
}
