package compare

import (
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/watch"
	"github.com/ldd-tools/tune/internal/weights"
)

// armsLog is one raised and one control task near the L1 edge (−2), both closed and regressed, as tune
// score --log and an agent write them.
const armsLog = `2026-11-02T04:00:00.000000Z  meta  L2/deliberate  dispatch=explore  signals=greenfield:+3,explicit-bugfix:-5  weights=v0001  task="greenfield fix 4"  loops=inner  explore=raised  explore_level=L1
2026-11-02T04:01:00.000000Z  inner  close  terminal=complete  loss_final=0.050  regression_followed=true
2026-11-02T05:00:00.000000Z  meta  L1/diagnostic  dispatch=auto  signals=greenfield:+3,explicit-bugfix:-5  weights=v0001  task="greenfield fix 5"  loops=inner  explore=control  explore_level=L1
2026-11-02T05:01:00.000000Z  inner  close  terminal=complete  loss_final=0.050  regression_followed=true
`

// TestRaisedArmIsNotAuto: the detection and the watch read a raised task as what it is, a dispatch that
// is not the scorer's (never evidence, never a moved task that counts), and the control task as an
// ordinary auto task (docs/decisions.md#explore-a-randomized-share-of-near-edge-tasks).
func TestRaisedArmIsNotAuto(t *testing.T) {
	res, err := traceparse.Parse(strings.NewReader(armsLog), "t.log")
	if err != nil || len(res.Tasks) != 2 {
		t.Fatalf("%v, %d tasks", err, len(res.Tasks))
	}
	w := testutil.ReferenceWeights()
	det := evolve.Detect(evolve.DetectInput{Tasks: res.Tasks, Resolver: evolve.Resolver{Active: &w}})
	if len(det.Flagged) != 1 || det.Flagged[0].Title != "greenfield fix 5" || det.Accumulated.Eligible != 1 {
		t.Errorf("detection: %d eligible, flagged %+v; want the control task alone", det.Accumulated.Eligible, det.Flagged)
	}
	// A version whose greenfield +4 moves both tasks from L1 to L2 (−1 is above the L1 edge).
	v := w
	v.Version, v.Parent = 2, 1
	v.Signals[weights.Greenfield] = weights.Whole(4)
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range res.Tasks {
		res.Tasks[i].WeightsVersion = "v0002" // dispatched under the version watched
	}
	b := watch.NewBuilder(watch.Input{Version: watch.Version{Weights: &v, From: from}, Parent: watch.Version{Weights: &w}})
	for i := range res.Tasks {
		b.Add(&res.Tasks[i])
	}
	got := b.Result()
	if got.Moved != 1 || got.NotCounted["explore"] != 1 || len(got.MovedTasks) != 1 || got.MovedTasks[0].Task != "greenfield fix 5" {
		t.Errorf("watch: moved %d, not counted %v, moved tasks %+v; want the control task moved and the raised one not counted", got.Moved, got.NotCounted, got.MovedTasks)
	}
}

// TestCompareOverkill: at the L3→L4 edge both arms run at L3/L4, so overkill (accuracy.Classify:
// complete, k ≤ 1, final loss ≤ 0.01) is compared; below it the column stays empty.
func TestCompareOverkill(t *testing.T) {
	var b strings.Builder
	task := func(h int, raised, overkill bool) {
		meta := "L3/structural  creativity=inventive  dispatch=auto"
		arm := "control"
		if raised {
			meta, arm = "L4/method  creativity=inventive  dispatch=explore", "raised"
		}
		loss := "0.300"
		if overkill {
			loss = "0.000"
		}
		ts := time.Date(2026, 11, 2, h, 0, 0, 0, time.UTC)
		b.WriteString(ts.Format("2006-01-02T15:04:05.000000Z") + "  meta  " + meta + "  task=\"t" + ts.Format("15") + "\"  loops=design,inner  explore=" + arm + "  explore_level=L3\n")
		b.WriteString(ts.Add(time.Minute).Format("2006-01-02T15:04:05.000000Z") + "  inner  k=1  action=work  loss=" + loss + "\n")
		b.WriteString(ts.Add(2*time.Minute).Format("2006-01-02T15:04:05.000000Z") + "  inner  close  terminal=complete  loss_final=" + loss + "\n")
	}
	// Control: 1 overkill of 4; raised: 3 of 4.
	for h, c := range []struct{ raised, overkill bool }{{false, true}, {false, false}, {false, false}, {false, false}, {true, true}, {true, true}, {true, true}, {true, false}} {
		task(h, c.raised, c.overkill)
	}
	w := testutil.ReferenceWeights()
	got := compareLog(t, b.String(), &w)
	e := got.Edges[weights.L3]
	if e.Control.Overkill == nil || e.Raised.Overkill == nil || e.Control.Overkill.K != 1 || e.Raised.Overkill.K != 3 || e.Control.Settled != 4 || e.Raised.Settled != 4 {
		t.Fatalf("control %+v raised %+v", e.Control, e.Raised)
	}
	if d := e.OverkillDifference; d == nil || d.Estimate != 0.5 || d.Lo >= 0 || d.Hi <= 0.5 {
		t.Errorf("overkill difference %+v, want +0.5 with an interval around it", d)
	}
	if got.Edges[weights.L1].OverkillDifference != nil || got.Edges[weights.L2].Control.Overkill != nil || got.Edges[weights.L2].Raised.Overkill == nil {
		t.Error("overkill shown for an arm below L3")
	}
}
