// Package compare is the analysis of tune explore: the two recorded arms of the [explore] draw, per
// level edge, compared on regressions (the detection's own evidence rules, internal/evolve) and on
// overkill (internal/accuracy's Classify), with Wilson intervals, Newcombe's interval for the
// difference and an anytime-valid e-value (docs/decisions.md#explore-a-randomized-share-of-near-edge-tasks).
package compare

import (
	"fmt"
	"iter"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/accuracy"
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/explore"
	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// Alpha is the chance, over every look and every edge together, that noise is ever reported as a
// difference: each of the Edges tests needs e ≥ Edges/Alpha (Bonferroni on e-values, as the detection).
const Alpha = 0.05

// Edges is the number of level edges a task can be raised across (L0→L1 … L3→L4).
const Edges = int(weights.NumLevels) - 1

// Threshold is the e-value a difference needs: Edges / Alpha (80).
var Threshold = float64(Edges) / Alpha

// Verdicts of an edge's regression comparison.
const (
	// TooFew: even if every control task had regressed and no raised one, the e-value could not reach
	// the threshold: nothing can be told yet.
	TooFew = "too few to tell"
	// RaisedRegressesLess: the control arm regresses more than the raised arm, beyond the threshold.
	RaisedRegressesLess = "the higher level regresses less"
	// NoDifference: enough tasks that a difference could show, and none does (yet).
	NoDifference = "no difference shown"
)

// Input is what Compare reads.
type Input struct {
	// Stream yields the tasks of every log, one log after the other, in file order (evolve.DetectInput).
	Stream iter.Seq[*traceparse.Task]
	// Active is any weights version (the detection needs one; the arms do not depend on it).
	Active *weights.Weights
	// Now settles the tasks of a quiet log (evolve.SettleAfter); zero reads every log as ended.
	Now time.Time
}

// Arm is one arm at one edge.
type Arm struct {
	// Recorded counts the tasks the logs record in the arm; Settled those closed with a known final loss
	// whose evidence is settled (evolve.Horizon later tasks, or a quiet log): only they are compared.
	Recorded int `json:"recorded"`
	Settled  int `json:"settled"`
	// Regressed: settled tasks with regression evidence, as the detection defines it.
	Regressed accuracy.Rate `json:"regressed"`
	// Overkill: settled tasks accuracy.Classify calls overkill (only a task run at L3/L4 can be); nil
	// when the arm runs below L3.
	Overkill *accuracy.Rate `json:"overkill"`
}

// Difference is the control arm's rate less the raised arm's, with Newcombe's 95 % interval.
type Difference struct {
	Estimate float64 `json:"estimate"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
}

// Edge is the comparison at one level edge: tasks the scorer put at From, run at From (control) or at
// To (raised).
type Edge struct {
	Edge    string `json:"edge"`
	From    string `json:"from"`
	To      string `json:"to"`
	Control Arm    `json:"control"`
	Raised  Arm    `json:"raised"`
	// RegressionDifference is control − raised regression rate: positive when the higher level helps.
	RegressionDifference Difference `json:"regression_difference"`
	// EValue tests "the control arm regresses more" (evolve.LogEValueStrata, one table per log, with the
	// control arm as the carriers): anytime-valid, so the analysis may be run every night.
	EValue  float64 `json:"e_value"`
	Verdict string  `json:"verdict"`
	// OverkillDifference is raised − control overkill rate, when both arms run at L3/L4 (L3→L4 only).
	OverkillDifference *Difference `json:"overkill_difference"`
	// Attrition, when set, says the arms settle at different rates: the draw made them alike, but the
	// level may change how often a task closes with a final loss, and then the settled tasks compared are
	// no longer alike (a two-sided Fisher exact p below AttritionP on settled / not settled per arm).
	Attrition string `json:"attrition,omitempty"`
}

// AttritionP is the Fisher p below which the arms' settled shares are reported as different.
const AttritionP = 0.01

// Result is the analysis.
type Result struct {
	Alpha     float64 `json:"alpha"`
	Threshold float64 `json:"threshold"`
	Edges     []Edge  `json:"edges"`
	// ExtraLevels is what the raised arm spent: one level per raised task recorded.
	ExtraLevels int `json:"extra_levels"`
	// Inconsistent counts explore= records their own line contradicts (in neither arm); Examples
	// lists the first few.
	Inconsistent int              `json:"inconsistent"`
	Examples     []evolve.Warning `json:"inconsistent_examples"`
}

// maxExamples bounds the inconsistent records listed.
const maxExamples = 5

type counts struct {
	recorded, settled, regressed, overkill [2]int // by arm: control, raised
	// strata are the settled tasks' regression tables of each log apart (evolve.Table: control regressed,
	// not, raised regressed, not), in the order the logs first settle a task at this edge.
	strata []evolve.Table
}

func armIndex(a explore.Arm) int {
	if a == explore.Raised {
		return 1
	}
	return 0
}

// Compare reads the logs once and compares the arms at every edge.
func Compare(in Input) *Result {
	var byEdge [Edges]counts
	// Each log's and share's index among each edge's strata: the arms are compared within a log and a
	// share (explore_share=), since logs differ in their rates and in their shares (each project has its
	// own [explore], and may change it while its rates drift), and a pooled table then shows a difference
	// no stratum has (Simpson; docs/decisions.md#fourth-review-the-watch-state-and-explore).
	var stratum [Edges]map[string]int
	res := &Result{Alpha: Alpha, Threshold: Threshold, Examples: []evolve.Warning{}}
	record := func(t *traceparse.Task) (explore.Recorded, bool) {
		rec, ok, err := explore.RecordOf(t)
		return rec, ok && err == nil
	}
	stream := func(yield func(*traceparse.Task) bool) {
		for t := range in.Stream {
			rec, ok, err := explore.RecordOf(t)
			switch {
			case err != nil:
				res.Inconsistent++
				if len(res.Examples) < maxExamples {
					res.Examples = append(res.Examples, evolve.Warning{Source: t.Source, Line: t.Line, Reason: err.Error()})
				}
			case ok:
				byEdge[rec.Level].recorded[armIndex(rec.Arm)]++
				if rec.Arm == explore.Raised {
					res.ExtraLevels++
				}
			}
			if !yield(t) {
				return
			}
		}
	}
	evolve.Detect(evolve.DetectInput{Stream: stream, Now: in.Now, Resolver: evolve.Resolver{Active: in.Active},
		Follow: func(t *traceparse.Task) bool { _, ok := record(t); return ok },
		Followed: func(t *traceparse.Task, evidence []evolve.Evidence) {
			rec, _ := record(t)
			c, a := &byEdge[rec.Level], armIndex(rec.Arm)
			c.settled[a]++
			if stratum[rec.Level] == nil {
				stratum[rec.Level] = map[string]int{}
			}
			key := t.Source + "\x00" + rec.Share
			i, ok := stratum[rec.Level][key]
			if !ok {
				i = len(c.strata)
				stratum[rec.Level][strings.Clone(key)] = i
				c.strata = append(c.strata, evolve.Table{})
			}
			if len(evidence) > 0 {
				c.regressed[a]++
				c.strata[i][2*a]++
			} else {
				c.strata[i][2*a+1]++
			}
			if accuracy.Classify(t).Overkill {
				c.overkill[a]++
			}
		}})
	for lv := range weights.Level(Edges) {
		res.Edges = append(res.Edges, edge(lv, &byEdge[lv]))
	}
	return res
}

func edge(lv weights.Level, c *counts) Edge {
	e := Edge{Edge: explore.Edge(lv), From: lv.String(), To: (lv + 1).String()}
	arm := func(a int, runs weights.Level) Arm {
		x := Arm{Recorded: c.recorded[a], Settled: c.settled[a], Regressed: accuracy.NewRate(c.regressed[a], c.settled[a])}
		if runs >= weights.L3 {
			r := accuracy.NewRate(c.overkill[a], c.settled[a])
			x.Overkill = &r
		}
		return x
	}
	e.Control, e.Raised = arm(0, lv), arm(1, lv+1)
	nc, kc, nr, kr := c.settled[0], c.regressed[0], c.settled[1], c.regressed[1]
	e.RegressionDifference = difference(kc, nc, kr, nr)
	// The most extreme tables the settled tasks allow: every control task regressed, no raised one.
	extreme := make([]evolve.Table, len(c.strata))
	for i, t := range c.strata {
		extreme[i] = evolve.Table{t[0] + t[1], 0, 0, t[2] + t[3]}
	}
	e.EValue = round(evolve.ShownEValue(evolve.LogEValueStrata(c.strata)))
	switch {
	case evolve.LogEValueStrata(extreme) < math.Log(Threshold):
		e.Verdict = TooFew
	case e.EValue >= Threshold:
		e.Verdict = RaisedRegressesLess
	default:
		e.Verdict = NoDifference
	}
	if lv >= weights.L3 {
		d := difference(c.overkill[1], nr, c.overkill[0], nc)
		e.OverkillDifference = &d
	}
	e.Attrition = attrition(e.Control, e.Raised)
	return e
}

// attrition compares the arms' settled shares of their recorded tasks; "" when they do not differ
// beyond AttritionP (or an arm records nothing).
func attrition(control, raised Arm) string {
	a, b, c, d := control.Settled, control.Recorded-control.Settled, raised.Settled, raised.Recorded-raised.Settled
	if control.Recorded == 0 || raised.Recorded == 0 {
		return ""
	}
	p := min(1, 2*min(stats.FisherGreater(a, b, c, d), stats.FisherGreater(c, d, a, b)))
	if p >= AttritionP {
		return ""
	}
	return fmt.Sprintf("the arms settle at different rates (control %d of %d, raised %d of %d; Fisher p %.2g): the level may change how often a task closes with a final loss, so the settled tasks compared may no longer be alike",
		a, control.Recorded, c, raised.Recorded, p)
}

// difference is k1/n1 − k2/n2 with Newcombe's interval, rounded as the rates are (0 without tasks).
func difference(k1, n1, k2, n2 int) Difference {
	var d Difference
	if n1 > 0 && n2 > 0 {
		d.Estimate = float64(k1)/float64(n1) - float64(k2)/float64(n2)
	}
	d.Lo, d.Hi = stats.NewcombeDiff(k1, n1, k2, n2, accuracy.Confidence)
	d.Estimate, d.Lo, d.Hi = accuracy.PyRound(d.Estimate, 4), accuracy.PyRound(d.Lo, 4), accuracy.PyRound(d.Hi, 4)
	return d
}

// round keeps 4 significant digits of an e-value, so the JSON does not carry float noise: the nearest
// float to the 4-digit decimal, which is what strconv reads back (multiplying by a power of ten and
// dividing again is not exact: 1.339e206 came out as 1.3390000000000005e+206).
func round(e float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(e, 'g', 4, 64), 64)
	if err != nil {
		return e // ±Inf or NaN: nothing to round
	}
	return r
}
