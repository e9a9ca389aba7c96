// Package watch judges an applied weights version on the tasks that came after it: the honest test
// of a change that was a bet made on a handful of tasks. It compares the closed tasks dispatched under
// the version with those dispatched under its parent and returns one verdict (docs/decisions.md#watch):
//
//   - too early: fewer closed tasks under the version than Config.MinTasks; says how many more;
//   - harmful: low-side regressions among the tasks the change concerns rose (one-sided Fisher
//     p ≤ Alpha), or the overkill rate rose by more than Config.OverkillBound (and Fisher p ≤ Alpha);
//   - not helping: at least Config.MinRecurrences of the tasks the change lifted to a higher level
//     still regressed, at a rate no lower than the low-side regressions before;
//   - holding: none of that: no evidence against the version.
//
// A regression is what the trace records: regression_followed=true on the task's close, or a later
// task of the same log naming it with regression_of=<its meta timestamp>. A low-side regression is a
// regression of a task dispatched at L0 or L1. The tasks a change concerns are those carrying a
// changed signal (all tasks when only bucket edges or costs changed). A task is lifted when its
// signals score to a higher level under the version than under its parent.
//
// The package is pure: tasks, weights and times in, a Result out. A Builder takes the tasks one at a
// time (a streamed read) and keeps only counts and the few tasks a verdict can still depend on. Writing the rollback proposal is the
// application layer's job (internal/app).
package watch

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/accuracy"
	"github.com/ldd-tools/tune/internal/scorer"
	"github.com/ldd-tools/tune/internal/stats"
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

// Config holds the bounds of the verdicts (the [watch] table of tune.toml).
type Config struct {
	// MinTasks is how many closed tasks with a level the version needs before a verdict.
	MinTasks int `toml:"min_tasks" json:"min_tasks"`
	// OverkillBound is the rise of the overkill rate (after − before) that makes a version harmful.
	OverkillBound float64 `toml:"overkill_bound" json:"overkill_bound"`
	// MinRecurrences is how many lifted tasks must still regress for "not helping".
	MinRecurrences int `toml:"min_recurrences" json:"min_recurrences"`
	// Alpha is the level of the one-sided exact tests.
	Alpha float64 `toml:"alpha" json:"alpha"`
}

// DefaultConfig is used for every bound tune.toml leaves out.
var DefaultConfig = Config{MinTasks: 20, OverkillBound: 0.10, MinRecurrences: 2, Alpha: 0.05}

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
	switch {
	case c.MinTasks < 0:
		return fmt.Errorf("watch.min_tasks %d: want a positive number of tasks", c.MinTasks)
	case c.OverkillBound < 0 || c.OverkillBound > 1:
		return fmt.Errorf("watch.overkill_bound %g: want a rate rise between 0 and 1", c.OverkillBound)
	case c.MinRecurrences < 0:
		return fmt.Errorf("watch.min_recurrences %d: want a positive number of tasks", c.MinRecurrences)
	case c.Alpha < 0 || c.Alpha >= 1:
		return fmt.Errorf("watch.alpha %g: want a level between 0 and 1", c.Alpha)
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
	// Changes describe the change (e.g. "contract-rule-hit +1"); Changed are the signals it changed.
	Changes []string
	Changed []weights.Signal
	Config  Config
}

// TaskRef names a task behind a number.
type TaskRef struct {
	Log           string `json:"log"`
	Line          int    `json:"line"`
	MetaTimestamp string `json:"meta_timestamp"`
	Task          string `json:"task"`
	Level         string `json:"level"`
	// Note says what it shows (e.g. "lifted L1 → L2, regression_followed").
	Note string `json:"note"`
}

// Comparison is one rate before and after, with the one-sided exact test that it rose.
type Comparison struct {
	Before accuracy.Rate `json:"before"`
	After  accuracy.Rate `json:"after"`
	// P is the one-sided Fisher exact p that the rate is higher after than before.
	P float64 `json:"p"`
}

// LevelShare is one level's share of the tasks before and after.
type LevelShare struct {
	Level  string        `json:"level"`
	Before accuracy.Rate `json:"before"`
	After  accuracy.Rate `json:"after"`
}

// Result is the watch's finding on one version.
type Result struct {
	Version string   `json:"version"`
	Parent  string   `json:"parent"`
	Changes []string `json:"changes"`
	Verdict string   `json:"verdict"`
	Reason  string   `json:"reason"`
	// NeedMore is, for "too early", how many more closed tasks under the version are needed.
	NeedMore int `json:"need_more,omitempty"`
	// TasksBefore and TasksAfter are the closed tasks with a level under the parent and the version.
	TasksBefore int `json:"tasks_before"`
	TasksAfter  int `json:"tasks_after"`
	// Concerned are the tasks carrying a changed signal, before and after.
	ConcernedBefore int `json:"concerned_before"`
	ConcernedAfter  int `json:"concerned_after"`
	// Regressions: low-side regressions among the concerned tasks.
	Regressions Comparison `json:"low_side_regressions"`
	Overkill    Comparison `json:"overkill"`
	Underkill   Comparison `json:"underkill"`
	// Lifted: the concerned tasks after whose signals score higher under the version than under the
	// parent, and how many of them still regressed.
	Lifted          int          `json:"lifted"`
	LiftedRegressed int          `json:"lifted_regressed"`
	LevelMix        []LevelShare `json:"level_mix"`
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

// kept is what a Builder keeps of a task whose judgement a later task can still change (a
// regression_of= may name it): a concerned low-side task, a concerned lifted task after, an overkill
// task after (the evidence of a harmful verdict). Every other task is only counted.
type kept struct {
	ref       TaskRef // without the title before the version: only tasks after are evidence
	p         period
	lowSide   bool // dispatched at L0/L1 and concerned
	lifted    bool // after, concerned, scored higher under the version
	overkill  bool
	k         int
	terminal  string
	regressed string // "" or how: regression_followed / regression_of by …
	from, to  weights.Level
}

// Builder judges a version on tasks added one at a time, so that a caller streaming the logs holds
// only counts and the few tasks a verdict can still depend on (kept), never the logs' tasks
// (docs/decisions.md#watch-memory).
type Builder struct {
	in           Input
	cfg          Config
	vName, pName string
	n            [3]int // closed tasks with a level per period
	concerned    [3]int
	overkill     [3]int
	underkill    [3]int
	levels       [3][len(accuracy.Levels)]int
	lifted       int
	kept         []kept
	// regressedBy maps a task's key to the meta timestamp of the first task naming it with
	// regression_of= (of every task added, in order: a name may come before the task it names).
	regressedBy map[string]string
	strs        map[string]string // interned log names and levels
}

// NewBuilder starts a judgement of in.Version against in.Parent; in.Tasks is ignored (Add them).
func NewBuilder(in Input) *Builder {
	in.Tasks = nil
	b := &Builder{in: in, cfg: in.Config.WithDefaults(), regressedBy: map[string]string{}, strs: map[string]string{}}
	b.vName, b.pName = weights.VersionName(in.Version.Weights.Version), weights.VersionName(in.Parent.Weights.Version)
	return b
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

// Add counts one task (any task: open ones and those of other versions only matter through their
// regression_of=). It keeps no reference to t.
func (b *Builder) Add(t *traceparse.Task) {
	if t.RegressionOf != "" {
		k := t.Source + "\x00" + t.RegressionOf
		if _, ok := b.regressedBy[k]; !ok {
			b.regressedBy[strings.Clone(k)] = strings.Clone(t.MetaTimestamp)
		}
	}
	if !t.Closed || t.Level == "" {
		return
	}
	p := attribute(t, b.vName, b.pName, b.in)
	if p == none {
		return
	}
	o := accuracy.Classify(t)
	fired := firedSignals(t)
	concerned := len(b.in.Changed) == 0 || slices.ContainsFunc(fired, func(s weights.Signal) bool { return slices.Contains(b.in.Changed, s) })
	b.n[p]++
	if concerned {
		b.concerned[p]++
	}
	if o.Overkill {
		b.overkill[p]++
	}
	if o.Underkill {
		b.underkill[p]++
	}
	if i := slices.Index(accuracy.Levels[:], t.Level); i >= 0 {
		b.levels[p][i]++
	}
	from := b.in.Parent.Weights.Level(b.in.Parent.Weights.Score(fired))
	to := b.in.Version.Weights.Level(b.in.Version.Weights.Score(fired))
	lowSide := concerned && (t.Level == "L0" || t.Level == "L1")
	lifted := p == after && concerned && to > from
	if lifted {
		b.lifted++
	}
	overkill := p == after && o.Overkill
	if !lowSide && !lifted && !overkill {
		return
	}
	k := kept{
		ref: TaskRef{Log: b.intern(t.Source), Line: t.Line, MetaTimestamp: strings.Clone(t.MetaTimestamp), Level: b.intern(t.Level)},
		p:   p, lowSide: lowSide, lifted: lifted, overkill: overkill, k: o.K, terminal: b.intern(o.Terminal), from: from, to: to,
	}
	if p == after {
		k.ref.Task = strings.Clone(t.Title)
	}
	if t.RegressionFollowed {
		k.regressed = "regression_followed=true"
	}
	b.kept = append(b.kept, k)
}

// Result returns the verdict on the tasks added so far.
func (b *Builder) Result() *Result {
	cfg, vName := b.cfg, b.vName
	res := &Result{Version: vName, Parent: b.pName, Changes: slices.Clone(b.in.Changes), Config: cfg, Evidence: []TaskRef{}}
	if res.Changes == nil {
		res.Changes = []string{}
	}
	var lowReg [3]int
	var liftedRegressed []TaskRef
	var key []byte
	for i := range b.kept {
		k := &b.kept[i]
		key = append(append(append(key[:0], k.ref.Log...), 0), k.ref.MetaTimestamp...)
		if by := b.regressedBy[string(key)]; k.regressed == "" && by != "" {
			k.regressed = "regression_of by the task of " + by
		}
		if k.regressed == "" {
			continue
		}
		if k.lowSide {
			lowReg[k.p]++
		}
		if k.lifted {
			res.LiftedRegressed++
			liftedRegressed = append(liftedRegressed, k.note(fmt.Sprintf("lifted %s → %s, still regressed: %s", k.from, k.to, k.regressed)))
		}
	}
	res.TasksBefore, res.TasksAfter = b.n[before], b.n[after]
	res.ConcernedBefore, res.ConcernedAfter = b.concerned[before], b.concerned[after]
	res.Regressions = compare(lowReg[before], b.concerned[before], lowReg[after], b.concerned[after])
	res.Overkill = compare(b.overkill[before], b.n[before], b.overkill[after], b.n[after])
	res.Underkill = compare(b.underkill[before], b.n[before], b.underkill[after], b.n[after])
	for i, lvl := range accuracy.Levels {
		res.LevelMix = append(res.LevelMix, LevelShare{Level: lvl, Before: accuracy.NewRate(b.levels[before][i], b.n[before]), After: accuracy.NewRate(b.levels[after][i], b.n[after])})
	}
	res.Lifted = b.lifted
	n := b.n[after]

	switch {
	case n < cfg.MinTasks:
		res.Verdict, res.NeedMore = TooEarly, cfg.MinTasks-n
		res.Reason = fmt.Sprintf("%d closed task(s) under %s, %d needed: %d more", n, vName, cfg.MinTasks, res.NeedMore)
	case res.Regressions.After.K > 0 && res.Regressions.P <= cfg.Alpha:
		res.Verdict = Harmful
		res.Reason = fmt.Sprintf("low-side regressions among the tasks the change concerns rose from %s to %s (one-sided Fisher p %.3g ≤ %g)",
			fmtRate(res.Regressions.Before), fmtRate(res.Regressions.After), res.Regressions.P, cfg.Alpha)
		res.Evidence = b.refs(func(k *kept) bool { return k.lowSide && k.regressed != "" }, "low-side regression: ")
	case rise(res.Overkill) > cfg.OverkillBound && res.Overkill.P <= cfg.Alpha:
		res.Verdict = Harmful
		res.Reason = fmt.Sprintf("overkill rose from %s to %s, more than the bound %+.0f points (one-sided Fisher p %.3g ≤ %g)",
			fmtRate(res.Overkill.Before), fmtRate(res.Overkill.After), 100*cfg.OverkillBound, res.Overkill.P, cfg.Alpha)
		res.Evidence = b.refs(func(k *kept) bool { return k.overkill }, "overkill: ")
	case res.LiftedRegressed >= max(1, cfg.MinRecurrences) &&
		float64(res.LiftedRegressed)/float64(res.Lifted) >= rateOf(res.Regressions.Before):
		res.Verdict = NotHelping
		res.Reason = fmt.Sprintf("%d of the %d task(s) the change lifted still regressed (%.0f%%, low-side regressions before: %s): the flagged pattern recurs",
			res.LiftedRegressed, res.Lifted, 100*float64(res.LiftedRegressed)/float64(res.Lifted), fmtRate(res.Regressions.Before))
		res.Evidence = liftedRegressed
	default:
		res.Verdict = Holding
		res.Reason = fmt.Sprintf("no evidence against %s over %d closed task(s): low-side regressions %s → %s, overkill %s → %s, %d of %d lifted task(s) regressed",
			vName, n, fmtRate(res.Regressions.Before), fmtRate(res.Regressions.After),
			fmtRate(res.Overkill.Before), fmtRate(res.Overkill.After), res.LiftedRegressed, res.Lifted)
	}
	return res
}

func rise(c Comparison) float64 { return rateOf(c.After) - rateOf(c.Before) }

func rateOf(r accuracy.Rate) float64 {
	if r.N == 0 {
		return 0
	}
	return float64(r.K) / float64(r.N)
}

func fmtRate(r accuracy.Rate) string {
	if r.N == 0 {
		return "0/0"
	}
	return fmt.Sprintf("%d/%d (%.0f%%)", r.K, r.N, 100*rateOf(r))
}

// compare is the rate kb/nb before and ka/na after, with the one-sided exact test that it is higher
// after.
func compare(kb, nb, ka, na int) Comparison {
	c := Comparison{Before: accuracy.NewRate(kb, nb), After: accuracy.NewRate(ka, na), P: 1}
	if na > 0 && nb > 0 {
		c.P = accuracy.PyRound(stats.FisherGreater(ka, na-ka, kb, nb-kb), 4)
	}
	return c
}

func (k *kept) note(note string) TaskRef {
	r := k.ref
	r.Note = note
	return r
}

// refs names the kept tasks after that pass pick, in the order they were added.
func (b *Builder) refs(pick func(*kept) bool, prefix string) []TaskRef {
	out := []TaskRef{}
	for i := range b.kept {
		if k := &b.kept[i]; k.p == after && pick(k) {
			note := k.regressed
			if note == "" {
				note = fmt.Sprintf("k=%d, terminal %s", k.k, k.terminal)
			}
			out = append(out, k.note(prefix+note))
		}
	}
	return out
}

// attribute says under which version a task was dispatched: its weights= when it names one of the
// two, else its meta time.
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
