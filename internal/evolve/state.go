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
	// Screen is the screen tasks in order, each (index in Sigs)·8 + weak·4 + eligible·2 + flagged; Blocks
	// their 30-day blocks as runs [block, tasks] (-1: no meta time), Days their days (screenTask.day) as
	// runs [day, tasks].
	Sigs   [][]weights.Signal `json:"sigs"`
	Screen []int              `json:"screen"`
	Blocks [][2]int           `json:"blocks"`
	Days   [][2]int           `json:"days"`
	// Counted are its counted flagged tasks, Warnings the warnings their reading gave.
	Counted  []StateFlagged `json:"counted"`
	Warnings []Warning      `json:"warnings"`
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
		Screen:          []int{}, Blocks: [][2]int{}, Days: [][2]int{}, Sigs: [][]weights.Signal{}, Counted: []StateFlagged{},
		Warnings: slices.Clone(det.Warnings[ls.from.warnings:first.warnAt])}
	index := map[sigKey]int{}
	for _, t := range det.screenTasks[ls.from.screen:] {
		var k sigKey
		k.n = copy(k.sigs[:], t.sigs)
		i, ok := index[k]
		if len(t.sigs) > len(k.sigs) { // not shared either (detector.shared): kept apart
			ok = false
		}
		if !ok {
			i = len(st.Sigs)
			index[k] = i
			st.Sigs = append(st.Sigs, t.sigs)
		}
		v := i * 8
		if t.weak {
			v += 4
		}
		if t.eligible {
			v += 2
		}
		if t.flagged {
			v++
		}
		st.Screen = append(st.Screen, v)
		st.Blocks = appendRun(st.Blocks, d.keys[t.stratum][1])
		st.Days = appendRun(st.Days, int(t.day))
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

// appendRun counts one more task of value v in runs of [value, tasks].
func appendRun(runs [][2]int, v int) [][2]int {
	if n := len(runs); n > 0 && runs[n-1][0] == v {
		runs[n-1][1]++
		return runs
	}
	return append(runs, [2]int{v, 1})
}

// takeRun is the value of the next task of runs and the runs left after it.
func takeRun(runs [][2]int) (int, [][2]int) {
	for runs[0][1] == 0 {
		runs = runs[1:]
	}
	runs[0][1]--
	return runs[0][0], runs
}

// Check says whether st is a state a detection could have written: a state is read back from a file
// (a cache, hostile input like every file), and a malformed one must be refused, never half taken up.
func (st *LogState) Check() error {
	runs, days := 0, 0
	for _, b := range st.Blocks {
		if b[1] <= 0 || b[0] < -1 {
			return fmt.Errorf("state of %s: a run of %d tasks in block %d", st.Source, b[1], b[0])
		}
		runs += b[1]
	}
	for _, b := range st.Days {
		if b[1] <= 0 || b[0] < math.MinInt32 || b[0] > math.MaxInt32 {
			return fmt.Errorf("state of %s: a run of %d tasks on day %d", st.Source, b[1], b[0])
		}
		days += b[1]
	}
	switch {
	case st.Offset <= 0 || st.Line <= 1 || st.Labelled <= 0:
		return fmt.Errorf("state of %s: resumes at offset %d, line %d after %d tasks", st.Source, st.Offset, st.Line, st.Labelled)
	case runs != len(st.Screen) || days != len(st.Screen):
		return fmt.Errorf("state of %s: %d screen tasks in blocks of %d and days of %d", st.Source, len(st.Screen), runs, days)
	case st.Eligible > len(st.Screen) || st.Tasks != len(st.Screen) || st.Flagged != len(st.Counted) || st.Flagged > st.Eligible:
		return fmt.Errorf("state of %s: counts %d/%d/%d do not match %d screen and %d flagged tasks", st.Source, st.Tasks, st.Eligible, st.Flagged, len(st.Screen), len(st.Counted))
	}
	for _, f := range st.Counted {
		if len(f.EvidenceLoss) != len(f.Evidence) || len(f.EvidenceMedian) != len(f.Evidence) || len(f.Evidence) == 0 {
			return fmt.Errorf("state of %s: flagged task %s without its evidence", st.Source, f.MetaTimestamp)
		}
	}
	for _, v := range st.Screen {
		if v < 0 || v/8 >= len(st.Sigs) {
			return fmt.Errorf("state of %s: screen task %d names no signal list", st.Source, v)
		}
		if v&4 != 0 && v&3 != 2 { // weak: eligible and not flagged (detector.count)
			return fmt.Errorf("state of %s: screen task %d is a weak witness's but not eligible and unflagged", st.Source, v)
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
	det.Warnings = append(det.Warnings, st.Warnings...)
	det.screenTasks = slices.Grow(det.screenTasks, len(st.Screen))
	blocks, days := slices.Clone(st.Blocks), slices.Clone(st.Days)
	for _, v := range st.Screen {
		var block, day int
		block, blocks = takeRun(blocks)
		day, days = takeRun(days)
		t := screenTask{sigs: d.shared(st.Sigs[v/8]), weak: v&4 != 0, eligible: v&2 != 0, flagged: v&1 != 0,
			stratum: d.stratum([2]int{ls.index, block}), day: int32(day)}
		for _, s := range t.sigs {
			t.fired[s] = true
		}
		det.screenTasks = append(det.screenTasks, t)
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
