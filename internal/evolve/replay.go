package evolve

import (
	"github.com/ldd-tools/tune/internal/fixtures"
	"github.com/ldd-tools/tune/internal/scorer"
	"github.com/ldd-tools/tune/internal/weights"
)

// Suite is a list of scenarios with their detections: each prompt is detected once, then re-weighted
// cheaply for every weights vector (docs/decisions.md#evolution-step, rule 8).
type Suite struct {
	Scenarios  []fixtures.Scenario
	Detections []scorer.Detection
}

// PrepareSuite detects every scenario's prompt once.
func PrepareSuite(scs []fixtures.Scenario) *Suite {
	s := &Suite{Scenarios: scs, Detections: make([]scorer.Detection, len(scs))}
	for i := range scs {
		s.Detections[i] = scorer.Detect(scs[i].Prompt, scs[i].History)
	}
	return s
}

// Len is the number of scenarios.
func (s *Suite) Len() int {
	if s == nil {
		return 0
	}
	return len(s.Scenarios)
}

// Row is one scenario scored under one weights vector.
type Row struct {
	Name string `json:"name"`
	// Accepted are the accepted levels; Got is the final level the scorer chose.
	Accepted []string     `json:"accepted"`
	Got      string       `json:"got"`
	Raw      weights.Half `json:"raw_score"`
	// Source and WantSource are the dispatch sources (long form).
	Source     string   `json:"dispatch_source"`
	WantSource string   `json:"want_dispatch_source"`
	Top2       []string `json:"top2,omitempty"`
	WantTop2   []string `json:"want_top2,omitempty"`
	Fragment   string   `json:"fragment,omitempty"`
	// LevelsOff is how many levels Got lies below (negative) or above (positive) the accepted range.
	LevelsOff int `json:"levels_off"`
	// Loss is the scenario's priced loss: level cost + other_item for a wrong source + other_item for a
	// wrong top-2/fragment (docs/decisions.md#evolution-step, rule 8).
	Loss         int  `json:"loss"`
	SourceOK     bool `json:"dispatch_source_ok"`
	ItemOK       bool `json:"top2_fragment_ok"`
	CreativityOK bool `json:"creativity_ok"`
	// Red: the scenario fails its rubric (any loss, or a wrong creativity where it names one).
	Red bool `json:"red"`
}

// Replay is a suite scored under one weights vector.
type Replay struct {
	Rows []Row `json:"scenarios"`
	// Loss is the mean scenario loss; Total the sum.
	Loss  Num `json:"suite_loss"`
	Total int `json:"total_loss"`
	Red   int `json:"red"`
}

// Score replays the suite under w.
func (s *Suite) Score(w *weights.Weights) Replay {
	rep := Replay{Rows: make([]Row, len(s.Scenarios))}
	for i := range s.Scenarios {
		rep.Rows[i] = scoreScenario(&s.Scenarios[i], s.Detections[i].Score(w), &w.Cost)
		rep.Total += rep.Rows[i].Loss
		if rep.Rows[i].Red {
			rep.Red++
		}
	}
	if len(s.Scenarios) > 0 {
		rep.Loss = Num(float64(rep.Total) / float64(len(s.Scenarios)))
	}
	return rep
}

// Losses returns the per-scenario losses only: the decision's hot path, which never builds a Result (no
// header, no strings, no allocation per scenario). TestLossesAgreeWithScore holds it to Score.
func (s *Suite) Losses(w *weights.Weights) []int {
	out := make([]int, len(s.Scenarios))
	for i := range s.Scenarios {
		sc, d := &s.Scenarios[i], &s.Detections[i]
		_, auto, final, _ := d.Levels(w)
		out[i] = scenarioLoss(sc, final, d.DispatchSource(auto, final) == sc.DispatchSource, detectionItemOK(sc, d, w), &w.Cost)
	}
	return out
}

// scenarioLoss prices one scenario (docs/decisions.md#evolution-step, rule 8): levels missed times the cost of the direction, plus
// other_item for a wrong dispatch source and for a wrong top-2 signals / fragment where it is named.
func scenarioLoss(sc *fixtures.Scenario, final weights.Level, sourceOK, itemOK bool, cost *weights.Cost) int {
	off := levelsOff(sc, final)
	loss := 0
	switch {
	case off < 0:
		loss = -off * cost.TooLow
	case off > 0:
		loss = off * cost.TooHigh
	}
	if !sourceOK {
		loss += cost.OtherItem
	}
	if !itemOK {
		loss += cost.OtherItem
	}
	return loss
}

func scoreScenario(sc *fixtures.Scenario, r scorer.Result, cost *weights.Cost) Row {
	row := Row{Name: sc.Name, Got: r.FinalLevel.String(), Raw: weights.Half(r.RawScore), Source: r.DispatchSource,
		WantSource: sc.DispatchSource, WantTop2: sc.Top2, LevelsOff: levelsOff(sc, r.FinalLevel),
		SourceOK: r.DispatchSource == sc.DispatchSource, ItemOK: itemOK(sc, r),
		CreativityOK: sc.Creativity == "" || sc.Creativity == r.Creativity}
	for _, l := range sc.Levels {
		row.Accepted = append(row.Accepted, l.String())
	}
	if len(sc.Top2) > 0 {
		row.Top2 = top2(&r)
	}
	if r.OverrideFragment != nil {
		row.Fragment = *r.OverrideFragment
	}
	row.Loss = scenarioLoss(sc, r.FinalLevel, row.SourceOK, row.ItemOK, cost)
	row.Red = row.Loss > 0 || !row.CreativityOK
	return row
}

func levelsOff(sc *fixtures.Scenario, got weights.Level) int {
	switch {
	case got < sc.MinLevel():
		return int(got - sc.MinLevel())
	case got > sc.MaxLevel():
		return int(got - sc.MaxLevel())
	}
	return 0
}

// itemOK is rubric item 3 where the scenario names it: the top-2 signals (as a set) and the fragment.
func itemOK(sc *fixtures.Scenario, r scorer.Result) bool {
	got := top2(&r)
	return top2OK(sc, got) && fragmentOK(sc, r.OverrideFragment)
}

// detectionItemOK is itemOK on a detection, for the hot path.
func detectionItemOK(sc *fixtures.Scenario, d *scorer.Detection, w *weights.Weights) bool {
	if len(sc.Top2) > 0 {
		top, n := d.Top2(w)
		var names [2]string
		for i := 0; i < n; i++ {
			names[i] = top[i].String()
		}
		if !top2OK(sc, names[:n]) {
			return false
		}
	}
	var frag *string
	if d.Override != nil {
		frag = &d.Override.Fragment
	}
	return fragmentOK(sc, frag)
}

func top2OK(sc *fixtures.Scenario, got []string) bool {
	if len(sc.Top2) == 0 {
		return true
	}
	if len(got) != len(sc.Top2) {
		return false
	}
	for _, want := range sc.Top2 {
		if want != got[0] && (len(got) < 2 || want != got[1]) {
			return false
		}
	}
	return true
}

func fragmentOK(sc *fixtures.Scenario, frag *string) bool {
	return sc.Fragment == "" || (frag != nil && *frag == sc.Fragment)
}

// top2 names the header's top-2 signals (absolute weight, then name).
func top2(r *scorer.Result) []string {
	top := r.TopSignals(2)
	out := make([]string, len(top))
	for i, s := range top {
		out[i] = s.Name
	}
	return out
}
