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
// The package is pure: tasks, weights and times in, a Result out. Writing the rollback proposal is the
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
	MinTasks int `toml:"min_tasks"`
	// OverkillBound is the rise of the overkill rate (after − before) that makes a version harmful.
	OverkillBound float64 `toml:"overkill_bound"`
	// MinRecurrences is how many lifted tasks must still regress for "not helping".
	MinRecurrences int `toml:"min_recurrences"`
	// Alpha is the level of the one-sided exact tests.
	Alpha float64 `toml:"alpha"`
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

type judged struct {
	t         *traceparse.Task
	outcome   accuracy.Outcome
	concerned bool
	regressed string // "" or how: regression_followed / regression_of by …
	from, to  weights.Level
}

// Judge compares the tasks under in.Version with those under in.Parent and returns the verdict.
func Judge(in Input) *Result {
	cfg := in.Config.WithDefaults()
	vName, pName := weights.VersionName(in.Version.Weights.Version), weights.VersionName(in.Parent.Weights.Version)
	res := &Result{Version: vName, Parent: pName, Changes: slices.Clone(in.Changes), Config: cfg, Evidence: []TaskRef{}}
	if res.Changes == nil {
		res.Changes = []string{}
	}
	regressedBy := regressionOf(in.Tasks)
	var groups [3][]judged
	for i := range in.Tasks {
		t := &in.Tasks[i]
		if !t.Closed || t.Level == "" {
			continue
		}
		p := attribute(t, vName, pName, in)
		if p == none {
			continue
		}
		j := judged{t: t, outcome: accuracy.Classify(t)}
		fired := firedSignals(t)
		j.concerned = len(in.Changed) == 0 || slices.ContainsFunc(fired, func(s weights.Signal) bool { return slices.Contains(in.Changed, s) })
		switch {
		case t.RegressionFollowed:
			j.regressed = "regression_followed=true"
		case regressedBy[key(t)] != "":
			j.regressed = "regression_of by the task of " + regressedBy[key(t)]
		}
		j.from = in.Parent.Weights.Level(in.Parent.Weights.Score(fired))
		j.to = in.Version.Weights.Level(in.Version.Weights.Score(fired))
		groups[p] = append(groups[p], j)
	}
	b, a := groups[before], groups[after]
	res.TasksBefore, res.TasksAfter = len(b), len(a)
	lowSide := func(j judged) bool { return j.regressed != "" && (j.t.Level == "L0" || j.t.Level == "L1") }
	res.Regressions, res.ConcernedBefore, res.ConcernedAfter = compare(b, a, func(j judged) bool { return j.concerned }, lowSide)
	res.Overkill, _, _ = compare(b, a, nil, func(j judged) bool { return j.outcome.Overkill })
	res.Underkill, _, _ = compare(b, a, nil, func(j judged) bool { return j.outcome.Underkill })
	for _, lvl := range accuracy.Levels {
		in := func(j judged) bool { return j.t.Level == lvl }
		c, _, _ := compare(b, a, nil, in)
		res.LevelMix = append(res.LevelMix, LevelShare{Level: lvl, Before: c.Before, After: c.After})
	}
	var liftedRegressed []TaskRef
	for _, j := range a {
		if j.concerned && j.to > j.from {
			res.Lifted++
			if j.regressed != "" {
				res.LiftedRegressed++
				liftedRegressed = append(liftedRegressed, ref(j, fmt.Sprintf("lifted %s → %s, still regressed: %s", j.from, j.to, j.regressed)))
			}
		}
	}

	switch {
	case len(a) < cfg.MinTasks:
		res.Verdict, res.NeedMore = TooEarly, cfg.MinTasks-len(a)
		res.Reason = fmt.Sprintf("%d closed task(s) under %s, %d needed: %d more", len(a), vName, cfg.MinTasks, res.NeedMore)
	case res.Regressions.After.K > 0 && res.Regressions.P <= cfg.Alpha:
		res.Verdict = Harmful
		res.Reason = fmt.Sprintf("low-side regressions among the tasks the change concerns rose from %s to %s (one-sided Fisher p %.3g ≤ %g)",
			fmtRate(res.Regressions.Before), fmtRate(res.Regressions.After), res.Regressions.P, cfg.Alpha)
		res.Evidence = refs(a, func(j judged) bool { return j.concerned && lowSide(j) }, "low-side regression: ")
	case rise(res.Overkill) > cfg.OverkillBound && res.Overkill.P <= cfg.Alpha:
		res.Verdict = Harmful
		res.Reason = fmt.Sprintf("overkill rose from %s to %s, more than the bound %+.0f points (one-sided Fisher p %.3g ≤ %g)",
			fmtRate(res.Overkill.Before), fmtRate(res.Overkill.After), 100*cfg.OverkillBound, res.Overkill.P, cfg.Alpha)
		res.Evidence = refs(a, func(j judged) bool { return j.outcome.Overkill }, "overkill: ")
	case res.LiftedRegressed >= max(1, cfg.MinRecurrences) &&
		float64(res.LiftedRegressed)/float64(res.Lifted) >= rateOf(res.Regressions.Before):
		res.Verdict = NotHelping
		res.Reason = fmt.Sprintf("%d of the %d task(s) the change lifted still regressed (%.0f%%, low-side regressions before: %s): the flagged pattern recurs",
			res.LiftedRegressed, res.Lifted, 100*float64(res.LiftedRegressed)/float64(res.Lifted), fmtRate(res.Regressions.Before))
		res.Evidence = liftedRegressed
	default:
		res.Verdict = Holding
		res.Reason = fmt.Sprintf("no evidence against %s over %d closed task(s): low-side regressions %s → %s, overkill %s → %s, %d of %d lifted task(s) regressed",
			vName, len(a), fmtRate(res.Regressions.Before), fmtRate(res.Regressions.After),
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

// compare counts event among the tasks of each period that pass in (all when in is nil), with the
// one-sided exact test that the event is more frequent after.
func compare(b, a []judged, in, event func(judged) bool) (Comparison, int, int) {
	count := func(js []judged) (k, n int) {
		for _, j := range js {
			if in == nil || in(j) {
				n++
				if event(j) {
					k++
				}
			}
		}
		return k, n
	}
	kb, nb := count(b)
	ka, na := count(a)
	c := Comparison{Before: accuracy.NewRate(kb, nb), After: accuracy.NewRate(ka, na), P: 1}
	if na > 0 && nb > 0 {
		c.P = accuracy.PyRound(stats.FisherGreater(ka, na-ka, kb, nb-kb), 4)
	}
	return c, nb, na
}

func ref(j judged, note string) TaskRef {
	return TaskRef{Log: j.t.Source, Line: j.t.Line, MetaTimestamp: j.t.MetaTimestamp, Task: j.t.Title, Level: j.t.Level, Note: note}
}

func refs(js []judged, pick func(judged) bool, prefix string) []TaskRef {
	out := []TaskRef{}
	for _, j := range js {
		if pick(j) {
			note := j.regressed
			if note == "" {
				note = fmt.Sprintf("k=%d, terminal %s", j.outcome.K, j.outcome.Terminal)
			}
			out = append(out, ref(j, prefix+note))
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

func key(t *traceparse.Task) string { return t.Source + "\x00" + t.MetaTimestamp }

// regressionOf maps each task (by log and meta timestamp) to the meta timestamp of the first later
// task that names it with regression_of=.
func regressionOf(tasks []traceparse.Task) map[string]string {
	out := map[string]string{}
	for i := range tasks {
		t := &tasks[i]
		if t.RegressionOf == "" {
			continue
		}
		k := t.Source + "\x00" + t.RegressionOf
		if _, ok := out[k]; !ok {
			out[k] = t.MetaTimestamp
		}
	}
	return out
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

// Keep returns the part of a task Judge needs, with its strings copied out of the reader's buffers,
// and whether Judge needs the task at all (a closed task with a level, or one naming another with
// regression_of=), so that a caller streaming the logs keeps little per task.
func Keep(t *traceparse.Task) (traceparse.Task, bool) {
	if !(t.Closed && t.Level != "") && t.RegressionOf == "" {
		return traceparse.Task{}, false
	}
	c := traceparse.Task{
		Source: strings.Clone(t.Source), Line: t.Line, MetaTimestamp: strings.Clone(t.MetaTimestamp), MetaTime: t.MetaTime,
		Level: strings.Clone(t.Level), Dispatch: strings.Clone(t.Dispatch), Title: strings.Clone(t.Title),
		WeightsVersion: strings.Clone(t.WeightsVersion), Closed: t.Closed, Terminal: strings.Clone(t.Terminal),
		RegressionFollowed: t.RegressionFollowed, RegressionOf: strings.Clone(t.RegressionOf), HasSignals: t.HasSignals,
	}
	if t.LossFinal != nil {
		v := *t.LossFinal
		c.LossFinal = &v
	}
	for _, s := range t.Signals {
		c.Signals = append(c.Signals, weights.SignalWeight{Name: strings.Clone(s.Name), Weight: s.Weight})
	}
	// Classify counts the non-baseline iterations; nothing else of the entries is read.
	for i := range t.Entries {
		if e := &t.Entries[i]; e.Kind == traceparse.KindIter && !e.Baseline {
			c.Entries = append(c.Entries, traceparse.Entry{Kind: traceparse.KindIter})
		}
	}
	return c, true
}
