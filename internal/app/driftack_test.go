package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	if out.Escalation() != nil || len(out.DriftHeld) != 1 || out.DriftHeld[0].At != weights.Whole(3) || out.DriftHeld[0].From != weights.Whole(4) {
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
