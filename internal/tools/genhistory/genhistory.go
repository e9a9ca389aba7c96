// Package genhistory writes synthetic .ldd/trace.log histories for the evolution-step tests.
//
// The real traces hold no low-side regression (docs/decisions.md#trace-logs), so the trigger, the screen and the
// proposal can only be exercised on synthetic histories. A History is a list of Task values rendered in
// the v0.13 writer's format (or the v0.10.1 format for Legacy tasks); the named builders in cases.go
// produce the histories of the acceptance list, with filler tasks varied by a seed so that tests check
// rules rather than one fixed file. docs/synthetic-histories.md describes the format and the cases.
package genhistory

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/weights"
)

// Task is one task of a synthetic history.
type Task struct {
	Title    string
	Level    weights.Level
	Dispatch string // short form: auto, explicit, bump, override-down ("" = no dispatch field)
	// Signals fire on the task; they are written as signals=name:+w with the weights of History.Weights.
	Signals []weights.Signal
	// NoSignals leaves signals= out (a writer that did not record them).
	NoSignals bool
	// Legacy writes a v0.10.1 meta line: task=, loops=, level_chosen=, dispatch_source= (long form), no
	// label and no signals=.
	Legacy bool
	// Unlabelled writes a pre-v0.10.1 meta line with no level at all.
	Unlabelled bool
	// WeightsVersion is written as weights=vNNNN on the meta line when > 0.
	WeightsVersion int
	Creativity     string
	Files          []string // files= on the first iteration line
	Action         string   // action= text of the iteration line ("" = a neutral default)
	Layer          string   // layer= on the close line
	LossFinal      float64
	NoLoss         bool // close without loss_final
	Open           bool // no close line
	Terminal       string
	// RegressionFollowed writes regression_followed=true on the close line.
	RegressionFollowed bool
	// RegressionOf is the index (0-based) of an earlier task of the history this task names with
	// regression_of=<its meta timestamp>, or -1.
	RegressionOf int
}

// NewTask returns a closed, auto-dispatched task whose level is the bucket of its signals under w.
func NewTask(w *weights.Weights, title string, loss float64, signals ...weights.Signal) Task {
	return Task{Title: title, Level: w.Level(w.Score(signals)), Dispatch: "auto", Signals: signals, LossFinal: loss,
		Terminal: "complete", RegressionOf: -1}
}

// History is a synthetic trace log.
type History struct {
	Start   time.Time
	Step    time.Duration
	Weights *weights.Weights // weights written into signals=
	Tasks   []Task
	// Damage adds lines a real log can contain after a crash or a bad writer: an unbalanced quote, a value
	// split by a newline, prose, and a last line without its newline.
	Damage bool
}

// MetaTimestamp is the meta timestamp of task i, as written.
func (h *History) MetaTimestamp(i int) string { return h.ts(i, 0) }

func (h *History) ts(task, line int) string {
	step := h.Step
	if step == 0 {
		step = time.Hour
	}
	t := h.Start.Add(time.Duration(task)*step + time.Duration(line)*time.Second)
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}

// Render writes the history as trace.log text.
func (h *History) Render() []byte {
	var b strings.Builder
	for i, t := range h.Tasks {
		h.renderTask(&b, i, t)
		if h.Damage && i == len(h.Tasks)/2 {
			// Damage in the middle of the file: each line must be skipped with a reason, never crash the
			// reader or shift the task segmentation.
			fmt.Fprintf(&b, "%s  inner  k=9  action=\"unterminated quote  loss=0.100\n", h.ts(i, 8))
			fmt.Fprintf(&b, "%s  inner  k=10  action=\"first half of a value\n", h.ts(i, 9))
			b.WriteString("second half of the value\"  loss=0.100\n")
			b.WriteString("hello world this is prose, not a trace entry\n")
		}
	}
	if h.Damage {
		// An interrupted append: the last line has no newline and stops mid-field.
		fmt.Fprintf(&b, "%s  inner  k=3  skill=e2e-driven-iteration  action=\"half writ", h.ts(len(h.Tasks), 0))
	}
	return []byte(b.String())
}

func (h *History) renderTask(b *strings.Builder, i int, t Task) {
	var meta []string
	switch {
	case t.Legacy:
		meta = append(meta, kv("task", t.Title), "loops=inner", "level_chosen="+t.Level.String())
		if t.Dispatch != "" {
			meta = append(meta, "dispatch_source="+longDispatch(t.Dispatch))
		}
	case t.Unlabelled:
		meta = append(meta, kv("task", t.Title), "loops=inner")
	default:
		meta = append(meta, t.Level.Label())
		if t.Creativity != "" {
			meta = append(meta, "creativity="+t.Creativity)
		}
		if t.Dispatch != "" {
			meta = append(meta, "dispatch="+t.Dispatch)
		}
		if !t.NoSignals && len(t.Signals) > 0 {
			meta = append(meta, "signals="+h.signalsField(t.Signals))
		}
		if t.WeightsVersion > 0 {
			meta = append(meta, "weights="+weights.VersionName(t.WeightsVersion))
		}
		meta = append(meta, kv("task", t.Title), "loops=inner")
	}
	if t.RegressionOf >= 0 {
		meta = append(meta, "regression_of="+h.MetaTimestamp(t.RegressionOf))
	}
	line(b, h.ts(i, 0), "meta", meta)

	action := t.Action
	if action == "" {
		action = "work on " + t.Title
	}
	iter := []string{"k=1", "skill=e2e-driven-iteration", kv("action", action), fmt.Sprintf("loss=%.3f", t.LossFinal)}
	if len(t.Files) > 0 {
		iter = append(iter, "files="+strings.Join(t.Files, ","))
	}
	line(b, h.ts(i, 1), "inner", iter)
	if t.Open {
		return
	}
	terminal := t.Terminal
	if terminal == "" {
		terminal = "complete"
	}
	cl := []string{"close", "terminal=" + terminal}
	if t.Layer != "" {
		cl = append(cl, kv("layer", t.Layer))
	}
	cl = append(cl, "docs=synced")
	if !t.NoLoss {
		cl = append(cl, fmt.Sprintf("loss_final=%.3f", t.LossFinal))
	}
	if t.RegressionFollowed {
		cl = append(cl, "regression_followed=true")
	}
	line(b, h.ts(i, 2), "inner", cl)
}

func (h *History) signalsField(sigs []weights.Signal) string {
	w := h.Weights
	parts := make([]string, len(sigs))
	for i, s := range sigs {
		parts[i] = s.String() + ":" + w.Signals[s].String()
	}
	return strings.Join(parts, ",")
}

func line(b *strings.Builder, ts, loop string, fields []string) {
	b.WriteString(ts + "  " + loop + "  " + strings.Join(fields, "  ") + "\n")
}

// kv writes key=value, double-quoting a value with spaces the way the v0.11+ writer does.
func kv(key, value string) string {
	if strings.ContainsAny(value, " \t\"'") {
		return key + `="` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(value) + `"`
	}
	return key + "=" + value
}

func longDispatch(short string) string {
	switch short {
	case "auto":
		return "auto-level"
	case "explicit":
		return "user-explicit"
	case "bump":
		return "user-bump"
	case "override-down":
		return "user-override-down"
	}
	return short
}

// areas are code areas for filler and regression tasks: a title stem and the files it touches.
var areas = []struct {
	stem  string
	files []string
}{
	{"checkout cart totals", []string{"src/checkout/cart.go", "src/checkout/cart_test.go"}},
	{"billing invoice export", []string{"src/billing/export.go"}},
	{"auth session refresh", []string{"src/auth/session.go", "src/auth/token.go"}},
	{"search index rebuild", []string{"src/search/index.go"}},
	{"notification digest mailer", []string{"src/notify/digest.go"}},
	{"admin audit log page", []string{"web/admin/audit.tsx"}},
	{"metrics exporter labels", []string{"src/metrics/exporter.go"}},
	{"config loader defaults", []string{"src/config/load.go", "config/defaults.yaml"}},
	{"image thumbnail worker", []string{"src/media/thumbs.go"}},
	{"rate limiter buckets", []string{"src/gateway/ratelimit.go"}},
	{"CSV import validation", []string{"src/importer/csv.go"}},
	{"feature flag client", []string{"web/flags/client.ts"}},
}

// Filler returns n benign tasks: auto-dispatched at the level of their signals (never L0/L1 unless
// lowSide is true), closed with a low final loss, each in its own code area. Signals are drawn from
// pool (nil = any signal but the ones in avoid). rng varies titles, signals and losses.
func Filler(rng *rand.Rand, w *weights.Weights, n int, avoid ...weights.Signal) []Task {
	var pool []weights.Signal
	for _, s := range weights.Signals() {
		if !containsSignal(avoid, s) {
			pool = append(pool, s)
		}
	}
	out := make([]Task, 0, n)
	for i := 0; len(out) < n; i++ {
		k := rng.IntN(3) // 0..2 signals
		perm := rng.Perm(len(pool))
		var sigs []weights.Signal
		for _, j := range perm[:min(k, len(pool))] {
			sigs = append(sigs, pool[j])
		}
		sort.Slice(sigs, func(a, b int) bool { return sigs[a] < sigs[b] })
		lv := w.Level(w.Score(sigs))
		if lv <= weights.L1 || lv == weights.L4 {
			continue // filler stays in L2/L3: no eligible task, no clamp question
		}
		area := areas[(i+rng.IntN(len(areas)))%len(areas)]
		t := NewTask(w, fmt.Sprintf("%s (%d)", area.stem, i+1), float64(rng.IntN(150))/1000, sigs...)
		t.Files = []string{fmt.Sprintf("filler/%03d/%s", i+1, lastPart(area.files[0]))}
		out = append(out, t)
	}
	return out
}

func lastPart(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}

func containsSignal(list []weights.Signal, s weights.Signal) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Eligible returns n benign low-side tasks: auto-dispatched at L0/L1 (an explicit bug fix, a single-file
// edit, or both, sometimes with one more signal from outside avoid), closed with a low final loss, each in
// its own code area, and never followed by evidence. They are the comparison group of the screen: most
// tasks a scorer sends low are fine, and a signal is behind the regressions only if it is rarer among
// these (docs/decisions.md#screen).
func Eligible(rng *rand.Rand, w *weights.Weights, n int, avoid ...weights.Signal) []Task {
	var pool []weights.Signal
	for _, s := range weights.Signals() {
		if !containsSignal(avoid, s) && s != weights.ExplicitBugfix && s != weights.SingleFile {
			pool = append(pool, s)
		}
	}
	bases := [][]weights.Signal{{weights.ExplicitBugfix}, {weights.SingleFile}, {weights.ExplicitBugfix, weights.SingleFile}}
	out := make([]Task, 0, n)
	for i := 0; len(out) < n; i++ {
		sigs := append([]weights.Signal(nil), bases[rng.IntN(len(bases))]...)
		if len(pool) > 0 && rng.IntN(2) == 0 {
			sigs = append(sigs, pool[rng.IntN(len(pool))])
		}
		sort.Slice(sigs, func(a, b int) bool { return sigs[a] < sigs[b] })
		if w.Level(w.Score(sigs)) > weights.L1 {
			continue
		}
		area := areas[(i+rng.IntN(len(areas)))%len(areas)]
		t := NewTask(w, fmt.Sprintf("%s tweak (%d)", area.stem, i+1), float64(rng.IntN(150))/1000, sigs...)
		t.Files = []string{fmt.Sprintf("eligible/%03d/%s", i+1, lastPart(area.files[0]))}
		out = append(out, t)
	}
	return out
}

// Background returns n tasks for a history's background: four in five benign low-side tasks (Eligible)
// and the rest L2/L3 fillers (Filler), interleaved at random.
func Background(rng *rand.Rand, w *weights.Weights, n int, avoid ...weights.Signal) []Task {
	ne := (4*n + 4) / 5
	out := append(Eligible(rng, w, ne, avoid...), Filler(rng, w, n-ne, avoid...)...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// LowOnOneSignal is 20 earlier routine fixes (explicit-bugfix, single-file, every other one with
// components>=3: the accumulated evidence's comparison group) and a window of 20 more, three of which
// also carry components>=3 and layer-crossings and regressed: only layer-crossings goes with the
// regressions, so the accumulated test names it. Under v0001 they score -4 (L1); the drift-bound tests
// dispatch it under a version with layer-crossings already 2 points up (-2, still L1), where a third
// point is what lifts them.
func LowOnOneSignal(w *weights.Weights, start time.Time) *History {
	h := &History{Weights: w, Start: start.Add(-20 * time.Hour)}
	for i := range 40 {
		sigs := []weights.Signal{weights.ExplicitBugfix, weights.SingleFile}
		if i%2 == 1 {
			sigs = append(sigs, weights.Components)
		}
		task := NewTask(w, fmt.Sprintf("routine fix %d", i), 0.05, sigs...)
		if i == 22 || i == 27 || i == 31 {
			task = NewTask(w, fmt.Sprintf("quick patch %d", i-20), 0.05, weights.ExplicitBugfix, weights.SingleFile, weights.Components, weights.LayerCrossings)
			task.RegressionFollowed = true
		}
		h.Tasks = append(h.Tasks, task)
	}
	return h
}

// Carriers is n routine fixes (explicit-bugfix, single-file, every other one with components>=3) from
// start, in which, from the 21st task on, every other task is a regressed carrier of the next of groups
// in turn (the routine signals plus the group's), until the group has counts[g] of them ("patch A 20",
// "patch B 22", …): histories where several signals, or several depths of one, want a change.
func Carriers(w *weights.Weights, start time.Time, n int, groups [][]weights.Signal, counts []int) *History {
	h := &History{Weights: w, Start: start}
	made := make([]int, len(groups))
	for i := range n {
		sigs := []weights.Signal{weights.ExplicitBugfix, weights.SingleFile}
		if i%2 == 1 {
			sigs = append(sigs, weights.Components)
		}
		task := NewTask(w, fmt.Sprintf("routine fix %d", i), 0.05, sigs...)
		if g := (i / 2) % len(groups); i >= 20 && i%2 == 0 && made[g] < counts[g] {
			made[g]++
			task = NewTask(w, fmt.Sprintf("patch %c %d", 'A'+g, i), 0.05, append([]weights.Signal{weights.ExplicitBugfix, weights.SingleFile}, groups[g]...)...)
			task.RegressionFollowed = true
		}
		h.Tasks = append(h.Tasks, task)
	}
	return h
}
