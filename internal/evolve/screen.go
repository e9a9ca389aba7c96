package evolve

import (
	"math"
	"sort"

	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/weights"
)

// ScreenRow is the 2×2 screen of one signal over the closed tasks of the window: A present & flagged,
// B present & not flagged, C absent & flagged, D absent & not flagged.
type ScreenRow struct {
	Signal string `json:"signal"`
	A      int    `json:"a"`
	B      int    `json:"b"`
	C      int    `json:"c"`
	D      int    `json:"d"`
	// RateFlagged is a/(a+b): how often a task with the signal was flagged; RateOther c/(c+d).
	RateFlagged Num `json:"rate_with"`
	RateOther   Num `json:"rate_without"`
	Phi         Num `json:"phi"`
	LogOR       Num `json:"log_odds"`
	SE          Num `json:"se"`
	Z           Num `json:"z"`
	P           Num `json:"fisher_p"`
	HolmP       Num `json:"holm_p"`
	MinP        Num `json:"min_p"`
	// Consistent: fired in every flagged task (with more than three flagged: in at least three and in at
	// least two thirds of them).
	Consistent bool   `json:"consistent"`
	Verdict    string `json:"verdict"`
	// Confidence grades a candidate: "strong" when the Holm-adjusted p is below Alpha too, "provisional"
	// when only the raw p is; "underpowered" when no count could reach Alpha; "" otherwise.
	Confidence string `json:"confidence,omitempty"`
}

// screenTask is one closed window task as the screen sees it.
type screenTask struct {
	fired   [weights.NumSignals]bool
	flagged bool
	key     string // taskKey of the task
}

// Screen builds the per-signal rows in signal table order.
//
// Verdicts (docs/decisions.md#screen-verdicts): "no-signal" when the signal never fired in a flagged task or goes with fewer
// flags than without it (log-odds ≤ 0); "underpowered" when even the most extreme table with these
// margins could not reach Alpha (benchstat's minimum-evidence rule); "candidate" when the one-sided Fisher
// p is at most Alpha; "no-signal" otherwise. Holm is applied across the nine signals and reported as the
// candidate's confidence: with a window of 20 tasks and 3 flags a signal must be nearly exclusive to the
// flagged tasks to survive it, and the replay is the gate that decides, so a raw-p candidate is kept and
// labelled "provisional" instead of being dropped.
func Screen(tasks []screenTask, nFlagged int) []ScreenRow {
	rows := make([]ScreenRow, weights.NumSignals)
	ps := make([]float64, weights.NumSignals)
	for s := range rows {
		var a, b, c, d int
		for _, t := range tasks {
			switch {
			case t.fired[s] && t.flagged:
				a++
			case t.fired[s]:
				b++
			case t.flagged:
				c++
			default:
				d++
			}
		}
		sc := stats.Screen(a, b, c, d, Alpha, Confidence)
		rows[s] = ScreenRow{Signal: weights.Signal(s).String(), A: a, B: b, C: c, D: d,
			RateFlagged: Num(sc.RateWith), RateOther: Num(sc.RateWithout), Phi: Num(sc.Phi),
			LogOR: Num(sc.LogOR), SE: Num(sc.SE), Z: Num(sc.Z), P: Num(sc.P), MinP: Num(sc.MinP),
			Consistent: consistent(a, nFlagged)}
		ps[s] = sc.P
	}
	holm := stats.Holm(ps)
	for s := range rows {
		r := &rows[s]
		r.HolmP = Num(holm[s])
		switch {
		case r.A == 0 || !(float64(r.LogOR) > 0):
			r.Verdict = VerdictNoSignal
		case !(float64(r.MinP) <= Alpha):
			r.Verdict, r.Confidence = VerdictUnderpowered, "underpowered"
		case float64(r.P) <= Alpha:
			r.Verdict, r.Confidence = VerdictCandidate, "provisional"
			if float64(r.HolmP) <= Alpha {
				r.Confidence = "strong"
			}
		default:
			r.Verdict = VerdictNoSignal
		}
	}
	return rows
}

// consistent is rule 6 (docs/decisions.md#evolution-step): fired in every flagged task; with more than three flagged, in at least three
// and at least two thirds of them.
func consistent(firedInFlagged, nFlagged int) bool {
	if nFlagged == 0 {
		return false
	}
	if nFlagged <= 3 {
		return firedInFlagged == nFlagged
	}
	return firedInFlagged >= 3 && 3*firedInFlagged >= 2*nFlagged
}

// preference is the SKILL's order among equally good signals: ambiguous, contract-rule-hit,
// layer-crossings, then the rest (by name).
func preference(s weights.Signal) int {
	switch s {
	case weights.Ambiguous:
		return 0
	case weights.ContractRuleHit:
		return 1
	case weights.LayerCrossings:
		return 2
	}
	return 3
}

// pickSignal takes the consistent candidate with the highest z. Ties (equal z) prefer the upward-biasing
// change — the +1 that lifts more flagged tasks a whole level under the parent weights — then the
// preference order, then the name. Changes in exclude are skipped (the loop passes the ones it tried).
func pickSignal(rows []ScreenRow, flagged []Flagged, parent *weights.Weights, exclude []Change) (weights.Signal, bool) {
	type cand struct {
		s    weights.Signal
		z    float64
		lift int
	}
	var cands []cand
	for s, r := range rows {
		sig := weights.Signal(s)
		if r.Verdict != VerdictCandidate || !r.Consistent || excluded(exclude, Change{Kind: ChangeSignal, Signal: sig}) {
			continue
		}
		change := Change{Kind: ChangeSignal, Signal: sig, Delta: weights.Whole(1)}
		cw := change.Apply(*parent)
		lift := 0
		for _, f := range flagged {
			if cw.Level(cw.Score(f.Fired)) > parent.Level(parent.Score(f.Fired)) {
				lift++
			}
		}
		cands = append(cands, cand{sig, float64(r.Z), lift})
	}
	if len(cands) == 0 {
		return 0, false
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if math.Abs(a.z-b.z) > 1e-9 {
			return a.z > b.z
		}
		if a.lift != b.lift {
			return a.lift > b.lift
		}
		if preference(a.s) != preference(b.s) {
			return preference(a.s) < preference(b.s)
		}
		return a.s.String() < b.s.String()
	})
	return cands[0].s, true
}

// excluded matches a change by its knob (signal or edge), whatever the delta.
func excluded(list []Change, c Change) bool {
	for _, x := range list {
		if x.Kind == c.Kind && ((c.Kind == ChangeSignal && x.Signal == c.Signal) || (c.Kind == ChangeBucket && x.Edge == c.Edge)) {
			return true
		}
	}
	return false
}

// pickEdge is the bucket rule (rule 7, docs/decisions.md#evolution-step): the upper edge (of L0..L3) on which the most flagged tasks
// score exactly under the parent weights, when at least TriggerThreshold of them do. The edge moves down by
// one, which lifts exactly those tasks into the next bucket.
func pickEdge(flagged []Flagged, parent *weights.Weights, exclude []Change) (Change, int, bool) {
	var onEdge [weights.NumLevels - 1]int
	for _, f := range flagged {
		sum := parent.Score(f.Fired)
		lv := parent.Level(sum)
		if lv < weights.L4 && sum == parent.Buckets.Edges[lv] {
			onEdge[lv]++
		}
	}
	best := -1
	for lv, n := range onEdge {
		if n >= TriggerThreshold && (best < 0 || n > onEdge[best]) {
			best = lv
		}
	}
	if best < 0 {
		return Change{}, 0, false
	}
	c := Change{Kind: ChangeBucket, Edge: weights.Level(best), Delta: weights.Whole(-1)}
	if !c.Valid(parent) || excluded(exclude, c) {
		return Change{}, onEdge[best], false
	}
	return c, onEdge[best], true
}
