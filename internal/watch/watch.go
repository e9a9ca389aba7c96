// Package watch judges an applied weights version on the tasks that came after it, and only on what
// the change did: the tasks whose level differs between the parent and the version
// (docs/decisions.md#watch). A task's two levels are its signals scored under each; only tasks
// dispatched auto count (an override-down, a bump or an explicit level is the user's, not the
// weights'). Three tests, each an e-process (anytime valid, so the nightly look is free):
//
//   - not helping: the tasks the change lifted off the low side (L0/L1 under the parent, L2+ under
//     the version) still regress at the rate such tasks had while low, not at most at the rate from
//     which the change stops paying under the stated losses (that rate less the change's break-even
//     excess, both from the tasks before the version);
//   - harmful (overkill): the cost of an upward change beyond the price the loss rule put on it. The
//     rule prices every level it raises as too high unless the task needed it: all of a task raised
//     without being lifted off the low side, and 1 − excess of a lifted one. So only the lifted tasks
//     that landed at L3/L4 can show a cost beyond the price: overkill more often than 1 − excess
//     (never less than L3/L4 tasks before), plus a margin;
//   - harmful (regressions): the tasks the change moved down to L0/L1 regressed more often than the
//     same kind of task did at its higher level before, plus the margin.
//
// An upward change takes tasks off the low side only, so low-side regressions after it are chance or
// drift, never the change: they are no evidence of harm. Verdicts: harmful or not helping when a test
// reaches 1/α (α split over the tests the two versions make possible: the overkill test only when the
// change can lift a task from L0/L1 past L2); else too early while fewer than Config.MinTasks tasks
// moved; else holding.
//
// A regression is what the trace records, read as the detection reads it: regression_followed=true on
// the task's close, a later labelled task of the same log within evolve.Horizon labelled tasks naming it
// with regression_of=<its meta timestamp> (evolve.Names; a naming before the task or beyond the horizon
// is none), or — the weak kind, a single witness — the first later task of the same log in its code area
// (within evolve.SameAreaDistance labelled tasks) failed. Every rate counts the weak kind alike, before the version and after it: an
// ordinary failure that follows a task falls on the lifted tasks and the low-side tasks before alike,
// and the tests compare those rates (docs/decisions.md#the-watch-reads-the-single-witness).
//
// The package is pure: tasks, weights and times in, a Result out. A Builder takes the tasks one at a
// time (a streamed read) and keeps only counts, the rows of the moved tasks, and per log the trials
// whose horizon is still open (at most evolve.Horizon): a task settles once the evolve.Horizon labelled
// tasks after it are read. A log's part of a Builder can be kept (State) and taken up (Restore), so
// that a nightly run reads only what was appended (docs/decisions.md#watch-state).
// Writing the rollback proposal is the application layer's job (internal/app).
package watch

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/accuracy"
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/scorer"
	"github.com/ldd-tools/tune/internal/tomlbound"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// Verdicts.
const (
	Holding    = "holding"
	TooEarly   = "too early"
	NotHelping = "not helping"
	Harmful    = "harmful"
)

// Test names.
const (
	NotHelpingTest = "not helping"
	OverkillTest   = "harmful: overkill"
	RegressedTest  = "harmful: regressions"
)

// Config holds the bounds of the verdicts (the [watch] table of tune.toml).
type Config struct {
	// MinTasks is how many tasks the change moved (auto, closed) the version needs before "holding".
	MinTasks int `toml:"min_tasks" json:"min_tasks"`
	// OverkillBound is the margin over the rate before that the harm tests' null allows.
	OverkillBound float64 `toml:"overkill_bound" json:"overkill_bound"`
	// MinRecurrences is how many lifted tasks must still regress for "not helping", however large the
	// e-value.
	MinRecurrences int `toml:"min_recurrences" json:"min_recurrences"`
	// Alpha bounds the chance that a test ever rejects while its null holds, over every look.
	Alpha float64 `toml:"alpha" json:"alpha"`
}

// DefaultConfig is used for every bound tune.toml leaves out.
var DefaultConfig = Config{MinTasks: 10, OverkillBound: 0.10, MinRecurrences: 2, Alpha: 0.05}

// WithDefaults fills the zero fields of c from DefaultConfig.
func (c Config) WithDefaults() Config {
	d := DefaultConfig
	c.MinTasks = cmp.Or(c.MinTasks, d.MinTasks)
	c.OverkillBound = cmp.Or(c.OverkillBound, d.OverkillBound)
	c.MinRecurrences = cmp.Or(c.MinRecurrences, d.MinRecurrences)
	c.Alpha = cmp.Or(c.Alpha, d.Alpha)
	return c
}

// Check reports a bound out of range.
func (c Config) Check() error {
	bad := func(key, format string, v any) error {
		return &tomlbound.KeyError{Key: []string{"watch", key}, Msg: fmt.Sprintf("watch.%s %v: "+format, key, v)}
	}
	switch {
	case c.MinTasks < 0:
		return bad("min_tasks", "want a positive number of tasks", c.MinTasks)
	case !(c.OverkillBound >= 0 && c.OverkillBound <= 1): // NaN fails both
		return bad("overkill_bound", "want a rate margin between 0 and 1", c.OverkillBound)
	case c.MinRecurrences < 0:
		return bad("min_recurrences", "want a positive number of tasks", c.MinRecurrences)
	case !(c.Alpha >= 0 && c.Alpha < 1): // NaN fails both
		return bad("alpha", "want a level between 0 and 1", c.Alpha)
	}
	return nil
}

// Version is a weights version and when it became active.
type Version struct {
	Weights *weights.Weights
	From    time.Time
}

// Input is what Judge needs.
type Input struct {
	Tasks []traceparse.Task
	// Version is the version watched; Parent the one it replaced. Until is when the version stopped
	// being active (zero while it is). Tasks without weights= are attributed by meta time:
	// [Parent.From, Version.From) to the parent, [Version.From, Until) to the version.
	Version Version
	Parent  Version
	Until   time.Time
	// Changes describe the change (e.g. "contract-rule-hit +1"), for the reader; the tasks it moved
	// are found by scoring each task under both versions.
	Changes []string
	Config  Config
	// Logs names the logs in the order they are read (optional): the moved tasks are listed log by log
	// in this order, a log not named after them in the order of its first task.
	Logs []string
}

// TaskRef names a task behind a verdict.
type TaskRef struct {
	Log           string `json:"log"`
	Line          int    `json:"line"`
	MetaTimestamp string `json:"meta_timestamp"`
	Task          string `json:"task"`
	Level         string `json:"level"`
	// Note says what it shows (e.g. "lifted L1 → L2, still regressed: regression_followed=true").
	Note string `json:"note"`
}

// MovedTask is one row of the watch's table: a task under the version, dispatched auto, whose level
// differs between the parent and the version.
type MovedTask struct {
	Log           string `json:"log"`
	Line          int    `json:"line"`
	MetaTimestamp string `json:"meta_timestamp"`
	Task          string `json:"task"`
	// From and To are its signals' level under the parent and under the version; Level is the level
	// it was dispatched at.
	From  string `json:"from"`
	To    string `json:"to"`
	Level string `json:"level"`
	// Test is the test it is a trial of ("" when none: a move that neither leaves the low side nor
	// lands at L0/L1; a task raised to L3/L4 without being lifted is priced in full, no trial).
	Test string `json:"test"`
	// OverkillTrial: lifted and landed at L3/L4, it is a trial of the overkill test too.
	OverkillTrial bool `json:"overkill_trial,omitempty"`
	// Event says whether it counts against the version in that test, Evidence how it is known
	// (regression_followed=true, regression_of by …, overkill: k=1, complete).
	Regressed bool   `json:"regressed"`
	Event     bool   `json:"event"`
	Evidence  string `json:"evidence"`
}

// Test is one e-process on the tasks the change moved.
type Test struct {
	Name string `json:"name"`
	// Sample says which tasks are its trials, Event what counts against the version.
	Sample string `json:"sample"`
	Event  string `json:"event"`
	N      int    `json:"n"`
	K      int    `json:"k"`
	// Null is the rate the version is allowed (H0: rate ≤ Null), fixed from the tasks before it as
	// Basis says; Alt the alternative, 0 for the average over every rate in [Null, 1].
	Null  float64 `json:"null_rate"`
	Alt   float64 `json:"alt_rate"`
	Basis string  `json:"basis"`
	// E is the e-value; Threshold the 1/α' it must reach (α' = Alpha split over the tests).
	E         float64 `json:"e_value"`
	Threshold float64 `json:"threshold"`
	// NeedMore is how many more events in a row would reach it (0 when reached; -1 when no test).
	NeedMore int  `json:"need_more"`
	Rejected bool `json:"rejected"`
	// Note says why the test cannot be made, when it cannot.
	Note string `json:"note,omitempty"`
}

// Before is what the tasks under the parent give the tests: the rates their nulls are fixed from.
type Before struct {
	// LiftedWhileLow: the tasks (auto, L0/L1) the version would have lifted to L2+, and their
	// regressions; OtherLow: the other auto L0/L1 tasks it would not move.
	LiftedWhileLow accuracy.Rate `json:"lifted_while_low"`
	OtherLow       accuracy.Rate `json:"other_low"`
	// OverkillHigh: auto L3/L4 tasks and their overkill; Dropped: the tasks the version would move
	// down to L0/L1, and their regressions at their higher level.
	OverkillHigh accuracy.Rate `json:"overkill_high"`
	Dropped      accuracy.Rate `json:"dropped"`
	// RaisedLevels: the levels the version would have raised on the auto tasks before it, at any level;
	// BreakEven: the excess regression rate of the lifted tasks from which that pays under the stated
	// losses (weights.Cost.BreakEven; 1 when no excess does), the not-helping test's yardstick.
	RaisedLevels int     `json:"raised_levels"`
	BreakEven    float64 `json:"break_even_excess"`
	// Excess: the lifted tasks' regression rate while low less the other low-side tasks' (evolve.Excess,
	// the loss rule's estimate: Laplace rates, at least 0): the share of the lifted tasks expected to need the raise, what the loss rule
	// credits the change with; 1 − Excess of a lifted task's raise is priced as too high.
	Excess float64 `json:"excess"`
}

// Result is the watch's finding on one version.
type Result struct {
	Version string   `json:"version"`
	Parent  string   `json:"parent"`
	Changes []string `json:"changes"`
	Verdict string   `json:"verdict"`
	Reason  string   `json:"reason"`
	// NeedMore is, for "too early", how many more moved tasks under the version are needed.
	NeedMore int `json:"need_more,omitempty"`
	// TasksBefore and TasksAfter are the closed tasks with a level under the parent and the version.
	TasksBefore int `json:"tasks_before"`
	TasksAfter  int `json:"tasks_after"`
	// Moved counts the auto tasks under the version whose level the change moved; NotCounted the moved
	// tasks of other dispatches (override-down, bump, explicit, none), which never count.
	Moved      int            `json:"moved"`
	NotCounted map[string]int `json:"not_counted"`
	Before     Before         `json:"before"`
	Tests      []Test         `json:"tests"`
	MovedTasks []MovedTask    `json:"moved_tasks"`
	// Evidence lists the tasks behind a "not helping" or "harmful" verdict.
	Evidence []TaskRef `json:"evidence"`
	Config   Config    `json:"config"`
}

// Proposes reports whether the verdict calls for a rollback proposal.
func (r *Result) Proposes() bool { return r.Verdict == NotHelping || r.Verdict == Harmful }

type period int

const (
	none period = iota
	before
	after
)

// What a task before the version is a trial of, for the rates the tests' nulls are fixed from: an
// index of Builder.beforeN.
const (
	catLifted uint8 = iota
	catOther
	catDropped
)

// kept is a moved task under the version: a row of the table, and evidence that a later
// regression_of= or same-area witness can still change while it is open.
type kept struct {
	row      MovedTask
	test     string
	overkill bool
	// costTrial: lifted and landed at L3/L4, a trial of the overkill test.
	costTrial bool
	k         int
	terminal  string
	regressed string // "" or how: regression_followed / regression_of by … / same-area: …
}

// Builder judges a version on tasks added one at a time, so that a caller streaming the logs holds
// only counts and the tasks a verdict can still depend on, never the logs' tasks
// (docs/decisions.md#watch-memory). A task's evidence comes only from the evolve.Horizon labelled tasks
// of its log after it, as the detection's does, so a task settles once they are read: its status is
// folded into the counts (before the version) or its row (after), and it leaves the open tasks
// (docs/decisions.md#the-watch-settles-a-task-after-the-detections-horizon).
type Builder struct {
	in           Input
	cfg          Config
	vName, pName string
	// parts are the logs' shares, in the order of in.Logs, then of each other log's first task.
	parts    []*logPart
	bySource map[string]*logPart
	last     *logPart
	strs     map[string]string // interned levels, dispatches and terminals
}

// logPart is one log's share of a judgement: its counts, its kept rows, and its open tasks. Only the
// log's own tasks change it, so a log's part can be kept and taken up apart (State, Restore).
type logPart struct {
	source string
	n      [3]int // closed tasks with a level per period
	// The trials before the version: counts and the regressions known, settled or open.
	beforeN, beforeK [3]int // by catLifted, catOther, catDropped
	// Levels the version would raise on the auto tasks before it: all of them, and the lifted ones'.
	raisedLevels, liftedLevels int
	overHigh, nHigh            int
	notCounted                 map[string]int
	kept                       []kept
	// labelled counts the log's labelled tasks, last is the latest of their meta times; open holds, in
	// order, the trials not known to have regressed whose horizon is not complete.
	labelled int
	last     time.Time
	open     []openTask
}

// openTask is a trial (a task a rate before is taken from, or a kept task) not known to have regressed,
// while the evolve.Horizon labelled tasks after it are not all read.
type openTask struct {
	at            int // its labelled-task index in the log
	metaTimestamp string
	metaTime      time.Time
	kept          int   // its index in the part's kept rows; -1 before the version
	cat           uint8 // before the version: what it is a trial of
	// awaiting: its first later task in its code area (within evolve.SameAreaDistance) has not come.
	awaiting bool
	area     evolve.Area
	// namedBy is the meta timestamp of the first later task of its horizon naming it with regression_of=,
	// witness that of its single same-area witness ("" when none).
	namedBy, witness string
}

// regressed says how the open task is known to have regressed, "" when it is not (yet).
func (o *openTask) regressed() string {
	switch {
	case o.namedBy != "":
		return "regression_of by the task of " + o.namedBy
	case o.witness != "":
		return "same-area: the task of " + o.witness + " failed (a single witness)"
	}
	return ""
}

// NewBuilder starts a judgement of in.Version against in.Parent; in.Tasks is ignored (Add them).
func NewBuilder(in Input) *Builder {
	in.Tasks = nil
	b := &Builder{in: in, cfg: in.Config.WithDefaults(), strs: map[string]string{}, bySource: map[string]*logPart{}}
	b.vName, b.pName = weights.VersionName(in.Version.Weights.Version), weights.VersionName(in.Parent.Weights.Version)
	for _, l := range in.Logs {
		b.part(l)
	}
	return b
}

// part is the share of the log source, made when it is first named.
func (b *Builder) part(source string) *logPart {
	if b.last != nil && b.last.source == source {
		return b.last
	}
	p := b.bySource[source]
	if p == nil {
		p = &logPart{source: strings.Clone(source), notCounted: map[string]int{}}
		b.bySource[p.source] = p
		b.parts = append(b.parts, p)
	}
	b.last = p
	return p
}

// intern returns s, copied out of the reader's buffers once per distinct value.
func (b *Builder) intern(s string) string {
	if v, ok := b.strs[s]; ok {
		return v
	}
	v := strings.Clone(s)
	b.strs[v] = v
	return v
}

func lowSide(level string) bool { return level == "L0" || level == "L1" }

// Add counts one task (any task: open ones and those of other versions only matter as later tasks of
// their log). The tasks of a log must come in file order. It keeps no reference to t.
func (b *Builder) Add(t *traceparse.Task) {
	p := b.part(t.Source)
	if t.Level != "" {
		p.later(t)
	}
	if !t.Closed || t.Level == "" {
		return
	}
	per := attribute(t, b.vName, b.pName, b.in)
	if per == none {
		return
	}
	fired := firedSignals(t)
	clamped := scorer.RanClamped(t.Level, t.Creativity)
	// The level each runs it at: a task moved into the L4 bucket at standard creativity still runs at
	// L3 and is not counted as moved (scorer.RunsAt).
	from := scorer.RunsAt(b.in.Parent.Weights.Level(b.in.Parent.Weights.Score(fired)), clamped)
	to := scorer.RunsAt(b.in.Version.Weights.Level(b.in.Version.Weights.Score(fired)), clamped)
	auto := t.Dispatch == "auto"
	if per == after && t.WeightsVersion == "" && auto && from != to && t.Level == from.String() {
		// Dated after the version but dispatched at the parent's level, not the version's: the hook still
		// had the parent (a pull request merged nights after its proposal was dated;
		// docs/decisions.md#the-watch-dates-a-task-by-its-level-when-the-log-does-not-say).
		per = before
	}
	p.n[per]++
	if per == before {
		if auto {
			p.addBefore(t, from, to)
		}
		return
	}
	if from == to {
		return
	}
	if !auto {
		p.notCounted[b.intern(cmp.Or(t.Dispatch, "none"))]++
		return
	}
	o := accuracy.Classify(t)
	k := kept{row: MovedTask{Log: p.source, Line: t.Line, MetaTimestamp: strings.Clone(t.MetaTimestamp), Task: strings.Clone(t.Title),
		From: from.String(), To: to.String(), Level: b.intern(t.Level)}, overkill: o.Overkill, k: o.K, terminal: b.intern(o.Terminal)}
	switch {
	case from <= weights.L1 && to >= weights.L2:
		k.test = NotHelpingTest
		k.costTrial = t.Level == "L3" || t.Level == "L4"
	case to < from && lowSide(t.Level):
		k.test = RegressedTest
	}
	if t.RegressionFollowed {
		k.regressed = "regression_followed=true"
	} else {
		p.await(t, len(p.kept), 0)
	}
	p.kept = append(p.kept, k)
}

// await opens t (a trial not known to have regressed, which later has counted already): kept is its
// row's index (-1 before the version), cat what it is a trial of before.
func (p *logPart) await(t *traceparse.Task, kept int, cat uint8) {
	p.open = append(p.open, openTask{at: p.labelled - 1, metaTimestamp: strings.Clone(t.MetaTimestamp), metaTime: t.MetaTime,
		kept: kept, cat: cat, awaiting: true, area: evolve.AreaOf(t)})
}

// later counts a labelled task of the log and lets it speak for the open tasks before it: a
// regression_of= naming one (evolve.Names, the detection's rule) is its regression; for each whose
// first later task in its code area it is (within evolve.SameAreaDistance), a failure is that task's
// single witness and anything else is none. Then the open tasks whose horizon it completes settle.
func (p *logPart) later(t *traceparse.Task) {
	j := p.labelled
	if evolve.Quiet(p.last, t.MetaTime) {
		// A quiet week (evolve.SettleAfter) ends the horizon of every task before it, as in the detection
		// (docs/decisions.md#settling): a night in between judged them by what it had.
		p.settleUpTo(len(p.open))
	}
	if t.MetaTime.After(p.last) {
		p.last = t.MetaTime
	}
	var area *evolve.Area
	failed := t.Terminal == "failed" || t.Terminal == "aborted" || t.RegressionFollowed
	for i := range p.open {
		o := &p.open[i]
		if t.RegressionOf != "" && o.namedBy == "" && evolve.Names(t.RegressionOf, o.metaTimestamp, o.metaTime) {
			o.namedBy = strings.Clone(t.MetaTimestamp)
		}
		if !o.awaiting {
			continue
		}
		if j-o.at > evolve.SameAreaDistance {
			o.awaiting, o.area = false, evolve.Area{}
			continue
		}
		if area == nil {
			v := evolve.AreaOf(t)
			area = &v
		}
		if o.area.Overlaps(*area) {
			if failed {
				o.witness = strings.Clone(t.MetaTimestamp)
			}
			o.awaiting, o.area = false, evolve.Area{}
		}
	}
	p.labelled++
	settled := 0
	for settled < len(p.open) && j-p.open[settled].at >= evolve.Horizon {
		settled++
	}
	p.settleUpTo(settled)
}

// settleUpTo settles the first n open tasks and lets them go.
func (p *logPart) settleUpTo(n int) {
	if n == 0 {
		return
	}
	for i := range p.open[:n] {
		p.settle(&p.open[i])
	}
	left := copy(p.open, p.open[n:])
	clear(p.open[left:])
	p.open = p.open[:left]
}

// settle folds an open task whose horizon is complete into the counts or its row.
func (p *logPart) settle(o *openTask) {
	how := o.regressed()
	switch {
	case o.kept >= 0:
		p.kept[o.kept].regressed = how
	case how != "":
		p.beforeK[o.cat]++
	}
}

// addBefore counts an auto task under the parent as a trial of the rates the nulls are fixed from.
func (p *logPart) addBefore(t *traceparse.Task, from, to weights.Level) {
	if t.Level == "L3" || t.Level == "L4" {
		p.nHigh++
		if accuracy.Classify(t).Overkill {
			p.overHigh++
		}
	}
	if to > from {
		p.raisedLevels += int(to - from)
	}
	var cat uint8
	switch {
	case lowSide(t.Level) && from <= weights.L1 && to >= weights.L2:
		cat = catLifted
		p.liftedLevels += int(to - from)
	case lowSide(t.Level) && from == to:
		cat = catOther
	case to < from && to <= weights.L1:
		cat = catDropped
	default:
		return
	}
	p.beforeN[cat]++
	if t.RegressionFollowed {
		p.beforeK[cat]++
		return
	}
	p.await(t, -1, cat)
}

// laplace is the rate k/n pulled toward one half by one event and one non-event: with few tasks
// before, the rates a null is fixed from move toward each other (and toward the middle), so the
// tests ask for more evidence, never less.
func laplace(k, n int) float64 { return (float64(k) + 1) / (float64(n) + 2) }

// rows are the kept tasks of every log, in order, with what their open evidence says so far (a log
// that ends gives the tasks of its last horizon the evidence of the tasks after them, as the
// detection's last horizon does).
func (b *Builder) rows() []kept {
	var out []kept
	for _, p := range b.parts {
		from := len(out)
		out = append(out, p.kept...)
		for i := range p.open {
			if o := &p.open[i]; o.kept >= 0 {
				out[from+o.kept].regressed = o.regressed()
			}
		}
	}
	return out
}

// Result returns the verdict on the tasks added so far.
func (b *Builder) Result() *Result {
	cfg, vName := b.cfg, b.vName
	var n, bn, bk [3]int
	var raisedLevels, liftedLevels, overHigh, nHigh int
	notCounted := map[string]int{}
	for _, p := range b.parts {
		for i := range 3 {
			n[i] += p.n[i]
			bn[i] += p.beforeN[i]
			bk[i] += p.beforeK[i]
		}
		// The regressions before learnt so far of the tasks still open.
		for i := range p.open {
			if o := &p.open[i]; o.kept < 0 && o.regressed() != "" {
				bk[o.cat]++
			}
		}
		raisedLevels += p.raisedLevels
		liftedLevels += p.liftedLevels
		overHigh += p.overHigh
		nHigh += p.nHigh
		for k, v := range p.notCounted {
			notCounted[k] += v
		}
	}
	res := &Result{Version: vName, Parent: b.pName, Changes: slices.Clone(b.in.Changes), Config: cfg, Evidence: []TaskRef{},
		NotCounted: notCounted, MovedTasks: []MovedTask{}, TasksBefore: n[before], TasksAfter: n[after]}
	if res.Changes == nil {
		res.Changes = []string{}
	}
	res.Before = Before{LiftedWhileLow: accuracy.NewRate(bk[0], bn[0]), OtherLow: accuracy.NewRate(bk[1], bn[1]),
		Dropped: accuracy.NewRate(bk[2], bn[2]), OverkillHigh: accuracy.NewRate(overHigh, nHigh), RaisedLevels: raisedLevels,
		BreakEven: roundE(b.in.Parent.Weights.Cost.BreakEven(float64(bn[catLifted]), float64(liftedLevels), float64(raisedLevels))),
		Excess:    roundE(evolve.Excess(bk[catLifted], bn[catLifted]-bk[catLifted], bk[catOther], bn[catOther]-bk[catOther]))}

	rows := b.rows()
	var trials, events [3]int // by test: not helping, overkill, regressions
	testIndex := map[string]int{NotHelpingTest: 0, OverkillTest: 1, RegressedTest: 2}
	for i := range rows {
		k := &rows[i]
		row := k.row
		row.Test, row.Regressed = k.test, k.regressed != ""
		row.Evidence = k.regressed
		row.Event = row.Regressed && k.test != ""
		if j, ok := testIndex[k.test]; ok {
			trials[j]++
			if row.Event {
				events[j]++
			}
		}
		if k.overkill {
			// Raised to L3/L4 without a lift, the overkill is the price the change was accepted for.
			how := fmt.Sprintf("overkill: k=%d, %s", k.k, k.terminal)
			if !k.costTrial {
				how += " (priced: raised without a lift)"
			}
			row.Evidence = strings.Join(slices.DeleteFunc([]string{row.Evidence, how}, func(s string) bool { return s == "" }), "; ")
		}
		if row.OverkillTrial = k.costTrial; k.costTrial {
			trials[1]++
			if k.overkill {
				row.Event = true
				events[1]++
			}
		}
		res.MovedTasks = append(res.MovedTasks, row)
	}
	res.Moved = len(rows)

	up, down := directions(b.in.Parent.Weights, b.in.Version.Weights)
	pastL2 := up && liftsPastL2(b.in.Parent.Weights, b.in.Version.Weights)
	m := 0
	for _, runs := range []bool{up, pastL2, down} {
		if runs {
			m++
		}
	}
	threshold := float64(max(m, 1)) / cfg.Alpha
	if up {
		res.Tests = append(res.Tests, b.notHelping(res.Before, trials[0], events[0], threshold))
	}
	if pastL2 {
		res.Tests = append(res.Tests, b.overkill(res.Before, trials[1], events[1], threshold))
	}
	if down {
		res.Tests = append(res.Tests, b.harm(RegressedTest, res.Before.Dropped, trials[2], events[2], threshold))
	}
	if res.Tests == nil {
		res.Tests = []Test{}
	}

	var failed *Test
	for i := range res.Tests {
		if t := &res.Tests[i]; t.Rejected && (failed == nil || failed.Name == NotHelpingTest) {
			failed = t
		}
	}
	switch {
	case failed != nil && failed.Name == NotHelpingTest:
		res.Verdict = NotHelping
		res.Reason = fmt.Sprintf("%d of the %d task(s) the change lifted off the low side still regressed: e-value %s ≥ %s against \"they regress at most %.0f%%\" (%s): they regress as they did while low, and at that rate the change does not pay",
			failed.K, failed.N, fmtE(failed.E), fmtE(failed.Threshold), 100*failed.Null, failed.Basis)
	case failed != nil:
		res.Verdict = Harmful
		res.Reason = fmt.Sprintf("%d of the %d %s %s: e-value %s ≥ %s against \"at most %.0f%%\" (%s)",
			failed.K, failed.N, failed.Sample, failed.Event, fmtE(failed.E), fmtE(failed.Threshold), 100*failed.Null, failed.Basis)
	case len(res.Tests) == 0:
		res.Verdict = Holding
		res.Reason = fmt.Sprintf("%s moves no task's level (no signal weight or bucket edge changed): nothing for the watch to judge", vName)
	case res.Moved < cfg.MinTasks:
		res.Verdict, res.NeedMore = TooEarly, cfg.MinTasks-res.Moved
		res.Reason = fmt.Sprintf("%d task(s) under %s dispatched auto at a level the change moved, %d needed: %d more", res.Moved, vName, cfg.MinTasks, res.NeedMore)
	default:
		res.Verdict = Holding
		res.Reason = fmt.Sprintf("no test reached its threshold over the %d task(s) %s moved: %s", res.Moved, vName, testsLine(res.Tests))
	}
	if failed != nil {
		res.Evidence = evidence(rows, failed.Name)
	}
	return res
}

// notHelping tests the lifted tasks' regressions against the rate at which the change stops paying:
// the rate the tasks like them had while low, less the excess from which lifting them pays for the
// levels the change raises (both from the tasks before the version), and never below the other
// low-side tasks' rate before (a change cannot be asked to do better than taking its tasks to the
// rest of the low side). The alternative is "they regress as they did while low"
// (docs/decisions.md#not-helping-break-even).
func (b *Builder) notHelping(bf Before, n, k int, threshold float64) Test {
	t := Test{Name: NotHelpingTest, Sample: "task(s) lifted off the low side (L0/L1 → L2+)", Event: "still regressed", N: n, K: k, Threshold: threshold, NeedMore: -1}
	low, other := laplace(bf.LiftedWhileLow.K, bf.LiftedWhileLow.N), laplace(bf.OtherLow.K, bf.OtherLow.N)
	t.Null, t.Alt = max(low-bf.BreakEven, other), low
	if t.Null > other {
		t.Basis = fmt.Sprintf("where the change stops paying: %s while low less its break-even excess %.2f (%d level(s) raised before)",
			fmtKN(bf.LiftedWhileLow), bf.BreakEven, bf.RaisedLevels)
	} else {
		t.Basis = fmt.Sprintf("other low-side %s before, above where the change stops paying (%s while low less its break-even excess %.2f, %d level(s) raised before)",
			fmtKN(bf.OtherLow), fmtKN(bf.LiftedWhileLow), bf.BreakEven, bf.RaisedLevels)
	}
	if low <= other {
		t.Null, t.Alt = 0, 0
		t.Basis = fmt.Sprintf("%s while low, other low-side %s before", fmtKN(bf.LiftedWhileLow), fmtKN(bf.OtherLow))
		t.Note = "the tasks it lifts did not regress more than other low-side tasks before: not helping cannot be told"
		return t
	}
	logE := pointLogE(k, n, t.Null, t.Alt)
	b.finish(&t, logE, func(m int) float64 { return pointLogE(k+m, n+m, t.Null, t.Alt) })
	t.Rejected = t.Rejected && k >= max(1, b.cfg.MinRecurrences)
	return t
}

// harm tests the moved-down tasks' regressions against the same tasks' rate before plus the margin.
func (b *Builder) harm(name string, bf accuracy.Rate, n, k int, threshold float64) Test {
	t := Test{Name: name, N: n, K: k, Threshold: threshold, NeedMore: -1, Sample: "task(s) moved down to L0/L1", Event: "regressed"}
	t.Basis = fmt.Sprintf("the same tasks' regressions %s at their level before, + %.0f points", fmtKN(bf), 100*b.cfg.OverkillBound)
	return b.exceeds(t, laplace(bf.K, bf.N))
}

// overkill tests the cost of an upward change beyond its price
// (docs/decisions.md#harmful-is-cost-beyond-the-price): the lifted tasks that landed at L3/L4 were
// overkill more often than the share of their raise the loss rule priced as unneeded, 1 − the excess
// it credited, plus the margin. The share
// is never taken below the L3/L4 tasks' overkill before: a task that belongs at L3 is overkill that
// often anyway. A task raised without being lifted is priced in full and is no trial.
func (b *Builder) overkill(bf Before, n, k int, threshold float64) Test {
	t := Test{Name: OverkillTest, N: n, K: k, Threshold: threshold, NeedMore: -1,
		Sample: "task(s) lifted off the low side to L3/L4", Event: "were overkill"}
	priced, high := 1-bf.Excess, laplace(bf.OverkillHigh.K, bf.OverkillHigh.N)
	t.Basis = fmt.Sprintf("priced as unneeded: 1 − excess %.2f (%s while low, other low-side %s), + %.0f points",
		bf.Excess, fmtKN(bf.LiftedWhileLow), fmtKN(bf.OtherLow), 100*b.cfg.OverkillBound)
	if high > priced {
		t.Basis = fmt.Sprintf("L3/L4 overkill %s before, above the share priced as unneeded (1 − excess %.2f), + %.0f points",
			fmtKN(bf.OverkillHigh), bf.Excess, 100*b.cfg.OverkillBound)
	}
	return b.exceeds(t, max(priced, high))
}

// exceeds finishes a harm test: its events against the rate allowed plus the margin (at most 0.95),
// averaged over every worse rate (there is no rate to take a single alternative from).
func (b *Builder) exceeds(t Test, allowed float64) Test {
	t.Null = math.Min(0.95, allowed+b.cfg.OverkillBound)
	k, n := t.K, t.N
	b.finish(&t, mixtureLogE(k, n, t.Null), func(m int) float64 { return mixtureLogE(k+m, n+m, t.Null) })
	return t
}

func (b *Builder) finish(t *Test, logE float64, next func(int) float64) {
	th := math.Log(t.Threshold)
	t.E = roundE(evolve.ShownEValue(logE)) // capped: a long run of evidence overflows exp, which JSON cannot carry
	t.Rejected = logE >= th
	t.NeedMore = moreEvents(logE, th, next)
}

// roundE keeps 4 significant digits, so that the JSON does not carry the float arithmetic's noise.
func roundE(e float64) float64 {
	if e == 0 || math.IsInf(e, 0) {
		return e
	}
	d := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(e))))
	return math.Round(e*d) / d
}

// directions says whether the change can move a task up (a signal weighs more, an edge is lower) and
// down (the reverse): what the tests are, fixed before any task is read.
func directions(p, v *weights.Weights) (up, down bool) {
	for i := range p.Signals {
		up = up || v.Signals[i] > p.Signals[i]
		down = down || v.Signals[i] < p.Signals[i]
	}
	for i := range p.Buckets.Edges {
		up = up || v.Buckets.Edges[i] < p.Buckets.Edges[i]
		down = down || v.Buckets.Edges[i] > p.Buckets.Edges[i]
	}
	return up, down
}

// liftsPastL2 says whether the change can lift a task from L0/L1 under p to L3/L4 under v: the top of
// p's L1 plus every signal's rise above v's L2. Fixed by the two versions, before any task is read, so
// that α is split only over tests that can ever see a trial.
func liftsPastL2(p, v *weights.Weights) bool {
	top := p.Buckets.Edges[weights.L1]
	for i := range p.Signals {
		top += max(0, v.Signals[i]-p.Signals[i])
	}
	return top > v.Buckets.Edges[weights.L2]
}

// evidence names the tasks that count against the version in the test that failed.
func evidence(rows []kept, test string) []TaskRef {
	out := []TaskRef{}
	for i := range rows {
		k := &rows[i]
		if test == OverkillTest && !(k.costTrial && k.overkill) || test != OverkillTest && (k.test != test || k.regressed == "") {
			continue
		}
		r := TaskRef{Log: k.row.Log, Line: k.row.Line, MetaTimestamp: k.row.MetaTimestamp, Task: k.row.Task, Level: k.row.Level}
		switch test {
		case NotHelpingTest:
			r.Note = fmt.Sprintf("lifted %s → %s, still regressed: %s", k.row.From, k.row.To, k.regressed)
		case OverkillTest:
			r.Note = fmt.Sprintf("moved %s → %s, overkill: k=%d, terminal %s", k.row.From, k.row.To, k.k, k.terminal)
		default:
			r.Note = fmt.Sprintf("moved %s → %s, regressed: %s", k.row.From, k.row.To, k.regressed)
		}
		out = append(out, r)
	}
	return out
}

func fmtKN(r accuracy.Rate) string { return fmt.Sprintf("%d/%d", r.K, r.N) }

// fmtE shows an e-value with 3 significant digits.
func fmtE(e float64) string { return fmt.Sprintf("%.3g", e) }

// testsLine sums the tests up in one line: "not helping 1/12, e 0.02 < 40; …".
func testsLine(tests []Test) string {
	parts := make([]string, 0, len(tests))
	for _, t := range tests {
		if t.Note != "" {
			parts = append(parts, t.Name+": cannot be told")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %d/%d, e-value %s < %s", t.Name, t.K, t.N, fmtE(t.E), fmtE(t.Threshold)))
	}
	return strings.Join(parts, "; ")
}

// attribute says under which version a task was dispatched: its weights= when it names one of the
// two, else its meta time (Add then corrects a moved auto task dispatched at the parent's level).
func attribute(t *traceparse.Task, vName, pName string, in Input) period {
	switch t.WeightsVersion {
	case vName:
		return after
	case pName:
		return before
	case "":
	default:
		return none
	}
	if t.MetaTime.IsZero() {
		return none
	}
	switch {
	case !t.MetaTime.Before(in.Version.From) && (in.Until.IsZero() || t.MetaTime.Before(in.Until)):
		return after
	case t.MetaTime.Before(in.Version.From) && !t.MetaTime.Before(in.Parent.From):
		return before
	}
	return none
}

// firedSignals are the task's recorded signals= (known names), else the signals the scorer detects in
// its title, as evolve resolves them.
func firedSignals(t *traceparse.Task) []weights.Signal {
	if !t.HasSignals {
		return scorer.Detect(t.Title, nil).Fired
	}
	var out []weights.Signal
	for _, s := range t.Signals {
		if sig, ok := weights.SignalByName(s.Name); ok {
			out = append(out, sig)
		}
	}
	return out
}

// Against says whether and how the task counts against the version: its evidence when it is an event
// of its test, "" when it is not.
func (m *MovedTask) Against() string {
	if !m.Event {
		return ""
	}
	return m.Evidence
}

// Tests names the tests it is a trial of: "not helping, harmful: overkill" for a lifted task that
// landed at L3/L4.
func (m *MovedTask) Tests() string {
	if m.OverkillTrial {
		return m.Test + ", " + OverkillTest
	}
	return m.Test
}

// EventsFirst orders the moved tasks for a table that may be cut: those that count against the
// version first, each group in the order read.
func EventsFirst(rows []MovedTask) []MovedTask {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b MovedTask) int {
		switch {
		case a.Event == b.Event:
			return 0
		case a.Event:
			return -1
		}
		return 1
	})
	return out
}

// NotCountedText says which moved tasks were left out, by dispatch: "3 override-down, 1 bump"; "" when
// none.
func NotCountedText(m map[string]int) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", m[k], k)
	}
	return strings.Join(parts, ", ")
}
