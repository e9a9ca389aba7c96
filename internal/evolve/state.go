package evolve

import (
	"fmt"
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
	// Offset and Line locate the meta line of the first task not counted for good: a read resumes there.
	Offset int64 `json:"offset"`
	Line   int   `json:"line"`
	// Labelled counts the labelled tasks before it.
	Labelled int `json:"labelled"`
	// Last is the latest meta time read, Origin the log's first unspent meta time (zero: none yet):
	// reading the held tasks again leaves both as they are. Through is the latest meta time of its
	// counted eligible tasks.
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

// StateFlagged is a counted flagged task as a LogState keeps it: Fired is not in Flagged's JSON, and
// its numbers are kept exact (Num's JSON rounds to six decimals).
type StateFlagged struct {
	Flagged
	Fired []weights.Signal `json:"fired"`
	Loss  float64          `json:"loss_exact"`
	// EvidenceLoss and EvidenceMedian are each evidence's LossFinal and Median.
	EvidenceLoss   []*float64 `json:"evidence_loss_exact"`
	EvidenceMedian []*float64 `json:"evidence_median_exact"`
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

// States are what the next detection of each log read may start from, in the order the logs were read
// (a log without a labelled task has none).
func (d *Detection) States() []*LogState { return d.states }

// state is what the detection keeps of ls: everything before the first task it still holds.
func (d *detector) state(ls *logStream) *LogState {
	first := ls.buf[0]
	det := d.det
	st := &LogState{Source: ls.source, Offset: first.t.Offset, Line: first.t.Line, Labelled: ls.base,
		Last: ls.last, Origin: ls.origin, Through: ls.through,
		BeforeWatermark: det.Accumulated.BeforeWatermark - ls.from.acc.BeforeWatermark,
		Eligible:        det.Accumulated.Eligible - ls.from.acc.Eligible,
		Flagged:         det.Accumulated.Flagged - ls.from.acc.Flagged,
		Tasks:           det.Accumulated.Tasks - ls.from.acc.Tasks,
		Cells:           []StateCell{}, Sigs: [][]weights.Signal{}, Counted: []StateFlagged{},
		Warnings: ls.warnings.upTo(first.warnAt)}
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
	for _, f := range det.Flagged[ls.from.flagged:] {
		sf := StateFlagged{Flagged: f, Fired: f.Fired, Loss: float64(f.LossFinal)}
		for _, e := range f.Evidence {
			sf.EvidenceLoss, sf.EvidenceMedian = append(sf.EvidenceLoss, exact(e.LossFinal)), append(sf.EvidenceMedian, exact(e.Median))
		}
		st.Counted = append(st.Counted, sf)
	}
	return st
}

// Check says whether st is a state a detection could have written: a state is read back from a file
// (a cache, hostile input like every file), and a malformed one must be refused, never half taken up.
func (st *LogState) Check() error {
	var tasks, eligible, flagged int
	for _, c := range st.Cells {
		if c[0] < 0 || c[0] >= len(st.Sigs) || c[1] < 0 || c[1] > 3 || c[1] == 1 || c[2] < -1 || c[3] <= 0 || c[3] > st.Labelled-tasks {
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
	case st.Offset <= 0 || st.Line <= 1 || st.Labelled <= 0:
		return fmt.Errorf("state of %s: resumes at offset %d, line %d after %d tasks", st.Source, st.Offset, st.Line, st.Labelled)
	case st.Tasks != tasks || st.Eligible != eligible || st.Flagged != flagged || st.Flagged != len(st.Counted):
		return fmt.Errorf("state of %s: counts %d/%d/%d do not match its cells' %d/%d/%d and %d flagged tasks", st.Source, st.Tasks, st.Eligible, st.Flagged, tasks, eligible, flagged, len(st.Counted))
	}
	if err := st.Warnings.check(st.Source); err != nil {
		return err
	}
	for _, f := range st.Counted {
		if len(f.EvidenceLoss) != len(f.Evidence) || len(f.EvidenceMedian) != len(f.Evidence) || len(f.Evidence) == 0 {
			return fmt.Errorf("state of %s: flagged task %s without its evidence", st.Source, f.MetaTimestamp)
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
	ls.n, ls.base, ls.done, ls.fixed = st.Labelled, st.Labelled, st.Labelled, st.Labelled
	ls.last, ls.origin, ls.through = st.Last, st.Origin, st.Through
	if st.Through.After(d.through) {
		d.through = st.Through
	}
	ls.warnings = TaskWarnings{Listed: slices.Clone(st.Warnings.Listed), Counts: st.Warnings.Counts}
	for _, c := range st.Cells {
		t, n := c.screenTask(st.Sigs, func(block int) int32 { return d.stratum([2]int{ls.index, block}) })
		det.screenTasks.add(t, n)
	}
	for _, f := range st.Counted {
		f.Flagged.Fired, f.LossFinal = f.Fired, Num(f.Loss)
		f.Evidence = slices.Clone(f.Evidence)
		for i := range f.Evidence {
			f.Evidence[i].LossFinal, f.Evidence[i].Median = num(f.EvidenceLoss[i]), num(f.EvidenceMedian[i])
		}
		det.Flagged = append(det.Flagged, f.Flagged)
	}
	acc := &det.Accumulated
	acc.BeforeWatermark += st.BeforeWatermark
	acc.Eligible += st.Eligible
	acc.Flagged += st.Flagged
	acc.Tasks += st.Tasks
}

// StateCell is a screen cell as a LogState keeps it: [index in Sigs, eligible·2 + flagged, 30-day block
// (-1: no meta time), tasks]. Every field of screenTask must be kept here (TestStateCellKeepsEveryField).
type StateCell [4]int

func stateCellOf(c screenCell, sigs, block int) StateCell {
	flags := 0
	if c.eligible {
		flags += 2
	}
	if c.flagged {
		flags++
	}
	return StateCell{sigs, flags, block, c.n}
}

// screenTask is the cell's screen task and count, its stratum numbered by stratum (from its block).
func (c StateCell) screenTask(sigs [][]weights.Signal, stratum func(block int) int32) (screenTask, int) {
	return newScreenTask(sigs[c[0]], stratum(c[2]), c[1]&2 != 0, c[1]&1 != 0), c[3]
}
