package evolve

import (
	"math"
	"slices"
	"time"

	"github.com/ldd-tools/tune/internal/stats"
)

// The current excess (docs/decisions.md#current-excess-issue-28). The loss rule credits a change with
// the excess regression rate of the tasks it lifts; over the whole accumulated history that mixes the
// nights before an effect began with the nights after it (an effect from night 15 of 30: an estimate of
// 0.26–0.45 against a true 0.70). So the excess is estimated over the recent part of the history when
// the lifted tasks' regression rate is shown to have changed there, and over the whole history otherwise.
// Whether a signal has an effect at all stays the accumulated e-value's to decide
// (docs/decisions.md#anytime-valid-test): the change point only chooses the part of the history whose
// excess the loss rule weighs.

// ChangeAlpha bounds, at one look, the chance that the loss rule takes a recent part's excess although
// the lifted tasks' regression rate never changed: Bonferroni over the candidate splits and both
// directions, each a one-sided Fisher exact test of the lifted tasks after the split against the ones
// before. It holds
// per look, not over the nightly looks (measured in TestCurrentExcessRarelySplitsAConstantRate).
const ChangeAlpha = 0.02

// minChangeSpan is the shortest recent part tried, in days.
const minChangeSpan = 4

// excessEstimate is the excess a change is credited with and, when a change point was supported, the
// first day (screenTask.day) of the recent part it was estimated on.
type excessEstimate struct {
	excess float64
	since  int32
	split  bool
	// cells is the table the excess was estimated from (excessTable.cells): the lifted tasks regressed,
	// not, the others regressed, not.
	cells [4]int
	// high is the carriers' excess among the tasks that ran at L2+, subtracted from excess; nil when the
	// test does not support it (excessTable.estimate).
	high *float64
}

// sinceDate is the first day of the recent part as 2006-01-02, "" for the whole history.
func (e excessEstimate) sinceDate() string {
	if !e.split {
		return ""
	}
	return time.Unix(int64(e.since)*86400, 0).UTC().Format(time.DateOnly)
}

// currentExcess is the excess of the tasks group puts with the lifted ones over the others
// (excessTable: flagged, or a weak witness net of the placebos), on the recent part of the history after a supported change point of
// the lifted tasks' regression rate, else on the whole history; 0 when no task is lifted.
//
// The candidate splits are the suffixes of the last 4, 8, 16, … days that leave a day with a task before
// them: a geometric grid, so that a year of history costs 7 candidates, and a change that began d days
// ago is matched by a suffix of between d/2 and d days, all of it after the change. For each split and
// each direction (the rate rose or fell) a one-sided Fisher test compares the lifted tasks after the
// split with the ones before (regressed or not) — the rate whose change matters is the one estimated;
// all carriers, lifted or not, were measured too and changed no decision on the onset regime, while a
// pooled rate moves with the mix of lifted and deeper carriers. A split is supported when its p is at
// most ChangeAlpha/2K, K the candidate suffixes. Among the supported splits the one under which the
// lifted tasks' two rates fit best (the maximum likelihood) is taken, and the excess is estimated on its
// recent part alone: the lifted tasks there against the other tasks there, so the comparison stays
// within one period. The whole history is used when no split is supported: the suffix
// that only chance favours (the largest of many noisy estimates, biased upward) is never taken on its
// point estimate.
func currentExcess(tasks []screenCell, group func(*screenTask) excessGroup) excessEstimate {
	return groupDays(tasks, group).estimate(nil)
}

// dayTables is the excess tables of a grouping of the tasks, per day (order: the days, sorted) and
// whole: what currentExcess estimates from, built once when several estimates differ only by tasks
// added (moreToPay).
type dayTables struct {
	days  map[int32]*excessTable
	order []int32
	whole excessTable
}

func groupDays(tasks []screenCell, group func(*screenTask) excessGroup) dayTables {
	dt := dayTables{days: map[int32]*excessTable{}}
	for _, t := range tasks {
		g := group(&t.screenTask)
		if g == groupNone {
			continue
		}
		d := dt.days[t.day]
		if d == nil {
			d = &excessTable{}
			dt.days[t.day] = d
		}
		for _, e := range []*excessTable{&dt.whole, d} {
			switch g {
			case groupLifted, groupOther:
				e.add(g == groupLifted, t)
			default:
				e.addHigh(g == groupHighCarrier, t)
			}
		}
	}
	dt.order = make([]int32, 0, len(dt.days))
	for d := range dt.days {
		dt.order = append(dt.order, d)
	}
	slices.Sort(dt.order)
	return dt
}

// dayExtra is tasks added on one day, on top of a dayTables.
type dayExtra struct {
	day   int32
	table excessTable
}

// estimate is currentExcess's estimate from the tables, with extra's tasks added when given.
func (dt dayTables) estimate(extra *dayExtra) excessEstimate {
	whole, order := dt.whole, dt.order
	if extra != nil {
		whole.plus(&extra.table)
		if _, ok := dt.days[extra.day]; !ok {
			order = append(slices.Clone(order), extra.day)
			slices.Sort(order)
		}
	}
	if whole.n[0] == 0 {
		return excessEstimate{}
	}
	est := whole.estimate()
	first, last := order[0], order[len(order)-1]
	var cuts []int32
	for span := int64(minChangeSpan); int64(last)-span+1 > int64(first); span *= 2 {
		cuts = append(cuts, int32(int64(last)-span+1))
	}
	bound := ChangeAlpha / float64(2*len(cuts))
	best := math.Inf(-1)
	for _, cut := range cuts {
		var recent, before excessTable
		for _, d := range order {
			part := &before
			if d >= cut {
				part = &recent
			}
			if t := dt.days[d]; t != nil {
				part.plus(t)
			}
			if extra != nil && d == extra.day {
				part.plus(&extra.table)
			}
		}
		r, b := recent.cells(), before.cells()
		ra, rb, ba, bb := r[0], r[1], b[0], b[1]
		if ra+rb == 0 || ba+bb == 0 {
			continue
		}
		if stats.FisherGreater(ra, rb, ba, bb) > bound && stats.FisherGreater(ba, bb, ra, rb) > bound {
			continue
		}
		if ll := binomialLogLik(ra, rb) + binomialLogLik(ba, bb); ll > best {
			best = ll
			est = recent.estimate()
			est.since, est.split = cut, true
		}
	}
	return est
}

// plus adds o's counts to e.
func (e *excessTable) plus(o *excessTable) {
	for g := range 2 {
		e.n[g] += o.n[g]
		e.flagged[g] += o.flagged[g]
		e.weak[g] += o.weak[g]
		e.placebo[g] += o.placebo[g]
		for r := range 2 {
			e.high[g][r] += o.high[g][r]
		}
	}
}

// HighAlpha is the one-sided level at which the carriers that ran at L2+ are taken to regress more than
// the other tasks that ran at L2+ (docs/decisions.md#the-carriers-at-l2). It can only lower a change's
// credited excess, so it bounds a loss of power, not the error control, which stays the test's.
const HighAlpha = 0.05

// estimate is the excess of the table's lifted tasks over its other eligible tasks. When the carriers
// that ran at L2+ also regressed more than the other tasks that ran at L2+ (a one-sided Fisher test at
// HighAlpha), their excess there is what a level does not cure, and lifting cannot avoid it: the lifted
// tasks are credited only with the difference of the two excesses — how much of the carriers' excess
// the level removes. Each excess compares tasks at one level, so a base rate that differs between the
// levels (harder tasks run higher) is no part of it.
func (e excessTable) estimate() excessEstimate {
	est := excessEstimate{excess: e.excess(), cells: e.cells()}
	c, o := e.high[0], e.high[1]
	if c[0]+c[1] > 0 && o[0]+o[1] > 0 && stats.FisherGreater(c[0], c[1], o[0], o[1]) <= HighAlpha {
		high := Excess(c[0], c[1], o[0], o[1])
		est.high = &high
		est.excess = math.Max(0, est.excess-high)
	}
	return est
}

// binomialLogLik is the log likelihood of k successes and f failures at their own rate.
func binomialLogLik(k, f int) float64 {
	n := float64(k + f)
	return xlogy(float64(k), float64(k)/n) + xlogy(float64(f), float64(f)/n)
}
