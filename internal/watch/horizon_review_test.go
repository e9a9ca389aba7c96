package watch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/traceparse"
)

// The fourth review's measure of the horizon the watch now reads regression_of= within
// (docs/decisions.md#fourth-review-the-watch-state-and-explore), with a generator of its own: a parent
// and a version that lifts one kind of task from L1 to L2; tasks before and after, an hour apart; a
// regressed task is named by the regression_of= of the task d labelled tasks after it, d drawn
// uniformly from [dMin, dMax] (a share of them say regression_followed=true at once instead). The
// truth is planted: in the "no help" world the lifted tasks regress at L2 as they did at L1, so the
// change should be rolled back; in the "helps" world they regress at L2 as the other low-side tasks,
// so it should not. The same file measures main before the horizon (38557c1) through -overlay.

type horizonWorld struct {
	name            string
	before, after   int     // tasks before and after the version
	liftedShare     float64 // of the tasks, the kind the version lifts
	pLifted, pOther float64 // regression rates at L1: lifted kind, other kind
	pLiftedAfter    float64 // the lifted kind's rate at L2 (the truth)
	immediate       float64 // share of regressions told at once (regression_followed=true)
	dMin, dMax      int     // the delay of a regression_of=, in labelled tasks
	wantRollback    bool
}

// horizonLog writes one history and parses it.
func horizonLog(t testing.TB, r *rand.Rand, w horizonWorld, parentFrom, applied time.Time) []traceparse.Task {
	const lifted = "contract-rule-hit:+2,explicit-bugfix:-5,unknown-file-territory:+1" // −2 (L1) under v0001, −1 (L2) once contract-rule-hit weighs 3
	const other = "explicit-bugfix:-5"
	type task struct {
		at        time.Time
		level     string
		signals   string
		followed  bool
		namesStep int // regression_of= the task this many before, 0 when none
	}
	n := w.before + w.after
	tasks := make([]task, n)
	for i := range tasks {
		at := parentFrom.Add(time.Duration(i) * time.Hour)
		if i >= w.before {
			at = applied.Add(time.Duration(i-w.before) * time.Hour)
		}
		tasks[i].at, tasks[i].level, tasks[i].signals = at, "L1", other // namesStep may be set already
		p := w.pOther
		if r.Float64() < w.liftedShare {
			tasks[i].signals, p = lifted, w.pLifted
			if i >= w.before {
				tasks[i].level, p = "L2", w.pLiftedAfter
			}
		}
		if r.Float64() >= p {
			continue
		}
		if r.Float64() < w.immediate {
			tasks[i].followed = true
			continue
		}
		// Named by the first task at or after the drawn delay that names nothing yet (lost past the end).
		for j := i + w.dMin + r.IntN(w.dMax-w.dMin+1); j < n; j++ {
			if tasks[j].namesStep == 0 {
				tasks[j].namesStep = j - i
				break
			}
		}
	}
	var b strings.Builder
	names := map[string]string{"L1": "diagnostic", "L2": "deliberate"}
	stamp := func(at time.Time) string { return at.UTC().Format("2006-01-02T15:04:05.000000Z") }
	for i, tk := range tasks {
		fmt.Fprintf(&b, "%s  meta  %s/%s  dispatch=auto  signals=%s  task=\"task %d\"  loops=inner\n", stamp(tk.at), tk.level, names[tk.level], tk.signals, i)
		fmt.Fprintf(&b, "%s  inner  k=1  skill=s  action=a  loss=0.300\n", stamp(tk.at.Add(time.Minute)))
		line := fmt.Sprintf("%s  inner  close  terminal=complete  loss_final=0.100", stamp(tk.at.Add(2*time.Minute)))
		if tk.followed {
			line += "  regression_followed=true"
		}
		if tk.namesStep > 0 {
			line += "  regression_of=" + stamp(tasks[i-tk.namesStep].at)
		}
		b.WriteString(line + "\n")
	}
	res, err := traceparse.Parse(strings.NewReader(b.String()), "h.log")
	if err != nil {
		t.Fatal(err)
	}
	return res.Tasks
}

// wilson95 is Wilson's 95 % interval (written out here, so the measure leans on nothing it measures).
func wilson95(k, n int) (lo, hi float64) {
	const z = 1.959963984540054
	p, nf := float64(k)/float64(n), float64(n)
	d := 1 + z*z/nf
	c := p + z*z/(2*nf)
	h := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	return (c - h) / d, (c + h) / d
}

// TestHorizonCost (TUNE_REVIEW_RUNS=500 for the numbers in decisions.md) measures how often the watch's verdict (a rollback proposed or not) contradicts the
// planted truth, for regressions told 5–40 tasks later. Bounds: a change that helps is rolled back in
// at most 5 % of histories (Wilson upper bound), and a change that does not help, with its
// regressions told within the horizon, is caught in most of them.
func TestHorizonCost(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	runs := 200
	if s := os.Getenv("TUNE_REVIEW_RUNS"); s != "" {
		fmt.Sscan(s, &runs)
	}
	p, v := versions(t) // v0001 and v0002 = contract-rule-hit +1
	parentFrom := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	applied := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	base := horizonWorld{before: 200, after: 120, liftedShare: 0.3, pLifted: 0.5, pOther: 0.08, immediate: 0}
	worlds := []horizonWorld{}
	for _, d := range []struct {
		name      string
		lo, hi    int
		immediate float64
	}{{"told 5–40 later", 5, 40, 0}, {"half at once, half 5–40 later", 5, 40, 0.5}, {"told 5–20 later", 5, 20, 0}, {"told 21–40 later", 21, 40, 0}} {
		for _, helps := range []bool{false, true} {
			w := base
			w.dMin, w.dMax, w.immediate = d.lo, d.hi, d.immediate
			w.pLiftedAfter, w.wantRollback, w.name = w.pLifted, true, d.name+", no help"
			if helps {
				w.pLiftedAfter, w.wantRollback, w.name = w.pOther, false, d.name+", helps"
			}
			worlds = append(worlds, w)
		}
	}
	for wi, w := range worlds {
		wrong := 0
		for run := range runs {
			r := rand.New(rand.NewPCG(uint64(run), uint64(wi)))
			res := Judge(Input{Tasks: horizonLog(t, r, w, parentFrom, applied), Version: Version{v, applied}, Parent: Version{p, parentFrom},
				Changes: []string{"contract-rule-hit +1"}})
			if res.Proposes() != w.wantRollback {
				wrong++
			}
		}
		lo, hi := wilson95(wrong, runs)
		t.Logf("%-40s verdict against the truth in %4d/%d = %5.1f %% [%5.1f, %5.1f]", w.name, wrong, runs, 100*float64(wrong)/float64(runs), 100*lo, 100*hi)
		switch {
		case !w.wantRollback && hi > 0.05:
			t.Errorf("%s: a change that helps rolled back in %d/%d histories", w.name, wrong, runs)
		case w.wantRollback && w.dMax <= 20 && lo > 0.4:
			t.Errorf("%s: a change that does not help, its regressions told within the horizon, missed in %d/%d histories", w.name, wrong, runs)
		}
	}
}
