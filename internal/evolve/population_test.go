package evolve

import (
	"encoding/json"
	"fmt"
	"iter"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// mixedLog is a log of n tasks three hours apart (several 30-day strata) with random signal lists over
// every signal, some listed twice, recorded at L0, L1 or L2, failing more often when they carry
// layer-crossings: a population with many distinct screen tasks, flagged ones among them.
func mixedLog(w *weights.Weights, seed uint64, n int) string {
	rng := rand.New(rand.NewPCG(seed, 11))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var b strings.Builder
	for i := range n {
		at := start.Add(time.Duration(i) * 3 * time.Hour)
		var sigs []string
		carrier := false
		for s := range weights.Signal(weights.NumSignals) {
			for rng.IntN(9) == 0 {
				sigs = append(sigs, fmt.Sprintf("%s:%+d", s, int(w.Signals[s]/2)))
				carrier = carrier || s == weights.LayerCrossings
				if rng.IntN(6) != 0 {
					break
				}
			}
		}
		if len(sigs) == 0 {
			sigs = []string{"explicit-bugfix:-5"}
		}
		level := []string{"L0/reflexive", "L1/considered", "L2/deliberate"}[rng.IntN(3)]
		fmt.Fprintf(&b, "%s  meta  %s  dispatch=auto  signals=%s  task=\"fix bug %d in src/m%d.go\"  files=src/m%d.go  loops=inner\n",
			at.Format(time.RFC3339), level, strings.Join(sigs, ","), i, rng.IntN(4), rng.IntN(4))
		terminal, loss := "complete", 0.1
		if fail := 0.15 + 0.5*float64(btoi(carrier)); rng.Float64() < fail {
			terminal, loss = "failed", 0.9
		}
		close := ""
		if rng.IntN(8) == 0 {
			close = "  regression_followed=true"
		}
		fmt.Fprintf(&b, "%s  inner  close  terminal=%s  loss_final=%.3f%s\n", at.Add(2*time.Second).Format(time.RFC3339), terminal, loss, close)
	}
	return b.String()
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The screen, the break-even, the loss rule's gains and its lifted and on-edge tables weigh the
// population as counts per distinct screen task exactly as they weigh it task by task
// (docs/decisions.md#flat-memory-issue-28): on a generated history of two logs, every result from the
// detection's cells equals the one from the same tasks listed one cell each.
func TestAggregatedScreenIsPerTask(t *testing.T) {
	w := refWeights(t)
	logs := [][]traceparse.Task{parseLog(t, "a.log", []byte(mixedLog(&w, 1, 900))).Tasks, parseLog(t, "b.log", []byte(mixedLog(&w, 2, 700))).Tasks}
	var stream iter.Seq[*traceparse.Task] = func(yield func(*traceparse.Task) bool) {
		for _, ts := range logs {
			for i := range ts {
				if !yield(&ts[i]) {
					return
				}
			}
		}
	}
	det := Detect(DetectInput{Stream: stream, Resolver: Resolver{Active: &w}})
	cells := det.screenTasks.cells
	var perTask []screenCell
	for _, c := range cells {
		for range c.n {
			perTask = append(perTask, screenCell{c.screenTask, 1})
		}
	}
	rng := rand.New(rand.NewPCG(3, 3))
	rng.Shuffle(len(perTask), func(i, j int) { perTask[i], perTask[j] = perTask[j], perTask[i] })
	weak := 0
	for _, c := range cells {
		if c.weak {
			weak += c.n
		}
	}
	// Cells must merge tasks (at least a tenth of them) for the comparison to weigh counts above 1; the
	// day joins the key (screenTask.day), so this history of ~40 days keeps most tasks apart.
	if len(perTask) != det.Accumulated.Tasks || len(cells)*10 > len(perTask)*9 || det.Accumulated.Flagged < 20 || weak < 20 {
		t.Fatalf("setup: %d tasks in %d cells, %d counted, %d flagged, %d with a single witness", len(perTask), len(cells), det.Accumulated.Tasks, det.Accumulated.Flagged, weak)
	}
	same := func(what string, got, want any) {
		t.Helper()
		g, err1 := json.Marshal(got)
		x, err2 := json.Marshal(want)
		if err1 != nil || err2 != nil || string(g) != string(x) {
			t.Errorf("%s: from the cells %s, task by task %s (%v %v)", what, g, x, err1, err2)
		}
	}
	nFlagged := countedFlagged(det.Flagged)
	rows, want := Screen(cells, nFlagged, Strata{}), Screen(perTask, nFlagged, Strata{})
	paysFrom(rows, cells, &w, &w)
	paysFrom(want, perTask, &w, &w)
	same("screen", rows, want)
	candidates := 0
	for s := range weights.Signal(weights.NumSignals) {
		for _, d := range []weights.Half{weights.Whole(1), weights.Whole(2), weights.Whole(-1)} {
			c := Change{Kind: weights.ChangeSignal, Signal: s, Delta: d}
			same(c.String()+" lifted table", liftedTable(c, &w, cells), liftedTable(c, &w, perTask))
			same(c.String()+" gain", lossGain(c, liftedExcess(c, &w, cells), &w, cells, nil), lossGain(c, liftedExcess(c, &w, perTask), &w, perTask, nil))
		}
		if rows[s].Verdict == VerdictCandidate || rows[s].PaysFrom != nil {
			candidates++
		}
	}
	for lv := weights.L0; lv < weights.L4; lv++ {
		edge := Change{Kind: weights.ChangeBucket, Edge: lv, Delta: weights.Whole(-1)}
		got, want := changeExcess(edge, &w, cells), changeExcess(edge, &w, perTask)
		same(fmt.Sprintf("edge %s excess", lv), []any{got.excess, got.sinceDate()}, []any{want.excess, want.sinceDate()})
	}
	ranked, beyond, _ := rankChanges(rows, cells, &w, &w, nil, nil)
	wantRanked, wantBeyond, _ := rankChanges(want, perTask, &w, &w, nil, nil)
	same("ranked", ranked, wantRanked)
	same("beyond", beyond, wantBeyond)
	if candidates == 0 {
		t.Errorf("setup: no signal is a candidate or pays: the comparison weighed no change that matters; screen %+v", rows)
	}
}

// A LogState keeps every field of a screen task (StateCell): a field added to screenTask joins the
// population's key by itself, but the state must be taught to keep it, or a night from the state
// would merge tasks a whole read keeps apart.
func TestStateCellKeepsEveryField(t *testing.T) {
	var names []string
	typ := reflect.TypeFor[screenTask]()
	for i := range typ.NumField() {
		names = append(names, typ.Field(i).Name)
	}
	// fired is derived from sigs, stratum kept as its block (and the log).
	if want := []string{"sigs", "fired", "stratum", "day", "flagged", "weak", "placebo", "eligible", "unclamped", "ranHigh", "regressedHigh"}; !slices.Equal(names, want) {
		t.Fatalf("screenTask's fields are %v, the state keeps %v: extend StateCell (stateCellOf, StateCell.screenTask, LogState.Check) and this list", names, want)
	}
	d := newDetector(DetectInput{})
	for _, c := range []screenCell{{newScreenTask([]weights.Signal{weights.Ambiguous, weights.Ambiguous, weights.SingleFile}, 0, true, true), 3},
		{withDay(newScreenTask(nil, 1, false, false), 20605), 1}, {newScreenTask([]weights.Signal{weights.CrossLayer}, 2, true, false), 7},
		{withDay(weakTask(), dayOf(time.Time{})), 2}, {placeboTask(false), 4}, {placeboTask(true), 5}, {unclampedTask(), 6},
		{highTask(false), 8}, {highTask(true), 9}} {
		d.stratum([2]int{0, int(c.stratum) - 1})
		sigs := [][]weights.Signal{c.signals()}
		back, n := stateCellOf(c, 0, int(c.stratum)-1).screenTask(sigs, func(block int) int32 { return d.stratum([2]int{0, block}) })
		if back != c.screenTask || n != c.n {
			t.Errorf("%+v ×%d came back as %+v ×%d", c.screenTask, c.n, back, n)
		}
	}
}

func withDay(t screenTask, day int32) screenTask {
	t.day = day
	return t
}

// placeboTask is an eligible unflagged task with a placebo, and a weak witness when weak.
func placeboTask(weak bool) screenTask {
	t := newScreenTask([]weights.Signal{weights.ExplicitBugfix}, 1, true, false)
	t.weak, t.placebo = weak, true
	return t
}

func weakTask() screenTask {
	t := newScreenTask([]weights.Signal{weights.LayerCrossings}, 1, true, false)
	t.weak = true
	return t
}

// unclampedTask is an L3-at-v0001 task whose recorded creativity lets the L4 bucket run at L4.
func unclampedTask() screenTask {
	t := newScreenTask([]weights.Signal{weights.Greenfield, weights.CrossLayer, weights.Ambiguous}, 0, false, false)
	t.unclamped = true
	return t
}

// highTask is a task that ran at L2+ with a cue beside a positive signal, regressed or not.
func highTask(regressed bool) screenTask {
	t := newScreenTask([]weights.Signal{weights.SingleFile, weights.CrossLayer, weights.Ambiguous}, 0, false, false)
	t.ranHigh, t.regressedHigh = true, regressed
	return t
}
