package evolve

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ldd-tools/tune/internal/weights"
)

// LogState is what a detection keeps of the part of a log whose tasks it counted for good: the tasks
// before the first one it still held when the log ended (docs/decisions.md#nightly-state). A task's
// evidence comes only from the tasks after it, and a counted task's evidence is fixed, so a detection
// that takes this state up and reads the log from Offset on decides exactly as one that reads the whole
// log — under the same decision inputs (active weights, ledger, watermark, the logs read in order),
// which the caller checks before it passes a state back.
type LogState struct {
	Source string `json:"source"`
	// Offset and Line locate the meta line of the first task held: a read resumes there.
	Offset int64 `json:"offset"`
	Line   int   `json:"line"`
	// Labelled counts the labelled tasks before it; Context how many of the held tasks were counted for
	// good already (at most heldContext: they are read again only as the past of the tasks after them,
	// their placebo's and their horizon median's, docs/decisions.md#weak-witness).
	Labelled int `json:"labelled"`
	Context  int `json:"context"`
	// CountedTo is the offset of the first task not counted for good (Offset when Context is 0): the
	// bytes before it are what the state stands for, and a caller checks them before it passes it back.
	CountedTo int64 `json:"counted_to"`
	// Last is the latest meta time of the tasks before the held ones (reading the held tasks again
	// finds each one's quiet week before it, docs/decisions.md#settling), Origin the log's first unspent
	// meta time (zero: none yet; reading the held tasks again leaves it as it is). Through is the latest
	// meta time of its counted eligible tasks.
	Last    time.Time `json:"last"`
	Origin  time.Time `json:"origin"`
	Through time.Time `json:"through"`
	// BeforeWatermark, Eligible, Flagged and Tasks are the accumulated counts of its counted tasks.
	BeforeWatermark int `json:"before_watermark"`
	Eligible        int `json:"eligible"`
	Flagged         int `json:"flagged"`
	Tasks           int `json:"tasks"`
	// Cells are its counted tasks as counts per distinct screen task, in the order each first came
	// (StateCell): a year of tasks is a few hundred cells. Sigs are their signal lists.
	Sigs  [][]weights.Signal `json:"sigs"`
	Cells []StateCell        `json:"cells"`
	// Counted are its counted flagged tasks, Warnings the task warnings their reading gave.
	Counted  []StateFlagged `json:"counted"`
	Warnings TaskWarnings   `json:"warnings"`
}

// StateFlagged is a counted flagged task as a LogState keeps it: plain values under short names, its
// numbers exact (Num's JSON rounds to six decimals), and without what every counted flagged task of a
// state shares (its log, counted, not in the window). A year's state holds about a thousand of them,
// and decoding them is most of what taking a state up costs.
type StateFlagged struct {
	MetaTimestamp string  `json:"ts"`
	Title         string  `json:"title"`
	Level         string  `json:"level"`
	Line          int     `json:"line"`
	Loss          float64 `json:"loss"`
	Key           string  `json:"key"`
	ActiveLevel   string  `json:"active"`
	SignalsSource string  `json:"src"`
	// Names and Weights are its signals (weights.SignalWeight; weights in half points), Fired the
	// known ones.
	Names    []string         `json:"names"`
	Weights  []weights.Half   `json:"weights"`
	Fired    []weights.Signal `json:"fired"`
	Evidence []StateEvidence  `json:"ev"`
}

// StateEvidence is an Evidence as a StateFlagged keeps it: Evidence's own JSON is the output's (long
// names, numbers rounded), so the state has its own form of the same fields.
type StateEvidence struct {
	Kind           string   `json:"k"`
	By             string   `json:"by,omitempty"`
	ByLine         int      `json:"bl,omitempty"`
	Basis          string   `json:"basis,omitempty"`
	Overlap        []string `json:"overlap,omitempty"`
	LossFinal      *float64 `json:"loss,omitempty"`
	Median         *float64 `json:"median,omitempty"`
	Failure        string   `json:"failure,omitempty"`
	Distance       int      `json:"d,omitempty"`
	CorroboratedBy string   `json:"co,omitempty"`
}

func exact(n *Num) *float64 {
	if n == nil {
		return nil
	}
	f := float64(*n)
	return &f
}

func num(f *float64) *Num {
	if f == nil {
		return nil
	}
	n := Num(*f)
	return &n
}

// stateFlagged is f as a state keeps it.
func stateFlagged(f *Flagged) StateFlagged {
	sf := StateFlagged{MetaTimestamp: f.MetaTimestamp, Title: f.Title, Level: f.Level, Line: f.Line, Loss: float64(f.LossFinal),
		Key: f.Key, ActiveLevel: f.ActiveLevel, SignalsSource: f.SignalsSource, Fired: f.Fired, Evidence: make([]StateEvidence, len(f.Evidence))}
	for _, x := range f.Signals { // none: nil, as f's (its JSON says null)
		sf.Names, sf.Weights = append(sf.Names, x.Name), append(sf.Weights, x.Weight)
	}
	for i, e := range f.Evidence {
		sf.Evidence[i] = StateEvidence{Kind: e.Kind, By: e.By, ByLine: e.ByLine, Basis: e.Basis, Overlap: e.Overlap,
			LossFinal: exact(e.LossFinal), Median: exact(e.Median), Failure: e.Failure, Distance: e.Distance, CorroboratedBy: e.CorroboratedBy}
	}
	return sf
}

// flagged is the counted flagged task sf keeps, of the log source.
func (sf *StateFlagged) flagged(source string) Flagged {
	f := Flagged{MetaTimestamp: sf.MetaTimestamp, Title: sf.Title, Level: sf.Level, Source: source, Line: sf.Line, LossFinal: Num(sf.Loss),
		Key: sf.Key, ActiveLevel: sf.ActiveLevel, SignalsSource: sf.SignalsSource, Fired: sf.Fired, Counted: true,
		Evidence: make([]Evidence, len(sf.Evidence))}
	for i, name := range sf.Names {
		f.Signals = append(f.Signals, weights.SignalWeight{Name: name, Weight: sf.Weights[i]})
	}
	for i, e := range sf.Evidence {
		f.Evidence[i] = Evidence{Kind: e.Kind, By: e.By, ByLine: e.ByLine, Basis: e.Basis, Overlap: e.Overlap,
			LossFinal: num(e.LossFinal), Median: num(e.Median), Failure: e.Failure, Distance: e.Distance, CorroboratedBy: e.CorroboratedBy}
	}
	return f
}

// States are what the next detection of each log read may start from, in the order the logs were read
// (a log without a labelled task has none).
func (d *Detection) States() []*LogState { return d.states }

// state is what the detection keeps of ls: everything before the first task it still holds.
func (d *detector) state(ls *logStream) *LogState {
	first := ls.buf[0]
	det := d.det
	st := &LogState{Source: ls.source, Offset: first.t.Offset, Line: first.t.Line, Labelled: ls.base, Context: ls.fixed - ls.base, CountedTo: first.t.Offset,
		Last: ls.beforeHeld, Origin: ls.origin, Through: ls.through,
		BeforeWatermark: det.Accumulated.BeforeWatermark - ls.from.acc.BeforeWatermark,
		Eligible:        det.Accumulated.Eligible - ls.from.acc.Eligible,
		Flagged:         det.Accumulated.Flagged - ls.from.acc.Flagged,
		Tasks:           det.Accumulated.Tasks - ls.from.acc.Tasks,
		Cells:           []StateCell{}, Sigs: [][]weights.Signal{}, Counted: []StateFlagged{},
		Warnings: ls.warnings.upTo(first.warnAt)}
	if ls.fixed < ls.n {
		st.CountedTo = ls.at(ls.fixed).t.Offset
	}
	index := map[string]int{}
	for _, c := range det.screenTasks.cells[ls.from.screen:] {
		i, ok := index[c.sigs]
		if !ok {
			i = len(st.Sigs)
			index[c.sigs] = i
			st.Sigs = append(st.Sigs, c.signals())
		}
		st.Cells = append(st.Cells, stateCellOf(c, i, d.keys[c.stratum][1]))
	}
	for i := range det.Flagged[ls.from.flagged:] {
		st.Counted = append(st.Counted, stateFlagged(&det.Flagged[ls.from.flagged+i]))
	}
	return st
}

// maxBlock bounds a cell's block either side of its log's origin: time.Time.Sub saturates at about 292
// years, 3,558 blocks of 30 days.
const maxBlock = 3600

// Check says whether st is a state a detection could have written: a state is read back from a file
// (a cache, hostile input like every file), and a malformed one must be refused, never half taken up.
func (st *LogState) Check() error {
	var tasks, eligible, flagged int
	for _, c := range st.Cells {
		// flags: flagged needs eligible; weak and placebo need eligible and not flagged; ran high excludes
		// eligible, and regressed high needs ran high (detector.count).
		if c[0] < 0 || c[0] >= len(st.Sigs) || c[1] < 0 || c[1] > 127 || c[1]&3 == 1 || c[1]&12 != 0 && c[1]&3 != 2 ||
			c[1]&32 != 0 && c[1]&2 != 0 || c[1]&64 != 0 && c[1]&32 == 0 ||
			c[2] != NoBlock && (c[2] < -maxBlock || c[2] > maxBlock) || c[3] <= 0 || c[3] > st.Labelled+st.Context-tasks || c[4] < math.MinInt32 || c[4] > math.MaxInt32 {
			return fmt.Errorf("state of %s: cell %v", st.Source, c)
		}
		tasks += c[3]
		if c[1]&2 != 0 {
			eligible += c[3]
		}
		if c[1]&1 != 0 {
			flagged += c[3]
		}
	}
	switch {
	case st.Offset < 0 || st.Line < 1 || st.Labelled < 0 || st.Labelled+st.Context <= 0 || st.CountedTo <= 0:
		// Something counted; the held tasks may start with the log's first (Labelled 0) when the
		// counted ones are within heldContext of it.
		return fmt.Errorf("state of %s: resumes at offset %d, line %d after %d tasks (%d counted)", st.Source, st.Offset, st.Line, st.Labelled, st.Labelled+st.Context)
	case st.Context < 0 || st.Context > heldContext || st.CountedTo < st.Offset || (st.Context == 0) != (st.CountedTo == st.Offset):
		return fmt.Errorf("state of %s: %d held tasks counted already (at most %d), up to offset %d from %d", st.Source, st.Context, heldContext, st.CountedTo, st.Offset)
	case st.Tasks != tasks || st.Eligible != eligible || st.Flagged != flagged || st.Flagged != len(st.Counted):
		return fmt.Errorf("state of %s: counts %d/%d/%d do not match its cells' %d/%d/%d and %d flagged tasks", st.Source, st.Tasks, st.Eligible, st.Flagged, tasks, eligible, flagged, len(st.Counted))
	}
	if err := st.Warnings.check(st.Source); err != nil {
		return err
	}
	for _, f := range st.Counted {
		if len(f.Evidence) == 0 || len(f.Names) != len(f.Weights) {
			return fmt.Errorf("state of %s: flagged task %s without its evidence or with %d signal names for %d weights", st.Source, f.MetaTimestamp, len(f.Names), len(f.Weights))
		}
	}
	for _, sigs := range append(slices.Clone(st.Sigs), func() (all []weights.Signal) {
		for _, f := range st.Counted {
			all = append(all, f.Fired...)
		}
		return all
	}()) {
		for _, s := range sigs {
			if s < 0 || s >= weights.NumSignals {
				return fmt.Errorf("state of %s: signal %d", st.Source, s)
			}
		}
	}
	return nil
}

// restore takes up st as the current log's counted part: its screen tasks, flagged tasks, warnings and
// counts enter the detection as if its tasks had just been read.
func (d *detector) restore(st *LogState) {
	ls, det := d.cur, d.det
	ls.n, ls.base = st.Labelled, st.Labelled
	ls.done, ls.fixed = st.Labelled+st.Context, st.Labelled+st.Context
	ls.last, ls.beforeHeld, ls.origin, ls.through = st.Last, st.Last, st.Origin, st.Through
	if st.Through.After(d.through) {
		d.through = st.Through
	}
	ls.warnings = TaskWarnings{Listed: slices.Clone(st.Warnings.Listed), Counts: st.Warnings.Counts}
	for _, c := range st.Cells {
		t, n := c.screenTask(st.Sigs, func(block int) int32 { return d.stratumOfLog(ls, block) })
		det.screenTasks.add(t, n)
	}
	for i := range st.Counted {
		det.Flagged = append(det.Flagged, st.Counted[i].flagged(st.Source))
	}
	acc := &det.Accumulated
	acc.BeforeWatermark += st.BeforeWatermark
	acc.Eligible += st.Eligible
	acc.Flagged += st.Flagged
	acc.Tasks += st.Tasks
}

// StateCell is a screen cell as a LogState keeps it: [index in Sigs, regressedHigh·64 + ranHigh·32 +
// unclamped·16 + placebo·8 + weak·4 + eligible·2 + flagged, 30-day block (NoBlock: no meta time), tasks, day (screenTask.day)]. Every field of screenTask must
// be kept here (TestStateCellKeepsEveryField).
type StateCell [5]int

func stateCellOf(c screenCell, sigs, block int) StateCell {
	flags := 0
	if c.regressedHigh {
		flags += 64
	}
	if c.ranHigh {
		flags += 32
	}
	if c.unclamped {
		flags += 16
	}
	if c.placebo {
		flags += 8
	}
	if c.weak {
		flags += 4
	}
	if c.eligible {
		flags += 2
	}
	if c.flagged {
		flags++
	}
	return StateCell{sigs, flags, block, c.n, int(c.day)}
}

// screenTask is the cell's screen task and count, its stratum numbered by stratum (from its block).
func (c StateCell) screenTask(sigs [][]weights.Signal, stratum func(block int) int32) (screenTask, int) {
	t := newScreenTask(sigs[c[0]], stratum(c[2]), c[1]&2 != 0, c[1]&1 != 0)
	t.weak, t.placebo, t.unclamped, t.day = c[1]&4 != 0, c[1]&8 != 0, c[1]&16 != 0, int32(c[4])
	t.ranHigh, t.regressedHigh = c[1]&32 != 0, c[1]&64 != 0
	return t, c[3]
}
