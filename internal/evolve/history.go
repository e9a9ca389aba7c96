package evolve

import (
	"iter"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/traceparse"
)

// The detection reads the logs as a stream (docs/decisions.md#flat-memory-issue-28): a log of a year is
// never held. Each log keeps the labelled tasks whose evidence is still open and its last WindowSize
// tasks; a task leaves as soon as its evidence is fixed, and what the screen and the loss rule need of it
// stays as a screenTask (its signals, eligible, flagged, stratum), what the output lists of it as a
// detached Flagged. The decisions are those of a pass over the whole log: the same rules, in the same
// order, on the same tasks.

// detector builds a Detection from the tasks of the logs, one log after the other.
type detector struct {
	in  DetectInput
	r   *Resolver
	det *Detection
	// strata numbers the (log, 30-day block) strata in the order their first counted task comes.
	strata  map[[2]int]int
	keys    [][2]int          // the strata's keys by number
	origins map[int]time.Time // each log's origin (logStream.origin) by its index, for Strata.Start
	through time.Time
	logs    int
	cur     *logStream
}

// logStream is the part of one log a detection still holds.
type logStream struct {
	source string
	index  int // the log's index among the logs read, in order
	// n counts the labelled tasks read; buf holds those from index base on: every task not counted
	// yet and at least the last WindowSize (the window, and the median block of the last horizons).
	n, base int
	buf     []*windowTask
	// done is how many tasks have their horizon evidence (horizonEvidence), fixed how many were
	// counted (count); fixed ≤ done ≤ n.
	done, fixed int
	// last is the latest meta time of the log; origin its first unspent meta time (the strata's start);
	// through the latest meta time of its counted eligible tasks; beforeHeld the latest meta time of the
	// tasks before buf (a state's Last: the held tasks are read again after it).
	last, origin, through, beforeHeld time.Time
	// warnings are its tasks' warnings (the detection's Warnings when the log ends).
	warnings TaskWarnings
	// from is where the log's part of the detection starts: its first screen cell and flagged task, and
	// the accumulated counts before it.
	from struct {
		screen, flagged int
		acc             Accumulated
	}
}

func newDetector(in DetectInput) *detector {
	d := &detector{in: in, r: &in.Resolver, strata: map[[2]int]int{}}
	d.det = &Detection{Window: Window{Size: WindowSize}, Flagged: []Flagged{}, Used: []UsedTask{}, Population: ScreenPopulation,
		Correction: ScreenCorrection, Gains: []Gain{},
		Accumulated: Accumulated{Horizon: Horizon, SettleAfter: SettleAfter.String()}}
	if !in.EvidenceAfter.IsZero() {
		d.det.Accumulated.Watermark = in.EvidenceAfter.UTC().Format(time.RFC3339Nano)
	}
	return d
}

// groupedBySource streams tasks grouped by log, in order of each log's first task, in file order
// within a log: the order a detection reads logs in.
func groupedBySource(tasks []traceparse.Task) iter.Seq[*traceparse.Task] {
	return func(yield func(*traceparse.Task) bool) {
		var order []string
		bySource := map[string][]*traceparse.Task{}
		for i := range tasks {
			t := &tasks[i]
			if _, ok := bySource[t.Source]; !ok {
				order = append(order, t.Source)
			}
			bySource[t.Source] = append(bySource[t.Source], t)
		}
		for _, src := range order {
			for _, t := range bySource[src] {
				if !yield(t) {
					return
				}
			}
		}
	}
}

// add reads the next task; a task of another log ends the current one.
func (d *detector) add(t *traceparse.Task) {
	if d.cur == nil || t.Source != d.cur.source {
		d.endLog()
		d.cur = &logStream{source: t.Source, index: d.logs}
		d.logs++
		ls := d.cur
		ls.from.screen, ls.from.flagged, ls.from.acc = len(d.det.screenTasks.cells), len(d.det.Flagged), d.det.Accumulated
		if st := d.in.Resume[t.Source]; st != nil {
			d.restore(st)
		}
	}
	if t.Level == "" {
		return
	}
	ls := d.cur
	wt, w := resolveTask(t, d.r)
	if d.in.Follow != nil {
		wt.eligible, wt.resolved = wt.closed && d.in.Follow(t), false
	}
	wt.warnAt = ls.warnings.Counts
	for _, x := range w {
		ls.warnings.add(x)
	}
	// A quiet week before this task ends the horizon of every task before it
	// (docs/decisions.md#settling): a night in between saw the log quiet and counted them as they are.
	if ls.n > ls.done && Quiet(ls.last, t.MetaTime) {
		ls.endHorizons()
	}
	ls.buf = append(ls.buf, wt)
	ls.n++
	if t.MetaTime.After(ls.last) {
		ls.last = t.MetaTime
	}
	if ls.origin.IsZero() && !t.MetaTime.IsZero() && (d.in.EvidenceAfter.IsZero() || t.MetaTime.After(d.in.EvidenceAfter)) {
		ls.origin = t.MetaTime
	}
	// The task Horizon places back now has its whole horizon: its evidence is fixed.
	if i := ls.n - 1 - Horizon; i >= ls.done {
		ls.horizonEvidence(i, ls.n-1)
		ls.done = i + 1
	}
	d.countFixed()
}

// countFixed counts every task whose evidence no later task can change any more and that has left the
// last WindowSize (whose tasks the log's end counts, in the window), in order, and lets go of the tasks
// that are neither open nor in the last WindowSize.
func (d *detector) countFixed() {
	ls := d.cur
	for ls.fixed < min(ls.done, ls.n-WindowSize) {
		claims, ok := ls.claimsDecided(ls.fixed)
		if !ok && ls.done-ls.fixed <= ClaimWait {
			break
		}
		if !ok {
			// Still open ClaimWait tasks after its horizon: decided as the log read so far decides it
			// (nothing taken after it), so a run of failures in one busy module cannot hold the log.
			claims, _ = ls.claimsGiven(ls.fixed, nothingTaken)
		}
		wt := ls.at(ls.fixed)
		if claims {
			wt.evidence = append(wt.evidence, wt.sameArea)
		}
		d.count(ls, ls.fixed, false, true)
		ls.fixed++
	}
	// The heldContext tasks before the first uncounted one stay held (a state keeps them,
	// LogState.Context): its placebo's past, and the block its horizon's median is taken over when the
	// horizon ends at a quiet week (horizonEvidence).
	if drop := min(ls.fixed-heldContext, ls.n-WindowSize) - ls.base; drop > 0 {
		for _, wt := range ls.buf[:drop] {
			if wt.t.MetaTime.After(ls.beforeHeld) {
				ls.beforeHeld = wt.t.MetaTime
			}
		}
		clear(ls.buf[:drop])
		ls.buf = ls.buf[drop:]
		ls.base += drop
	}
}

func (ls *logStream) at(i int) *windowTask { return ls.buf[i-ls.base] }

// endHorizons ends the horizon of every task whose evidence is still open at the log's last task read
// (the log ends, or a quiet week follows it): their evidence is what the tasks up to it give.
func (ls *logStream) endHorizons() {
	for i := ls.done; i < ls.n; i++ {
		ls.horizonEvidence(i, ls.n-1)
	}
	ls.done = ls.n
}

// horizonEvidence attaches to the i-th labelled task the evidence of rule 3 (docs/decisions.md#evolution-step)
// that its horizon gives, the tasks after it up to end (i+Horizon, or the log's last task): regression_followed
// and regression_of at once; the corroborated same-area evidence (docs/decisions.md#same-area-evidence) as
// a possibility, since a later task speaks as a same-area witness for at most one earlier task, the nearest
// one (witness): whether its witnesses are free depends on the tasks after it. Same-area compares against
// the median of the WindowSize labelled tasks that end the horizon (for the tasks of the last window, the
// window median).
func (ls *logStream) horizonEvidence(i, end int) {
	orig := ls.at(i)
	later := ls.buf[i+1-ls.base : end+1-ls.base]
	if orig.ranHigh {
		// Only the exact kinds: a same-area witness speaks for one earlier task, and letting tasks at L2+
		// claim witnesses would change what the eligible tasks' evidence is.
		orig.regressedHigh = orig.t.RegressionFollowed || slices.ContainsFunc(later, func(l *windowTask) bool { return names(l.t.RegressionOf, orig.t) })
	}
	if !orig.eligible {
		return
	}
	if orig.t.RegressionFollowed {
		orig.evidence = append(orig.evidence, Evidence{Kind: KindRegressionFollowed})
	}
	for _, l := range later {
		if names(l.t.RegressionOf, orig.t) {
			orig.evidence = append(orig.evidence, Evidence{Kind: KindRegressionOf, By: l.t.MetaTimestamp, ByLine: l.t.Line})
		}
	}
	// A log taken up from a state always holds the block (the state keeps the last WindowSize tasks
	// held); max(base) only keeps a state that does not match its log from reaching before the held part.
	_, median := blockMedian(ls.buf[max(ls.base, end-WindowSize+1)-ls.base : end+1-ls.base])
	orig.sameArea, orig.witnesses, orig.weak = sameAreaWitnesses(orig, later, median)
	orig.placebo = ls.placebo(i, median)
}

// placebo says whether the nearest earlier task in orig's code area, within SameAreaDistance labelled
// tasks, failed (by the median its followers are judged by): a neighbour the task cannot have broken,
// as exposed to its area's ordinary failures as its first follower (docs/decisions.md#weak-witness).
// The tasks before it are held (countFixed keeps heldContext ≥ SameAreaDistance of them).
func (ls *logStream) placebo(i int, median *Num) bool {
	orig := ls.at(i)
	for j := i - 1; j >= max(ls.base, i-SameAreaDistance); j-- {
		if _, overlap := sameArea(orig.t, ls.at(j).t); len(overlap) > 0 {
			return sameAreaFailure(ls.at(j), median) != ""
		}
	}
	return false
}

// sameAreaWitnesses is the same-area evidence for orig when its first SameAreaWitnesses later tasks in its
// code area (each within SameAreaDistance labelled tasks) all failed, with their distances as a bit set
// (bit d: d tasks later); zero when they did not. Only the first ones may speak for it: with every later
// task a candidate, shared code areas and ordinary hard tasks flag noise; and one ordinary failure in a
// busy module is not enough on its own. weak says the first of them failed: a single witness, which
// never flags a task but enters the excess a change is credited with (docs/decisions.md#weak-witness).
func sameAreaWitnesses(orig *windowTask, later []*windowTask, median *Num) (ev Evidence, at witnessSet, weak bool) {
	seen := 0
	for j, l := range later {
		if j+1 > SameAreaDistance {
			break
		}
		basis, overlap := sameArea(orig.t, l.t)
		if len(overlap) == 0 {
			continue
		}
		failure := sameAreaFailure(l, median)
		if failure == "" {
			return Evidence{}, 0, seen > 0
		}
		at |= 1 << (j + 1)
		if seen == 0 {
			ev = Evidence{Kind: KindSameArea, By: l.t.MetaTimestamp, ByLine: l.t.Line,
				Basis: basis, Overlap: overlap, Median: median, Failure: failure, Distance: j + 1}
			if l.t.LossFinal != nil {
				loss := Num(*l.t.LossFinal)
				ev.LossFinal = &loss
			}
		} else {
			ev.CorroboratedBy = l.t.MetaTimestamp
		}
		if seen++; seen == SameAreaWitnesses {
			return ev, at, true
		}
	}
	return Evidence{}, 0, seen > 0
}

// witnessSet is a set of later tasks by distance: bit d is the task d labelled tasks later (1 ≤ d ≤
// SameAreaDistance).
type witnessSet uint8

const allWitnesses witnessSet = (1<<(SameAreaDistance+1) - 1) &^ 1

// next is the taken witnesses as the task before this one sees them, given those this one sees
// (taken): this task's own claim, then everything one task further away. A task claims its witnesses
// when it has a same-area possibility and none of them is taken by a nearer later task.
func (wt *windowTask) next(taken witnessSet) witnessSet {
	if wt.claims(taken) {
		taken |= wt.witnesses
	}
	return taken << 1 & allWitnesses
}

func (wt *windowTask) claims(taken witnessSet) bool {
	return wt.witnesses != 0 && taken&wt.witnesses == 0
}

// claimsDecided says whether the i-th task claims its same-area witnesses, once the tasks after it
// decide it: the witnesses they take are followed back from every possible set taken beyond the last
// task with a fixed horizon. ok is false while the answer still depends on tasks not read (a run of
// tasks in one busy module that keep claiming each other's witnesses). Visited from the last back, as a
// pass over the whole log visits them, the nearest earlier task claiming first.
func (ls *logStream) claimsDecided(i int) (claims, ok bool) { return ls.claimsGiven(i, anythingTaken) }

// Sets of witness sets (bit w: w can be the set taken beyond the last task with a fixed horizon):
// anythingTaken while the tasks after it are not read, nothingTaken where the log read so far ends.
var (
	anythingTaken = func() (possible uint64) {
		for w := witnessSet(0); w <= allWitnesses; w++ {
			if w&^allWitnesses == 0 {
				possible |= 1 << w
			}
		}
		return possible
	}()
	nothingTaken uint64 = 1 << 0
)

// claimsGiven is claimsDecided with possible the sets that may be taken beyond the last task with a
// fixed horizon.
func (ls *logStream) claimsGiven(i int, possible uint64) (claims, ok bool) {
	wt := ls.at(i)
	if wt.witnesses == 0 {
		return false, true
	}
	for j := ls.done - 1; j > i; j-- {
		l := ls.at(j)
		var next uint64
		for w := witnessSet(0); w <= allWitnesses; w++ {
			if possible&(1<<w) != 0 {
				next |= 1 << l.next(w)
			}
		}
		possible = next
	}
	var yes, no bool
	for w := witnessSet(0); w <= allWitnesses; w++ {
		if possible&(1<<w) != 0 {
			if wt.claims(w) {
				yes = true
			} else {
				no = true
			}
		}
	}
	return yes, !(yes && no)
}

// endLog ends the current log: the tasks of its last horizon get the evidence the rest of the log gives,
// claims are followed back from its last task, and every task still held is counted.
func (d *detector) endLog() {
	ls := d.cur
	if ls == nil {
		return
	}
	d.cur = nil
	if ls.n > 0 {
		d.det.states = append(d.det.states, d.state(ls))
	}
	d.det.Warnings = append(d.det.Warnings, ls.warnings.list(ls.source)...)
	// The tasks before fixedHorizon had their whole horizon: Horizon later tasks, or a quiet week after.
	// One of them settles only once its claim on its same-area witnesses is decided too (claimsDecided,
	// as countFixed counts): in a run of failures in one module the claims alternate from the log's last
	// task, and the next task read flips them (docs/decisions.md#sixth-review-the-quiet-week).
	fixedHorizon := ls.done
	decided := make([]bool, max(0, fixedHorizon-ls.fixed))
	for i := ls.fixed; i < fixedHorizon; i++ {
		_, decided[i-ls.fixed] = ls.claimsDecided(i)
	}
	ls.endHorizons()
	var taken witnessSet
	// max: a log that ends inside the tasks its state counted (a state that does not match its log) has
	// nothing left to count.
	claimed := make([]bool, max(0, ls.n-ls.fixed))
	for j := ls.n - 1; j >= ls.fixed; j-- {
		claimed[j-ls.fixed] = ls.at(j).claims(taken)
		taken = ls.at(j).next(taken)
	}
	ended := d.in.Now.IsZero() || Quiet(ls.last, d.in.Now)
	windowStart := max(ls.base, ls.n-min(ls.n, WindowSize)) // as the median block above
	for i := ls.fixed; i < ls.n; i++ {
		wt := ls.at(i)
		if claimed[i-ls.fixed] {
			wt.evidence = append(wt.evidence, wt.sameArea)
		}
		d.count(ls, i, i >= windowStart, ended || i < fixedHorizon && decided[i-ls.fixed])
	}
	ls.fixed = ls.n
	window := ls.buf[windowStart-ls.base:]
	if len(window) > 0 {
		wl := summariseWindow(ls.source, ls.n, window)
		win := &d.det.Window
		win.Tasks += wl.Tasks
		win.Closed += wl.Closed
		win.Eligible += wl.Eligible
		win.ResolvedByActive += wl.ResolvedByActive
		win.Used += wl.Used
		win.Logs = append(win.Logs, wl)
	}
}

// count enters the i-th labelled task of a log into the detection once its evidence is fixed: into the
// accumulated population when settled, into the flagged list when flagged (in the window or counted), into
// the ledger's listing when the window holds it and the ledger names it.
func (d *detector) count(ls *logStream, i int, inWindow, settled bool) {
	det, wt := d.det, ls.at(i)
	if inWindow && wt.usedBy != "" {
		det.Used = append(det.Used, UsedTask{Key: wt.key, MetaTimestamp: strings.Clone(wt.t.MetaTimestamp), Title: strings.Clone(wt.t.Title),
			Source: wt.t.Source, Line: wt.t.Line, By: wt.usedBy})
	}
	spent := !d.in.EvidenceAfter.IsZero() && !wt.t.MetaTime.After(d.in.EvidenceAfter)
	counted := false
	switch {
	case !wt.eligible && !(isAuto(wt.t.Dispatch) && wt.closed && wt.usedBy == "" && !spent && settled):
	case wt.eligible && spent:
		det.Accumulated.BeforeWatermark++
	case wt.eligible && !settled:
		det.Accumulated.Pending++
		pt := newScreenTask(wt.fired, 0, true, false)
		pt.unclamped = wt.unclamped
		det.pending.add(pt, 1)
	default:
		// Settled, after the watermark, not ledgered: eligible tasks enter the tables, the others
		// (auto, closed, L2+ under the active weights) only the loss rule's extra levels.
		flagged := wt.eligible && len(wt.evidence) > 0
		st := newScreenTask(wt.fired, d.stratumOf(ls, wt.t.MetaTime), wt.eligible, flagged)
		st.day = dayOf(wt.t.MetaTime)
		st.weak = wt.eligible && !flagged && wt.weak
		st.placebo = wt.eligible && !flagged && wt.placebo
		st.unclamped = wt.unclamped
		st.ranHigh = wt.ranHigh
		st.regressedHigh = wt.ranHigh && wt.regressedHigh
		det.screenTasks.add(st, 1)
		det.Accumulated.Tasks++
		if wt.eligible {
			det.Accumulated.Eligible++
			counted = true
			if d.in.Followed != nil {
				d.in.Followed(wt.t, wt.evidence)
			}
			if wt.t.MetaTime.After(d.through) {
				d.through = wt.t.MetaTime
			}
			if wt.t.MetaTime.After(ls.through) {
				ls.through = wt.t.MetaTime
			}
		}
	}
	if len(wt.evidence) > 0 && (inWindow || counted) {
		f := wt.flagged()
		f.InWindow, f.Counted = inWindow, counted
		det.Flagged = append(det.Flagged, f.detached())
		if counted {
			det.Accumulated.Flagged++
		}
	}
}

// stratumOf numbers the task's stratum: its log, and within it the block of StratumSpan from the log's
// first unspent task (docs/decisions.md#evidence-per-log): regression rates may differ between logs and
// drift within one over months, together with a signal's share, which a pooled null mistakes for the signal.
func (d *detector) stratumOf(ls *logStream, at time.Time) int32 {
	block := NoBlock
	if !ls.origin.IsZero() && !at.IsZero() {
		// Floored: a task whose line comes after the origin but whose time is before it (a log out of
		// time order) gets a block of its own before the first, never one after it nor NoBlock.
		since := at.Sub(ls.origin)
		block = int(since / StratumSpan)
		if since < 0 && since%StratumSpan != 0 {
			block--
		}
	}
	return d.stratumOfLog(ls, block)
}

// NoBlock is the block of a task without a meta time, or of a log with none to count from: a key no
// time gives, so such tasks share no stratum with timed ones; only the whole history's term counts them.
const NoBlock = math.MinInt32

// stratumOfLog numbers the log's stratum of block, noting the log's origin the block counts from.
func (d *detector) stratumOfLog(ls *logStream, block int) int32 {
	if !ls.origin.IsZero() {
		if d.origins == nil {
			d.origins = map[int]time.Time{}
		}
		d.origins[ls.index] = ls.origin
	}
	return d.stratum([2]int{ls.index, block})
}

// dayOf is t's day since the Unix epoch, UTC (a task without a meta time: the zero time's day, before
// every other).
func dayOf(t time.Time) int32 {
	s := t.Unix()
	d := s / 86400
	if s%86400 < 0 {
		d-- // floor, not towards zero
	}
	return int32(d)
}

// stratum numbers a stratum by its key, in the order the keys first come.
func (d *detector) stratum(k [2]int) int32 {
	n, ok := d.strata[k]
	if !ok {
		n = len(d.strata)
		d.strata[k] = n
		d.keys = append(d.keys, k)
	}
	return int32(n)
}

// strataInTime places the strata in time for the onset mixture: each one's block start, its block on one
// calendar for every log (30-day periods from the earliest log's origin: an onset is a time, and each
// log counts its own blocks from its own origin), and each log's latest block marked.
func (d *detector) strataInTime() Strata {
	st := Strata{Block: make([]int, len(d.keys)), Latest: make([]bool, len(d.keys)), Start: make([]time.Time, len(d.keys))}
	var first time.Time
	for _, o := range d.origins {
		if first.IsZero() || o.Before(first) {
			first = o
		}
	}
	span := int64(StratumSpan / time.Second)
	last := map[int]int{}
	for i, k := range d.keys {
		st.Block[i] = NoBlock
		if o := d.origins[k[0]]; k[1] != NoBlock && !o.IsZero() {
			start := o.Unix() + int64(k[1])*span // in seconds: no Duration overflow
			st.Start[i] = time.Unix(start, 0).UTC()
			since := start - first.Unix()
			b := since / span
			if since < 0 && since%span != 0 {
				b-- // floored, as stratumOf
			}
			st.Block[i] = int(b)
		}
		if b, ok := last[k[0]]; !ok || k[1] > b {
			last[k[0]] = k[1]
		}
	}
	for i, k := range d.keys {
		st.Latest[i] = k[1] == last[k[0]]
	}
	return st
}

// finish ends the last log and derives the screen, the trigger and the proposal.
func (d *detector) finish() *Detection {
	d.endLog()
	det := d.det
	if len(det.Window.Logs) == 1 {
		det.Median = det.Window.Logs[0].Median
	}
	if !d.through.IsZero() {
		det.Accumulated.Through = d.through.UTC().Format(time.RFC3339Nano)
	}
	det.Screen = Screen(det.screenTasks.cells, countedFlagged(det.Flagged), d.strataInTime())
	paysFrom(det.Screen, det.screenTasks.cells, d.r.Active, d.in.Origin)
	det.Triggered = triggered(det.Flagged, det.Screen)
	det.Proposal, det.EdgeTasks, det.Reason = propose(det, d.r.Active, d.in.Origin, d.in.Parity, d.in.Exclude, false)
	return det
}

// detached is f with its own copies of the text it shares with the log's read buffers, which a kept
// flagged task must not hold on to.
func (f Flagged) detached() Flagged {
	f.MetaTimestamp, f.Title, f.Level, f.SignalsSource = strings.Clone(f.MetaTimestamp), strings.Clone(f.Title), strings.Clone(f.Level), strings.Clone(f.SignalsSource)
	f.Key = strings.Clone(f.Key)
	f.Signals = slices.Clone(f.Signals)
	for i := range f.Signals {
		f.Signals[i].Name = strings.Clone(f.Signals[i].Name)
	}
	f.Evidence = slices.Clone(f.Evidence)
	for i := range f.Evidence {
		e := &f.Evidence[i]
		e.By, e.CorroboratedBy, e.Basis, e.Failure = strings.Clone(e.By), strings.Clone(e.CorroboratedBy), strings.Clone(e.Basis), strings.Clone(e.Failure)
		e.Overlap = slices.Clone(e.Overlap)
		for j := range e.Overlap {
			e.Overlap[j] = strings.Clone(e.Overlap[j])
		}
	}
	return f
}
