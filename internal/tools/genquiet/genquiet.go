// Package genquiet writes trace logs with a team's irregular calendar — working days, weekends,
// holidays of one to three weeks, bursts, a few meta times out of order — and the nights a cron runs on
// them, for the sixth review's tests (docs/decisions.md#sixth-review-the-quiet-week): what a night
// counted must stay counted, a night from the nightly state must decide as a full read, and the watch
// must read the detection's evidence. It is its own generator, not genlive's.
package genquiet

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/weights"
)

// Task is one task of a log: its meta time, when its last line was written, and its lines.
type Task struct {
	Meta time.Time
	// Written is when its close line was appended (the meta and first iteration lines are on disk from
	// Meta on); Written is nondecreasing in file order.
	Written time.Time
	Head    string // meta and iteration lines
	Close   string // the close line ("" when the task never closes)
	// Late marks a task appended days after its meta time (a log synced late): the documented limit.
	Late bool
}

// Log is one trace log.
type Log struct{ Tasks []Task }

// History is the logs of one project and the nights the nightly runs at.
type History struct {
	Logs   []Log
	Nights []time.Time
	Start  time.Time
	End    time.Time
}

// Options shape a history.
type Options struct {
	Days int
	Logs int
	// LateP is the chance a task is appended days after its meta time (0: never, the ordinary case).
	LateP float64
}

// Lifted scores L1 under v0001 and L2 once contract-rule-hit weighs one more (the watch's version).
var Lifted = []weights.Signal{weights.ContractRuleHit, weights.ExplicitBugfix, weights.UnknownFileTerritory}

var areas = [][]string{
	{"internal/store/store.go", "internal/store/lock.go"},
	{"internal/app/nightly.go", "internal/app/apply.go", "internal/app/env.go"},
	{"internal/evolve/history.go", "internal/evolve/state.go"},
	{"internal/watch/watch.go"},
	{"cmd/tune/main.go", "internal/cli/root.go"},
	{"docs/decisions.md"},
}

// New is a seeded history under w (the weights its signals= are written with).
func New(seed uint64, w *weights.Weights, o Options) *History {
	rng := rand.New(rand.NewPCG(seed, 0x51a7e))
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rng.IntN(60))
	h := &History{Start: start, End: start.AddDate(0, 0, o.Days)}
	// The team's calendar: which days are worked (shared by the logs: holidays are the team's).
	worked := make([]bool, o.Days)
	for d := 0; d < o.Days; {
		day := start.AddDate(0, 0, d)
		if rng.IntN(30) == 0 { // a holiday of one to three weeks
			d += 7 + rng.IntN(15)
			continue
		}
		wd := day.Weekday()
		worked[d] = wd != time.Saturday && wd != time.Sunday || rng.IntN(8) == 0
		d++
	}
	for l := 0; l < max(1, o.Logs); l++ {
		h.Logs = append(h.Logs, newLog(rng, w, start, worked, l, o))
	}
	for d := 0; d < o.Days+10; d++ {
		day := start.AddDate(0, 0, d)
		if rng.IntN(10) < 8 {
			h.Nights = append(h.Nights, day.Add(time.Duration(rng.Int64N(int64(24*time.Hour)))))
		}
		if rng.IntN(7) == 0 {
			h.Nights = append(h.Nights, day.Add(time.Duration(rng.Int64N(int64(24*time.Hour)))))
		}
	}
	slices.SortFunc(h.Nights, func(a, b time.Time) int { return a.Compare(b) })
	return h
}

func ts(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

func newLog(rng *rand.Rand, w *weights.Weights, start time.Time, worked []bool, index int, o Options) Log {
	var lg Log
	var prevMeta, prevWritten time.Time
	for d, ok := range worked {
		if !ok || rng.IntN(6) == 0 { // this log's agent rests some worked days too
			continue
		}
		day := start.AddDate(0, 0, d)
		n := rng.IntN(9)
		from, span := 9*time.Hour, 10*time.Hour
		if rng.IntN(10) == 0 { // a burst: many tasks within two hours
			n, span = 15+rng.IntN(25), 2*time.Hour
			from += time.Duration(rng.Int64N(int64(8 * time.Hour)))
		}
		metas := make([]time.Time, n)
		for i := range metas {
			metas[i] = day.Add(from + time.Duration(rng.Int64N(int64(span)))).Truncate(time.Second)
		}
		slices.SortFunc(metas, func(a, b time.Time) int { return a.Compare(b) })
		for _, meta := range metas {
			t := Task{Meta: meta}
			switch {
			case !prevMeta.IsZero() && rng.IntN(33) == 0: // out of order: a meta time before the last task's
				t.Meta = prevMeta.Add(-time.Duration(1+rng.IntN(300)) * time.Minute)
				t.Written = prevWritten.Add(time.Minute)
			case o.LateP > 0 && rng.Float64() < o.LateP: // written now, its meta time days ago
				t.Late = true
				t.Meta = meta.Add(-time.Duration(2+rng.IntN(9)) * 24 * time.Hour)
				t.Written = later(prevWritten, meta).Add(time.Minute)
			default:
				t.Written = later(prevWritten.Add(time.Second), meta.Add(time.Duration(2+rng.IntN(90))*time.Minute))
			}
			t.Head, t.Close = render(rng, w, &lg, t.Meta, index, len(lg.Tasks))
			lg.Tasks = append(lg.Tasks, t)
			prevWritten = t.Written
			if t.Meta.After(prevMeta) {
				prevMeta = t.Meta
			}
		}
	}
	return lg
}

// render writes a task's lines: mostly low-side fixes (some the watch's lifted kind), some L2/L3
// work, some explicit dispatches; shared files; failures; regression_followed=true; regression_of=
// naming an earlier task of the log at random distances, across gaps.
func render(rng *rand.Rand, w *weights.Weights, lg *Log, meta time.Time, log, i int) (head, close string) {
	var sigs []weights.Signal
	switch r := rng.IntN(20); {
	case r < 9:
		sigs = []weights.Signal{weights.ExplicitBugfix}
		if rng.IntN(2) == 0 {
			sigs = append(sigs, weights.SingleFile)
		}
	case r < 14:
		sigs = Lifted
	case r < 16:
		sigs = []weights.Signal{weights.ExplicitBugfix, weights.LayerCrossings}
	default:
		sigs = []weights.Signal{weights.Components, weights.CrossLayer}
		if rng.IntN(2) == 0 {
			sigs = append(sigs, weights.Greenfield)
		}
	}
	level := w.Level(w.Score(sigs))
	dispatch := "auto"
	if rng.IntN(12) == 0 {
		dispatch = "explicit"
	}
	parts := make([]string, len(sigs))
	for k, s := range sigs {
		parts[k] = s.String() + ":" + w.Signals[s].String()
	}
	fields := []string{level.Label(), "dispatch=" + dispatch, "signals=" + strings.Join(parts, ","),
		fmt.Sprintf("task=\"log %d task %d\"", log, i), "loops=inner"}
	if i > 0 && rng.IntN(8) == 0 {
		back := 1 + rng.IntN(20)
		if rng.IntN(3) == 0 {
			back = 21 + rng.IntN(40)
		}
		named := lg.Tasks[max(0, i-back)].Meta
		ref := ts(named)
		if rng.IntN(4) == 0 {
			ref = named.Format(time.RFC3339) // the same instant, another precision
		}
		fields = append(fields, "regression_of="+ref)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s  meta  %s\n", ts(meta), strings.Join(fields, "  "))
	iter := fmt.Sprintf("%s  inner  k=1  skill=e2e-driven-iteration  action=\"work %d\"  loss=0.300", ts(meta.Add(time.Second)), i)
	if rng.IntN(5) != 0 {
		area := areas[rng.IntN(len(areas))]
		files := []string{area[rng.IntN(len(area))]}
		if len(area) > 1 && rng.IntN(3) == 0 {
			files = append(files, area[rng.IntN(len(area))])
		}
		iter += "  files=" + strings.Join(slices.Compact(files), ",")
	}
	b.WriteString(iter + "\n")
	head = b.String()
	if rng.IntN(50) == 0 {
		return head, "" // never closed
	}
	terminal := "complete"
	switch r := rng.IntN(25); {
	case r < 2:
		terminal = "failed"
	case r < 3:
		terminal = "aborted"
	}
	loss := float64(rng.IntN(300)) / 1000
	if rng.IntN(8) == 0 {
		loss = 0.5 + float64(rng.IntN(400))/1000
	}
	close = fmt.Sprintf("%s  inner  close  terminal=%s  docs=synced  loss_final=%.3f", ts(meta.Add(2*time.Second)), terminal, loss)
	if rng.IntN(9) == 0 {
		close += "  regression_followed=true"
	}
	return head, close + "\n"
}

// Text is the log as it is on disk at now: every task written by then, and the head of the one in
// progress (its meta time passed, its close not yet written).
func (lg *Log) Text(now time.Time) []byte {
	var b strings.Builder
	for _, t := range lg.Tasks {
		if !t.Written.After(now) {
			b.WriteString(t.Head + t.Close)
			continue
		}
		if !t.Meta.After(now) && !t.Late {
			b.WriteString(t.Head)
		}
		break
	}
	return []byte(b.String())
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Rate is k of n with its Wilson 95 % interval in percent, as the review's tables give it.
func Rate(k, n int) string {
	if n == 0 {
		return "—"
	}
	lo, hi := stats.Wilson(k, n, 0.95)
	return fmt.Sprintf("%d/%d [%.2f, %.2f] %%", k, n, 100*lo, 100*hi)
}
