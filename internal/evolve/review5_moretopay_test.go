package evolve

import (
	"math/rand/v2"
	"testing"

	"github.com/ldd-tools/tune/internal/weights"
)

// r5History is a seeded history of days: per day a few eligible carriers of layer-crossings that +1
// lifts (explicit-bugfix + layer-crossings + unknown-file-territory, -2), eligible tasks without it and
// L2 tasks with it (raised for nothing); the carriers regress at lo before day onset and at hi after,
// the others at 0.1.
func r5History(rng *rand.Rand, days, onset int, lo, hi float64) []screenCell {
	var cells []screenCell
	add := func(day int, sigs []weights.Signal, eligible, flagged bool) {
		t := newScreenTask(sigs, int32(day/30), eligible, flagged)
		t.day = int32(20000 + day)
		cells = append(cells, screenCell{t, 1})
	}
	for d := range days {
		p := lo
		if d >= onset {
			p = hi
		}
		for range 1 + rng.IntN(3) {
			add(d, []weights.Signal{weights.ExplicitBugfix, weights.LayerCrossings, weights.UnknownFileTerritory}, true, rng.Float64() < p)
		}
		for range 3 + rng.IntN(5) {
			add(d, []weights.Signal{weights.ExplicitBugfix}, true, rng.Float64() < 0.1)
		}
		for range 1 + rng.IntN(2) {
			add(d, []weights.Signal{weights.LayerCrossings}, false, false)
		}
	}
	return cells
}

// "Pays after N more regression(s) among the tasks it lifts" is the rule's own answer, everything else
// held: with N more lifted carriers that regressed, on the history's last day, the loss rule (rankChanges
// on the same cells, with its current excess) ranks the change; with N-1 it does not. Before the fifth
// review moreToPay added them to the table the excess was estimated from, as if the current excess's
// split could not move: on histories whose carriers' rate rose, the N-1 (or fewer) that made a split
// supported already paid (TUNE_REVIEW5 counts: docs/decisions.md#fifth-review-the-loss-rules-explanations-and-the-paths).
func TestMoreToPayIsTheRulesOwnAnswer(t *testing.T) {
	w := refWeights(t)
	change := Change{Kind: weights.ChangeSignal, Signal: weights.LayerCrossings, Delta: weights.Whole(1)}
	rng := rand.New(rand.NewPCG(5, 28))
	checked, wrong := 0, 0
	for h := range 400 {
		days, onset := 10+rng.IntN(40), rng.IntN(40)
		tasks := r5History(rng, days, onset, 0.1+0.2*rng.Float64(), 0.2+0.5*rng.Float64())
		rows := Screen(tasks, 0, Strata{})
		rows[weights.LayerCrossings].Verdict = VerdictCandidate // the test's verdict is not what is checked here
		ranked, _, unpaid := rankChanges(rows, tasks, &w, &w, nil, nil)
		var g *Gain
		for i := range unpaid {
			if unpaid[i].Change == change {
				g = &unpaid[i]
			}
		}
		if len(ranked) > 0 || g == nil || g.MoreNeeded < 1 {
			continue
		}
		checked++
		last := tasks[len(tasks)-1].day
		paysWith := func(k int) bool {
			more := append([]screenCell(nil), tasks...)
			if k > 0 {
				t := newScreenTask([]weights.Signal{weights.ExplicitBugfix, weights.LayerCrossings, weights.UnknownFileTerritory}, tasks[len(tasks)-1].stratum, true, true)
				t.day = last
				more = append(more, screenCell{t, k})
			}
			rows := Screen(more, 0, Strata{})
			rows[weights.LayerCrossings].Verdict = VerdictCandidate
			ranked, _, _ := rankChanges(rows, more, &w, &w, nil, nil)
			return len(ranked) > 0 && ranked[0].Change == change
		}
		if !paysWith(g.MoreNeeded) || paysWith(g.MoreNeeded-1) {
			wrong++
			if wrong <= 5 {
				t.Errorf("history %d: said %s; with %d more it pays %v, with %d more %v", h, g, g.MoreNeeded, paysWith(g.MoreNeeded), g.MoreNeeded-1, paysWith(g.MoreNeeded-1))
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d histories had an unpaid change: the test tests little", checked)
	}
	t.Logf("%d of %d statements wrong", wrong, checked)
}

// A signal whose step beyond the drift bound pays is not one for which "no change pays": the step that
// pays is listed beyond the bound (and the night escalates), so listing the signal's step within the
// bound as unpaid too made the explanation say both "no change pays for these signals" and "+2: net
// gain 0.1 …, beyond the drift bound" of one signal (the fifth review).
func TestUnpaidLeavesOutASignalThatPaysBeyondTheDrift(t *testing.T) {
	origin := refWeights(t)
	parent := origin
	parent.Signals[weights.LayerCrossings] += weights.Whole(DriftBound - 1)                                            // +1 within the bound, +2 beyond
	near := []weights.Signal{weights.ExplicitBugfix, weights.LayerCrossings}                                           // -2: +1 lifts it
	deeper := []weights.Signal{weights.ExplicitBugfix, weights.SingleFile, weights.LayerCrossings, weights.Components} // -3: only +2
	tasks := append(lossTasks(20, false, true, near...), lossTasks(20, true, true, deeper...)...)
	tasks = append(tasks, append(lossTasks(2, true, true, weights.ExplicitBugfix), lossTasks(38, false, true, weights.ExplicitBugfix)...)...)
	rows := Screen(tasks, 22, Strata{})
	rows[weights.LayerCrossings].Verdict = VerdictCandidate
	ranked, beyond, unpaid := rankChanges(rows, tasks, &parent, &origin, nil, nil)
	if len(ranked) != 0 || len(beyond) != 1 || beyond[0].Change.Delta != weights.Whole(2) {
		t.Fatalf("setup: ranked %v, beyond %v: want +2 paying beyond the bound only", ranked, beyond)
	}
	if len(unpaid) != 0 {
		t.Errorf("unpaid %v beside %v paying beyond the drift bound", unpaid, beyond)
	}
}
