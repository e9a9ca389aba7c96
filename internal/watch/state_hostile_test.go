package watch

import (
	"encoding/json"
	"math"
	"testing"
)

// A state's counts are checked against each other with sums: counts so large that a sum wraps around
// must not pass for a part a Builder made (docs/decisions.md#fourth-review-the-watch-state-and-explore).
func TestStateCheckRefusesWrappingCounts(t *testing.T) {
	p, v := versions(t)
	in := Input{Version: Version{v, applied}, Parent: Version{p, parentFrom}}
	tasks := history(t, many(20, liftedLow), many(3, liftedHigh))
	b := NewBuilder(in)
	for i := range tasks {
		b.Add(&tasks[i])
	}
	good := b.State("trace.log")
	const big = math.MaxInt/2 + 1
	for name, edit := range map[string]func(st *LogState){
		"before and after wrap": func(st *LogState) { st.Before, st.After = big, big },
		"trials wrap": func(st *LogState) {
			st.Before, st.After, st.Labelled = 5, 0, 5
			st.BeforeN = [3]int{big, big, 0}
			st.BeforeK = [3]int{}
			st.Kept, st.Open = nil, nil
		},
		"not counted wrap": func(st *LogState) {
			st.NotCounted = map[string]int{"bump": big, "pin": big}
			st.Kept = nil
			st.Open = nil
		},
		"raised levels wrap":     func(st *LogState) { st.Before, st.Labelled = math.MaxInt/4+1, math.MaxInt; st.RaisedLevels = 8 },
		"labelled at the top":    func(st *LogState) { st.Labelled = math.MaxInt; st.Open = nil },
		"a count beyond the top": func(st *LogState) { st.After, st.Labelled = math.MaxInt, math.MaxInt; st.Open = nil },
	} {
		data, _ := json.Marshal(good)
		var st LogState
		if err := json.Unmarshal(data, &st); err != nil {
			t.Fatal(err)
		}
		edit(&st)
		if err := NewBuilder(in).Restore(&st); err == nil {
			t.Errorf("%s: taken up", name)
		}
	}
}
