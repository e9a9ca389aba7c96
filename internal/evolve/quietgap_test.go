package evolve

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// quietGapLog is a log of n tasks: L1 fixes and L2+ tasks with a cue and layer-crossings, regression_followed
// and regression_of naming tasks 1..2·Horizon back, files shared at random, and an 8-day quiet gap now
// and then.
func quietGapLog(rng *rand.Rand, n int) []byte {
	var b strings.Builder
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var stamps []string
	for i := range n {
		at = at.Add(time.Duration(30+rng.IntN(600)) * time.Minute)
		if rng.IntN(60) == 0 {
			at = at.Add(8 * 24 * time.Hour)
		}
		ts := at.Format(time.RFC3339)
		level := "L1/diagnostic  dispatch=auto  signals=explicit-bugfix:-5,layer-crossings:+2"
		switch rng.IntN(4) {
		case 0:
			level = "L2/deliberate  dispatch=auto  signals=single-file:-3,layer-crossings:+2,greenfield:+3"
		case 1:
			level = "L1/diagnostic  dispatch=auto  signals=explicit-bugfix:-5"
		case 2:
			if rng.IntN(3) == 0 {
				level = "L3/structural  dispatch=auto  signals=greenfield:+3,cross-layer:+2,layer-crossings:+2,single-file:-3,ambiguous:+2"
			}
		}
		of := ""
		if len(stamps) > 0 && rng.IntN(5) == 0 {
			of = "  regression_of=" + stamps[max(0, len(stamps)-1-rng.IntN(2*Horizon))]
		}
		term := "complete"
		if rng.IntN(5) == 0 {
			term = "failed"
		}
		fmt.Fprintf(&b, "%s  meta  %s  task=\"t%d\"  files=src/m%d.go  loops=inner%s\n", ts, level, i, rng.IntN(6), of)
		fmt.Fprintf(&b, "%s  inner  close  terminal=%s  loss_final=0.%03d  regression_followed=%t\n", at.Add(30*time.Second).Format(time.RFC3339), term, rng.IntN(1000), rng.IntN(8) == 0)
		stamps = append(stamps, ts)
	}
	return []byte(b.String())
}

// A night taken up from an earlier night's state (through its JSON) counts every task as the whole log
// does, with the carriers at L2+ and the single witnesses and placebos, and the loss rule's gain is the
// same — also when a quiet week falls among the last WindowSize tasks a night held. Found by the
// independent review of the carriers at L2+ (docs/decisions.md#the-carriers-at-l2): the median a held
// task's same-area followers are judged by is the one of the WindowSize tasks that end its horizon, and
// when that horizon ended at a quiet gap, the state held too few of them (SameAreaDistance), so the
// night judged them against a shorter block (9 of 40 seeds).
func TestANightAfterAQuietGapDecidesAsAFullRead(t *testing.T) {
	w := refWeights(t)
	plus2 := Change{Kind: weights.ChangeSignal, Signal: weights.LayerCrossings, Delta: weights.Whole(2)}
	for seed := range 40 {
		rng := rand.New(rand.NewPCG(7, uint64(seed)))
		n := 150 + rng.IntN(250)
		res := parseLog(t, "rv.log", quietGapLog(rng, n))
		now := res.Tasks[len(res.Tasks)-1].MetaTime.Add(time.Hour)
		full := Detect(DetectInput{Tasks: res.Tasks, Now: now, Resolver: Resolver{Active: &w}})
		var high int
		for _, c := range full.screenTasks.cells {
			if c.regressedHigh {
				high += c.n
			}
		}
		if seed == 0 && high == 0 {
			t.Fatalf("setup: seed 0, %d tasks: no regression counted at L2+", n)
		}
		fg := lossGain(plus2, changeExcess(plus2, &w, full.screenTasks.cells), &w, full.screenTasks.cells, nil)
		for _, cut := range []int{n / 4, n / 2, 3 * n / 4} {
			// Each night sees the log up to its cut, at a Now just after it, and takes up the last night's state.
			var state *LogState
			var got *Detection
			for _, c := range []int{cut, cut + (n-cut)/2, n} {
				var tasks []traceparse.Task
				for _, tk := range res.Tasks[:c] {
					if state == nil || tk.Offset >= state.Offset {
						tasks = append(tasks, tk)
					}
				}
				in := DetectInput{Tasks: tasks, Now: res.Tasks[c-1].MetaTime.Add(time.Hour), Resolver: Resolver{Active: &w}}
				if c == n {
					in.Now = now
				}
				if state != nil {
					in.Resume = map[string]*LogState{state.Source: state}
				}
				got = Detect(in)
				data, err := json.Marshal(got.States()[0])
				if err != nil {
					t.Fatal(err)
				}
				state = new(LogState)
				if err := json.Unmarshal(data, state); err != nil || state.Check() != nil {
					t.Fatalf("seed %d cut %d: state %v %v", seed, c, err, state.Check())
				}
			}
			gg := lossGain(plus2, changeExcess(plus2, &w, got.screenTasks.cells), &w, got.screenTasks.cells, nil)
			if d := cellDiff(got.screenTasks.cells, full.screenTasks.cells); d != "" {
				t.Errorf("seed %d cut %d: cells differ: %s", seed, cut, d)
			}
			if !reflect.DeepEqual(got.Flagged, full.Flagged) || got.Accumulated != full.Accumulated || gg.Net != fg.Net {
				t.Errorf("seed %d cut %d: nightly %+v (net %v) vs full read %+v (net %v)", seed, cut, got.Accumulated, gg.Net, full.Accumulated, fg.Net)
			}
		}
	}
}

// cellDiff compares two populations as multisets (cell order aside).
func cellDiff(a, b []screenCell) string {
	m := map[screenTask]int{}
	for _, c := range a {
		m[c.screenTask] += c.n
	}
	for _, c := range b {
		m[c.screenTask] -= c.n
	}
	var out []string
	for k, v := range m {
		if v != 0 {
			out = append(out, fmt.Sprintf("%+d × {sigs %v elig %t flagged %t ranHigh %t regHigh %t day %d stratum %d weak %t placebo %t}", v, k.signals(), k.eligible, k.flagged, k.ranHigh, k.regressedHigh, k.day, k.stratum, k.weak, k.placebo))
		}
	}
	return strings.Join(out, "; ")
}
