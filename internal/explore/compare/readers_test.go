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
