package watch

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/evolve"
)

// LogState is a Builder's part of one log, as a nightly state keeps it (docs/decisions.md#watch-state):
// the log's counts, the rows of its moved tasks and its open trials. Only the log's own tasks change
// it, so a Builder that takes it up (Restore) and is then given the log's tasks after those it was made
// from judges as one given the whole log — under the same Input, which the caller checks.
type LogState struct {
	Source string `json:"source"`
	// Before and After count the closed tasks with a level attributed to the parent and to the version.
	Before int `json:"before"`
	After  int `json:"after"`
	// BeforeN and BeforeK are the trials before the version and their settled regressions, by what they
	// are a trial of (lifted while low, other low-side, moved down).
	BeforeN [3]int `json:"before_n"`
	BeforeK [3]int `json:"before_k"`
	// RaisedLevels and LiftedLevels are the levels the version would raise on the auto tasks before it
	// (all of them, the lifted ones'); High and HighOverkill the auto L3/L4 tasks before and their overkill.
	RaisedLevels int `json:"raised_levels"`
	LiftedLevels int `json:"lifted_levels"`
	High         int `json:"high"`
	HighOverkill int `json:"high_overkill"`
	// NotCounted counts the moved tasks of other dispatches, by dispatch.
	NotCounted map[string]int `json:"not_counted"`
	// Labelled counts the log's labelled tasks; Kept are its moved auto tasks, Open its trials whose
	// horizon is not complete, in order.
	Labelled int `json:"labelled"`
	// Last is the latest meta time of its labelled tasks (a quiet week after it ends the open horizons).
	Last time.Time   `json:"last"`
	Kept []KeptState `json:"kept"`
	Open []OpenState `json:"open"`
}

// KeptState is a moved auto task under the version (a row of the table) as a LogState keeps it.
type KeptState struct {
	Line          int    `json:"line"`
	MetaTimestamp string `json:"ts"`
	Task          string `json:"task"`
	From          string `json:"from"`
	To            string `json:"to"`
	Level         string `json:"level"`
	Test          string `json:"test,omitempty"`
	Overkill      bool   `json:"overkill,omitempty"`
	CostTrial     bool   `json:"cost_trial,omitempty"`
	K             int    `json:"k"`
	Terminal      string `json:"terminal"`
	// Regressed says how it is known to have regressed once settled ("" while open, or none).
	Regressed string `json:"regressed,omitempty"`
}

// OpenState is an open trial as a LogState keeps it.
type OpenState struct {
	At            int       `json:"at"`
	MetaTimestamp string    `json:"ts"`
	MetaTime      time.Time `json:"time"`
	// Kept is its index among the log's kept rows, -1 for a task before the version, whose Cat says what
	// it is a trial of.
	Kept int   `json:"kept"`
	Cat  uint8 `json:"cat"`
	// Area is its code area while its single witness may still come (nil once it cannot).
	Area    *evolve.Area `json:"area,omitempty"`
	NamedBy string       `json:"named_by,omitempty"`
	Witness string       `json:"witness,omitempty"`
}

// State is the part of the log source as a LogState (empty when no task of it was added), sharing
// nothing the Builder changes.
func (b *Builder) State(source string) *LogState {
	st := &LogState{Source: source, NotCounted: map[string]int{}, Kept: []KeptState{}, Open: []OpenState{}}
	p := b.bySource[source]
	if p == nil {
		return st
	}
	st.Before, st.After = p.n[before], p.n[after]
	st.BeforeN, st.BeforeK = p.beforeN, p.beforeK
	st.RaisedLevels, st.LiftedLevels, st.High, st.HighOverkill = p.raisedLevels, p.liftedLevels, p.nHigh, p.overHigh
	maps.Copy(st.NotCounted, p.notCounted)
	st.Labelled, st.Last = p.labelled, p.last
	for _, k := range p.kept {
		st.Kept = append(st.Kept, KeptState{Line: k.row.Line, MetaTimestamp: k.row.MetaTimestamp, Task: k.row.Task, From: k.row.From,
			To: k.row.To, Level: k.row.Level, Test: k.test, Overkill: k.overkill, CostTrial: k.costTrial, K: k.k, Terminal: k.terminal,
			Regressed: k.regressed})
	}
	for _, o := range p.open {
		os := OpenState{At: o.at, MetaTimestamp: o.metaTimestamp, MetaTime: o.metaTime, Kept: o.kept, Cat: o.cat, NamedBy: o.namedBy, Witness: o.witness}
		if o.awaiting {
			a := o.area
			os.Area = &a
		}
		st.Open = append(st.Open, os)
	}
	return st
}

var levels = []string{"L0", "L1", "L2", "L3", "L4"}

// MaxStateCount bounds every count a LogState holds (docs/decisions.md#fourth-review-the-watch-state-and-explore).
const MaxStateCount = 1 << 40

// Check says whether st is a part a Builder could have made: the state is read back from a file (a
// cache, hostile input like every file), and one that fails is refused, never half taken up.
func (st *LogState) Check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("watch state of %s: %s", st.Source, fmt.Sprintf(format, args...))
	}
	if st.Source == "" {
		return errors.New("watch state of a log without a name")
	}
	// Every count is bounded first, so that the sums below cannot wrap around (a log of 2^40 labelled
	// tasks is far beyond any file a night reads).
	counts := []int{st.Before, st.After, st.Labelled, st.RaisedLevels, st.LiftedLevels, st.High, st.HighOverkill}
	counts = append(append(counts, st.BeforeN[:]...), st.BeforeK[:]...)
	for _, n := range st.NotCounted {
		counts = append(counts, n)
	}
	for _, n := range counts {
		if n < 0 || n > MaxStateCount {
			return bad("a count of %d", n)
		}
	}
	trials, counted := 0, 0
	for c := range st.BeforeN {
		if st.BeforeK[c] < 0 || st.BeforeK[c] > st.BeforeN[c] {
			return bad("%d of %d trials regressed", st.BeforeK[c], st.BeforeN[c])
		}
		trials += st.BeforeN[c]
	}
	for d, n := range st.NotCounted {
		if d == "" || n <= 0 {
			return bad("%d moved task(s) of dispatch %q", n, d)
		}
		counted += n
	}
	switch {
	case st.Before < 0 || st.After < 0 || st.Labelled < 0 || st.Before+st.After > st.Labelled:
		return bad("%d and %d tasks of %d labelled", st.Before, st.After, st.Labelled)
	case trials > st.Before || st.High > st.Before || st.HighOverkill < 0 || st.HighOverkill > st.High:
		return bad("%d trials, %d L3/L4 (%d overkill) of %d tasks before", trials, st.High, st.HighOverkill, st.Before)
	case st.LiftedLevels < 0 || st.LiftedLevels > st.RaisedLevels || st.RaisedLevels > 4*st.Before:
		return bad("%d lifted of %d raised levels", st.LiftedLevels, st.RaisedLevels)
	case counted > st.After || len(st.Kept) > st.After-counted:
		return bad("%d kept and %d not counted of %d tasks after", len(st.Kept), counted, st.After)
	}
	for _, k := range st.Kept {
		if k.Line < 1 || !slices.Contains(levels, k.From) || !slices.Contains(levels, k.To) || k.From == k.To || !slices.Contains(levels, k.Level) ||
			!slices.Contains([]string{"", NotHelpingTest, RegressedTest}, k.Test) || k.CostTrial && k.Test != NotHelpingTest || k.K < 0 ||
			k.Regressed != "" && !strings.HasPrefix(k.Regressed, "regression_") && !strings.HasPrefix(k.Regressed, "same-area: ") {
			return bad("kept task at line %d", k.Line)
		}
	}
	open := [3]int{}
	seen := map[int]bool{}
	for i, o := range st.Open {
		if o.At < st.Labelled-evolve.Horizon || o.At >= st.Labelled || i > 0 && o.At <= st.Open[i-1].At || o.MetaTime.After(st.Last) {
			return bad("open task at %d of %d labelled", o.At, st.Labelled)
		}
		switch {
		case o.Kept >= 0:
			if o.Kept >= len(st.Kept) || seen[o.Kept] || st.Kept[o.Kept].Regressed != "" {
				return bad("open task at %d names kept row %d", o.At, o.Kept)
			}
			seen[o.Kept] = true
		case o.Kept == -1 && int(o.Cat) < len(open):
			if open[o.Cat]++; open[o.Cat] > st.BeforeN[o.Cat]-st.BeforeK[o.Cat] {
				return bad("more open trials than unsettled ones")
			}
		default:
			return bad("open task at %d: kept %d, trial of %d", o.At, o.Kept, o.Cat)
		}
		if o.Area != nil {
			if err := o.Area.Check(); err != nil || st.Labelled-1-o.At > evolve.SameAreaDistance {
				return bad("open task at %d awaits a witness (%v)", o.At, err)
			}
		}
	}
	return nil
}

// Restore takes st up as its log's part. It must come before any task of that log is added; a state
// that fails Check is refused.
func (b *Builder) Restore(st *LogState) error {
	if err := st.Check(); err != nil {
		return err
	}
	p := b.part(st.Source)
	if p.labelled != 0 || p.n != [3]int{} || len(p.kept) != 0 {
		return fmt.Errorf("watch state of %s: the log's tasks are being read already", st.Source)
	}
	p.n[before], p.n[after] = st.Before, st.After
	p.beforeN, p.beforeK = st.BeforeN, st.BeforeK
	p.raisedLevels, p.liftedLevels, p.nHigh, p.overHigh = st.RaisedLevels, st.LiftedLevels, st.High, st.HighOverkill
	maps.Copy(p.notCounted, st.NotCounted)
	p.labelled, p.last = st.Labelled, st.Last
	for _, k := range st.Kept {
		p.kept = append(p.kept, kept{row: MovedTask{Log: p.source, Line: k.Line, MetaTimestamp: k.MetaTimestamp, Task: k.Task, From: k.From, To: k.To,
			Level: k.Level}, test: k.Test, overkill: k.Overkill, costTrial: k.CostTrial, k: k.K, terminal: k.Terminal, regressed: k.Regressed})
	}
	for _, o := range st.Open {
		ot := openTask{at: o.At, metaTimestamp: o.MetaTimestamp, metaTime: o.MetaTime, kept: o.Kept, cat: o.Cat, namedBy: o.NamedBy, witness: o.Witness}
		if o.Area != nil {
			ot.awaiting, ot.area = true, *o.Area
		}
		p.open = append(p.open, ot)
	}
	return nil
}
