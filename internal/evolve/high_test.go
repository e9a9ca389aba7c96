package evolve

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/weights"
)

// highCarriers is n carriers of layer-crossings that ran at L3 (single-file −3, layer-crossings 2,
// greenfield 3, cross-layer 2: 4; +2 on layer-crossings keeps them at L3), regressed or not; cue false
// drops the single-file cue (then no weights put them low, and they are not of the kind a change lifts).
func highCarriers(n int, regressed, cue bool) []screenCell {
	sigs := []weights.Signal{weights.LayerCrossings, weights.Greenfield, weights.CrossLayer}
	if cue {
		sigs = append(sigs, weights.SingleFile)
	}
	out := lossTasks(n, false, false, sigs...)
	for i := range out {
		out[i].ranHigh, out[i].regressedHigh = true, regressed
	}
	return out
}

// highOthers is n tasks that ran at L3 without layer-crossings (greenfield 3, cross-layer 2), regressed
// or not.
func highOthers(n int, regressed bool) []screenCell {
	out := lossTasks(n, false, false, weights.Greenfield, weights.CrossLayer)
	for i := range out {
		out[i].ranHigh, out[i].regressedHigh = true, regressed
	}
	return out
}

// The carriers at L2+ (docs/decisions.md#the-carriers-at-l2): when the carriers that already ran at L2+
// regress as often as the low ones, and more than the other tasks at L2+, a level does not cure what they
// carry and lifting the low ones avoids nothing — the change that paid on the low carriers alone is not
// proposed. When they regress like the other tasks at L2+ (whether those regress little, or as much
// because the tasks that run high are harder ones), or carry no cue that can put a task low, the gain
// is the one without them.
func TestTheCarriersAtL2AreWhatALevelDoesNotCure(t *testing.T) {
	w := refWeights(t)
	plus2 := Change{Kind: weights.ChangeSignal, Signal: weights.LayerCrossings, Delta: weights.Whole(2)}
	low := append(lossTasks(6, true, true, weights.ExplicitBugfix, weights.LayerCrossings), lossTasks(2, false, true, weights.ExplicitBugfix, weights.LayerCrossings)...)
	low = append(low, lossTasks(1, true, true, weights.ExplicitBugfix)...)
	low = append(low, lossTasks(30, false, true, weights.ExplicitBugfix)...)
	alone := lossGain(plus2, changeExcess(plus2, &w, low), &w, low, nil)
	if alone.Net <= 0 || alone.ExcessAtL2 != nil {
		t.Fatalf("setup: without carriers at L2+ the +2 must pay, unadjusted: %+v", alone)
	}
	for _, c := range []struct {
		name   string
		high   []screenCell
		adjust bool
	}{
		{"regress at any level", slices.Concat(highCarriers(6, true, true), highCarriers(2, false, true), highOthers(1, true), highOthers(19, false)), true},
		{"regress like the others", slices.Concat(highCarriers(8, false, true), highOthers(1, true), highOthers(19, false)), false},
		{"regress, but carry no cue", slices.Concat(highCarriers(8, true, false), highOthers(1, true), highOthers(19, false)), false},
		{"every task at L2+ regresses alike", slices.Concat(highCarriers(3, true, true), highCarriers(5, false, true), highOthers(8, true), highOthers(12, false)), false},
	} {
		tasks := append(append([]screenCell{}, low...), c.high...)
		rows := Screen(tasks, 7, Strata{})
		if rows[weights.LayerCrossings].Verdict != VerdictCandidate {
			t.Fatalf("%s: setup: the test must pass on the low carriers: %+v", c.name, rows[weights.LayerCrossings])
		}
		g := lossGain(plus2, changeExcess(plus2, &w, tasks), &w, tasks, nil)
		ranked, _, _ := rankChanges(rows, tasks, &w, &w, nil, nil)
		proposed := len(ranked) > 0 && ranked[0].Change == plus2
		switch {
		case c.adjust && (g.ExcessAtL2 == nil || g.Net > 0 || proposed || float64(g.Excess) > 0.2):
			t.Errorf("%s: the +2 must be credited only the excess beyond the carriers' at L2+ and not pay: %+v, ranked %v", c.name, g, ranked)
		case c.adjust && !strings.Contains(g.String(), "among the carriers that ran at L2+"):
			t.Errorf("%s: the explanation must say what the excess is net of: %s", c.name, g)
		case !c.adjust && (g.ExcessAtL2 != nil || g.Excess != alone.Excess || !proposed):
			t.Errorf("%s: the gain must be the one without them (excess %v): %+v, ranked %v", c.name, alone.Excess, g, ranked)
		}
	}
}

// A task that ran at L2+ counts as regressed for that comparison only on exact evidence: its own
// regression_followed, or a later task's regression_of. Same-area witnesses speak for the eligible
// tasks alone, and a task not dispatched auto is not counted at all.
func TestTasksThatRanHighCountOnlyExactEvidence(t *testing.T) {
	log := `2026-05-01T00:00:00Z  meta  L2/deliberate  dispatch=auto  signals=single-file:-3,layer-crossings:+2,greenfield:+3  task="a"  files=src/a.go  loops=inner
2026-05-01T00:00:02Z  inner  close  terminal=complete  loss_final=0.100  regression_followed=true
2026-05-01T01:00:00Z  meta  L2/deliberate  dispatch=auto  signals=single-file:-3,layer-crossings:+2,greenfield:+3  task="b"  files=src/b.go  loops=inner
2026-05-01T01:00:02Z  inner  close  terminal=complete  loss_final=0.100
2026-05-01T02:00:00Z  meta  L2/deliberate  dispatch=auto  signals=greenfield:+3  task="c"  files=src/c.go  loops=inner  regression_of=2026-05-01T01:00:00Z
2026-05-01T02:00:02Z  inner  close  terminal=complete  loss_final=0.100
2026-05-01T03:00:00Z  meta  L3/structural  dispatch=explicit  signals=greenfield:+3,cross-layer:+2  task="d"  files=src/d.go  loops=inner
2026-05-01T03:00:02Z  inner  close  terminal=complete  loss_final=0.100  regression_followed=true
2026-05-01T04:00:00Z  meta  L2/deliberate  dispatch=auto  signals=single-file:-3,layer-crossings:+2,greenfield:+3  task="e"  files=src/e.go  loops=inner
2026-05-01T04:00:02Z  inner  close  terminal=complete  loss_final=0.100
2026-05-01T05:00:00Z  meta  L2/deliberate  dispatch=auto  signals=greenfield:+3  task="f"  files=src/e.go  loops=inner
2026-05-01T05:00:02Z  inner  close  terminal=failed  loss_final=0.900
2026-05-01T06:00:00Z  meta  L2/deliberate  dispatch=auto  signals=greenfield:+3  task="g"  files=src/e.go  loops=inner
2026-05-01T06:00:02Z  inner  close  terminal=failed  loss_final=0.900
`
	w := refWeights(t)
	det := Detect(DetectInput{Tasks: parseLog(t, "h.log", []byte(log)).Tasks, Resolver: Resolver{Active: &w}})
	var ran, regressed int
	for _, c := range det.screenTasks.cells {
		if c.ranHigh {
			ran += c.n
		}
		if c.regressedHigh {
			regressed += c.n
		}
	}
	if ran != 6 || regressed != 2 {
		t.Fatalf("%d task(s) ran high (want 6: every auto one), %d regressed (want 2: a by its close, b by c's regression_of; not e by its failing followers, not the explicit d)", ran, regressed)
	}
}

// A state is hostile input (LogState.Check): a cell cannot both have run high and be eligible (dispatched
// low), nor have regressed high without having run high.
func TestStateRefusesImpossibleHighFlags(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		level := "L1/diagnostic  dispatch=auto  signals=explicit-bugfix:-5"
		if i%2 == 0 {
			level = "L2/deliberate  dispatch=auto  signals=single-file:-3,greenfield:+3,layer-crossings:+2"
		}
		fmt.Fprintf(&b, "2026-05-01T%02d:%02d:00Z  meta  %s  task=\"t%d\"  files=src/m%d.go  loops=inner\n2026-05-01T%02d:%02d:30Z  inner  close  terminal=complete  loss_final=0.100  regression_followed=%t\n",
			i/4, i%4*15, level, i, i, i/4, i%4*15, i%4 == 0)
	}
	w := refWeights(t)
	det := Detect(DetectInput{Tasks: parseLog(t, "s.log", []byte(b.String())).Tasks, Resolver: Resolver{Active: &w}})
	states := det.States()
	if len(states) != 1 || states[0].Check() != nil {
		t.Fatalf("setup: %d state(s)", len(states))
	}
	st := states[0]
	high := -1
	for i, c := range st.Cells {
		if c[1]&64 != 0 {
			high = i
		}
	}
	if high < 0 {
		t.Fatalf("setup: no cell regressed high in %v", st.Cells)
	}
	for _, flags := range []int{st.Cells[high][1] | 2, st.Cells[high][1] &^ 32, 128} {
		bad := *st
		bad.Cells = slices.Clone(st.Cells)
		bad.Cells[high][1] = flags
		if bad.Check() == nil {
			t.Errorf("flags %b: the state was taken", flags)
		}
	}
}
