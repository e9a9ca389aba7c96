package evolve

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/ldd-tools/tune/internal/scorer"
	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// WindowLog summarises the window of one trace log.
type WindowLog struct {
	Source string `json:"source"`
	// Labelled is the number of tasks with a level label that were read; Tasks how many of them are in
	// the window (the last WindowSize).
	Labelled int `json:"labelled"`
	Tasks    int `json:"tasks"`
	Closed   int `json:"closed"`
	Eligible int `json:"eligible"`
	// KnownLoss counts the closed window tasks with a known final loss; the median is over them.
	KnownLoss int  `json:"known_loss"`
	Median    *Num `json:"median_loss_final"`
	// ResolvedByActive counts the auto L0/L1 closed tasks that the active weights, re-scoring their
	// signals, already put at L2 or higher: resolved, not evidence. Used counts the window tasks the
	// evidence ledger names (they supported an applied change and never count again). The two are
	// disjoint: a ledgered task counts as used only, even when the active weights lift it too.
	ResolvedByActive int `json:"resolved_by_active"`
	Used             int `json:"ledger_used"`
	// First and Last are the meta timestamps of the window's first and last task.
	First string `json:"first,omitempty"`
	Last  string `json:"last,omitempty"`
}

// Window is the window of every log read.
type Window struct {
	Size     int `json:"size"`
	Tasks    int `json:"tasks"`
	Closed   int `json:"closed"`
	Eligible int `json:"eligible"`
	// ResolvedByActive and Used sum the per-log counts (see WindowLog).
	ResolvedByActive int         `json:"resolved_by_active"`
	Used             int         `json:"ledger_used"`
	Logs             []WindowLog `json:"logs"`
}

// UsedTask is a window task the evidence ledger names: it supported an applied change, so it is left out
// of flagging, of the trigger count and of the screen (docs/decisions.md#evidence-ledger).
type UsedTask struct {
	Key           string `json:"key"`
	MetaTimestamp string `json:"meta_timestamp"`
	Title         string `json:"task"`
	Source        string `json:"source"`
	Line          int    `json:"line"`
	// By is what the ledger says used it (the applied version, e.g. "v0002").
	By string `json:"by"`
}

// Evidence is one reason to call an eligible task a low-side regression.
type Evidence struct {
	Kind string `json:"kind"` // regression_followed | regression_of | same-area
	// By is the meta timestamp of the later task that supplies the evidence ("" for regression_followed).
	By     string `json:"by,omitempty"`
	ByLine int    `json:"by_line,omitempty"`
	// Basis says how the code area matched (same-area only): "files=" or "paths in text".
	Basis   string   `json:"basis,omitempty"`
	Overlap []string `json:"overlap,omitempty"`
	// LossFinal is the later task's final loss (same-area only); Median the window median.
	LossFinal *Num `json:"loss_final,omitempty"`
	Median    *Num `json:"median,omitempty"`
	// Failure says how the later same-area task failed: "terminal=failed", "terminal=aborted",
	// "regression_followed" or "loss_final 0.820 ≥ median 0.073 + 0.3".
	Failure string `json:"failure,omitempty"`
	// Distance is how many labelled tasks later the same-area task came (at most SameAreaDistance).
	Distance int `json:"distance,omitempty"`
	// CorroboratedBy is the meta timestamp of the second later same-area task that failed (same-area
	// evidence needs it, docs/decisions.md#same-area-evidence).
	CorroboratedBy string `json:"corroborated_by,omitempty"`
}

// String is a one-line description for tables and proposal files.
func (e Evidence) String() string {
	switch e.Kind {
	case KindRegressionFollowed:
		return "regression_followed=true on its close"
	case KindRegressionOf:
		return fmt.Sprintf("regression_of by the task of %s", e.By)
	default:
		return fmt.Sprintf("same-area (%s: %s) task of %s, %d later, failed: %s; corroborated by the task of %s", e.Basis,
			strings.Join(e.Overlap, ","), e.By, e.Distance, e.Failure, e.CorroboratedBy)
	}
}

// Flagged is a low-side regression: an eligible task with at least one piece of evidence.
type Flagged struct {
	MetaTimestamp string                 `json:"meta_timestamp"`
	Title         string                 `json:"task"`
	Level         string                 `json:"level"`
	Evidence      []Evidence             `json:"evidence"`
	Signals       []weights.SignalWeight `json:"signals"`
	// SignalsSource is "recorded" (signals=) or "re-detected" (from the title).
	SignalsSource string `json:"signals_source"`
	// Source is the trace log, Line the meta line.
	Source    string `json:"source"`
	Line      int    `json:"line"`
	LossFinal Num    `json:"loss_final"`
	// Key identifies the task across runs for the evidence ledger (TaskKey).
	Key string `json:"key"`
	// ActiveLevel is the level its signals score under the active weights (L0 or L1: still too low).
	ActiveLevel string `json:"active_level"`
	// InWindow: the task is in its log's window (it counts for the trigger); Counted: it is settled and in
	// the accumulated evidence (docs/decisions.md#accumulated-evidence). A flagged task is one or both.
	InWindow bool `json:"in_window"`
	Counted  bool `json:"counted"`
	// Fired are the signals as the scorer's enum (Signals minus unknown names), for re-scoring.
	Fired []weights.Signal `json:"-"`
}

// EvidenceStrings lists the evidence as sentences.
func (f *Flagged) EvidenceStrings() []string {
	out := make([]string, len(f.Evidence))
	for i, e := range f.Evidence {
		out[i] = e.String()
	}
	return out
}

// windowTask is a task of a window with everything the stages derive from it.
type windowTask struct {
	t        *traceparse.Task
	fired    []weights.Signal
	signals  []weights.SignalWeight
	source   string // SignalsRecorded | SignalsReDetected
	closed   bool   // closed with a known final loss
	eligible bool
	// active is the level of its signals under the active weights; resolved is true when the task was
	// dispatched auto at L0/L1, is not in the ledger, and the active weights already lift it; usedBy is the
	// ledger's entry.
	active   weights.Level
	resolved bool
	usedBy   string
	key      string
	evidence []Evidence
	// sameArea is the corroborated same-area evidence its horizon offers and witnesses the later tasks
	// that give it (none: zero); it is the task's evidence only when no nearer task claims them
	// (detector.claimsDecided).
	sameArea  Evidence
	witnesses witnessSet
	// weak says the first later task in its code area failed (sameAreaWitnesses); placebo the nearest
	// earlier one within SameAreaDistance (docs/decisions.md#weak-witness).
	weak, placebo bool
	// unclamped says its recorded creativity lets the L4 bucket run at L4 (scorer.Clamps): the loss rule
	// re-scores it under candidate weights as the scorer would run it.
	unclamped bool
	// ranHigh says it was dispatched auto at L2 or higher and closed with a known loss; regressedHigh
	// that such a task has exact regression evidence (regression_followed, or a later task's
	// regression_of within its horizon): the loss rule's comparison at L2+
	// (docs/decisions.md#the-carriers-at-l2).
	ranHigh, regressedHigh bool
	// warnAt is how many task warnings of each kind its log had before this task's (LogState keeps
	// those of the tasks before the first it holds).
	warnAt [numWarningKinds]int
}

// Resolver supplies what the pure stages cannot compute themselves.
type Resolver struct {
	// Active is the active weights version: re-detected signals are weighed with it when the task's meta
	// has no weights= (or it cannot be resolved), and recorded levels are checked against its buckets.
	Active *weights.Weights
	// WeightsFor resolves a meta weights= value ("v0002"); nil or ok=false falls back to Active.
	WeightsFor func(version string) (*weights.Weights, bool)
	// Detect re-detects the signals of a task title; nil uses scorer.Detect without history.
	Detect func(title string) []weights.Signal
	// Used is the evidence ledger: TaskKey → what used the task (the applied version). A used task is
	// never evidence again (docs/decisions.md#evidence-ledger).
	Used map[string]string
}

// TaskKey identifies a task across runs and across the paths a log is read under: the meta timestamp as
// an instant (UTC, nanoseconds; the raw text when it does not parse) and the first 12 hex digits of the
// sha256 of its title. The log's path is left out on purpose: nightly reads the same log through globs,
// relative and absolute paths, and a rotated or moved log keeps its tasks
// (docs/decisions.md#evidence-ledger).
func TaskKey(t *traceparse.Task) string {
	ts := t.MetaTimestamp
	if !t.MetaTime.IsZero() {
		ts = t.MetaTime.UTC().Format(time.RFC3339Nano)
	}
	h := sha256.Sum256([]byte(t.Title))
	return ts + "#" + hex.EncodeToString(h[:6])
}

func (r *Resolver) weightsFor(version string) (*weights.Weights, string) {
	if version != "" && r.WeightsFor != nil {
		if w, ok := r.WeightsFor(version); ok {
			return w, version
		}
	}
	return r.Active, weights.VersionName(r.Active.Version)
}

func (r *Resolver) detect(title string) []weights.Signal {
	if r.Detect != nil {
		return r.Detect(title)
	}
	return scorer.Detect(title, nil).Fired
}

// isAuto accepts the short and the long form of the auto dispatch.
func isAuto(dispatch string) bool { return dispatch == "auto" || dispatch == "auto-level" }

// resolveTask finds the task's signals (docs/decisions.md#evolution-step, rule 5) and checks its recorded level against them.
func resolveTask(t *traceparse.Task, r *Resolver) (*windowTask, []TaskWarning) {
	wt := &windowTask{t: t}
	var warns []TaskWarning
	warn := func(kind int, format string, args ...any) {
		warns = append(warns, TaskWarning{Warning{Source: t.Source, Line: t.Line, Reason: fmt.Sprintf(format, args...)}, kind})
	}
	dispatchW, dispatchName := r.weightsFor(t.WeightsVersion)
	if t.WeightsVersion != "" && dispatchName != t.WeightsVersion {
		warn(warnUnknownVersion, "task %s: weights=%s is not in the store; using the active %s", t.MetaTimestamp, t.WeightsVersion, dispatchName)
	}
	if t.HasSignals {
		wt.source = SignalsRecorded
		var sum weights.Half
		for _, s := range t.Signals {
			wt.signals = append(wt.signals, weights.SignalWeight{Name: s.Name, Weight: weights.Half(s.Weight)})
			sig, ok := weights.SignalByName(s.Name)
			if !ok {
				// The trace reader already warned about this line ("… is not a scorer signal"): said once
				// (docs/decisions.md#warnings-once), ignored here.
				continue
			}
			wt.fired = append(wt.fired, sig)
			sum += s.Weight
		}
		checkRecordedLevel(t, sum, dispatchW, dispatchName, warn)
	} else {
		wt.source = SignalsReDetected
		wt.fired = r.detect(t.Title)
		for _, s := range wt.fired {
			wt.signals = append(wt.signals, weights.SignalWeight{Name: s.String(), Weight: weights.Half(dispatchW.Signals[s])})
		}
	}
	wt.closed = t.Closed && t.LossFinal != nil
	wt.unclamped = !scorer.RanClamped(t.Level, t.Creativity)
	wt.key = TaskKey(t)
	wt.usedBy = r.Used[wt.key]
	// Eligibility under the active weights (docs/decisions.md#eligibility): dispatched auto at L0/L1,
	// closed with a known loss, and still L0/L1 when its signals are re-scored under the active version.
	// Recorded signals are re-weighted; without signals= the title's re-detected signals are (a task whose
	// title re-detects nothing scores 0, L2 under v0001, and is no evidence either way).
	wt.active = r.Active.Level(r.Active.Score(wt.fired))
	dispatchedLow := isAuto(t.Dispatch) && (t.Level == "L0" || t.Level == "L1") && wt.closed
	// A ledgered task is "already used", whatever the active weights make of it (the change it supported
	// usually lifted it): each left-out task is counted under one reason.
	wt.resolved = dispatchedLow && wt.active > weights.L1 && wt.usedBy == ""
	wt.eligible = dispatchedLow && !wt.resolved && wt.usedBy == ""
	ran, err := weights.ParseLevel(t.Level)
	wt.ranHigh = isAuto(t.Dispatch) && wt.closed && err == nil && ran >= weights.L2
	return wt, warns
}

// checkRecordedLevel warns when an auto-dispatched task's recorded level is not the bucket of its recorded
// signal sum (allowing the L4→L3 clamp at standard creativity). The recorded level stays what counts: it
// is what was dispatched (docs/decisions.md#trace-logs).
func checkRecordedLevel(t *traceparse.Task, sum weights.Half, w *weights.Weights, name string, warn func(int, string, ...any)) {
	if !isAuto(t.Dispatch) {
		return
	}
	recorded, err := weights.ParseLevel(t.Level)
	if err != nil {
		return
	}
	bucket := w.Level(sum)
	switch {
	case recorded == weights.L3 && scorer.Clamps(bucket, t.Creativity):
		return // the clamp
	case bucket == weights.L4 && recorded == weights.L4 && t.Creativity == "standard":
		warn(warnClampForbids, "task %s: recorded L4 with creativity=standard, which the clamp forbids (signals sum to %s)", t.MetaTimestamp, sum.String())
	case bucket != recorded:
		warn(warnLevelDisagrees, "task %s: recorded %s but its signals sum to %s, which is %s under %s", t.MetaTimestamp, t.Level, sum.String(), bucket, name)
	}
}

// summariseWindow summarises the window of one log (its last WindowSize labelled tasks; labelled read in all)
// with the window median final loss.
func summariseWindow(source string, labelled int, win []*windowTask) WindowLog {
	wl := WindowLog{Source: source, Labelled: labelled, Tasks: len(win),
		First: strings.Clone(win[0].t.MetaTimestamp), Last: strings.Clone(win[len(win)-1].t.MetaTimestamp)}
	for _, wt := range win {
		if wt.t.Closed {
			wl.Closed++
		}
		if wt.eligible {
			wl.Eligible++
		}
		if wt.resolved {
			wl.ResolvedByActive++
		}
		if wt.usedBy != "" {
			wl.Used++
		}
	}
	wl.KnownLoss, wl.Median = blockMedian(win)
	return wl
}

// blockMedian is the median final loss of the closed tasks of a block (nil without any).
func blockMedian(block []*windowTask) (int, *Num) {
	var losses []float64
	for _, wt := range block {
		if wt.closed {
			losses = append(losses, *wt.t.LossFinal)
		}
	}
	if len(losses) == 0 {
		return 0, nil
	}
	m := Num(stats.Median(losses))
	return len(losses), &m
}

// sameAreaFailure says how a later task failed, "" when it did not: it ended terminal=failed or
// aborted, it carries regression_followed=true, or its final loss lies SameAreaMargin or more above the
// window median (a loss merely above the median is what half of all tasks have).
func sameAreaFailure(later *windowTask, median *Num) string {
	switch {
	case later.t.Terminal == "failed" || later.t.Terminal == "aborted":
		return "terminal=" + later.t.Terminal
	case later.t.RegressionFollowed:
		return "regression_followed"
	case median != nil && later.closed && *later.t.LossFinal >= float64(*median)+SameAreaMargin:
		return fmt.Sprintf("loss_final %.3f ≥ median %.3f + %.1f", *later.t.LossFinal, float64(*median), SameAreaMargin)
	}
	return ""
}

// names reports whether a regression_of= value names task t: the same meta timestamp, or the same instant
// written with another precision ("…:00Z" for "…:00.000000Z").
func names(ref string, t *traceparse.Task) bool { return Names(ref, t.MetaTimestamp, t.MetaTime) }

// Names says whether a regression_of= value ref names the task of that meta timestamp (and meta time):
// the same text, or the same instant. The detection's rule, which the watch reads alike.
func Names(ref, metaTimestamp string, metaTime time.Time) bool {
	if ref == "" {
		return false
	}
	if ref == metaTimestamp {
		return true
	}
	at, err := time.Parse(time.RFC3339Nano, ref)
	return err == nil && !metaTime.IsZero() && at.Equal(metaTime)
}

// sameArea compares the code areas of two tasks: their files= sets when both have one; otherwise the
// paths each names (files=, or the paths the scorer sees in its title and its action= and layer= text).
func sameArea(a, b *traceparse.Task) (basis string, overlap []string) {
	if len(a.Files) > 0 && len(b.Files) > 0 {
		return "files=", intersect(normPaths(a.Files, false), normPaths(b.Files, false))
	}
	return "paths in text", intersect(areaPaths(a), areaPaths(b))
}

func areaPaths(t *traceparse.Task) []string {
	if len(t.Files) > 0 {
		return normPaths(t.Files, true)
	}
	texts := []string{t.Title}
	for _, e := range t.Entries {
		texts = append(texts, e.Fields.Value("action"), e.Fields.Value("layer"))
	}
	var paths []string
	for _, s := range texts {
		paths = append(paths, filePaths(s)...)
	}
	return normPaths(paths, true)
}

// filePaths finds file-like tokens in prose: a name with an extension (a letter, then up to 7 letters or
// digits), optionally under directories. It is wider than the scorer's path pattern (scorer.ExtractPaths
// knows 16 extensions, for its single-file signal): a code area may be a .c, .kt or Makefile.am file.
// Single-letter names ("e.g", "i.e") and version numbers ("v0.13") are not paths.
func filePaths(s string) []string {
	var out []string
	for _, tok := range strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_./-", r))
	}) {
		tok = strings.TrimRight(strings.TrimPrefix(tok, "./"), ".-/")
		dot := strings.LastIndexByte(tok, '.')
		if dot <= 0 || dot == len(tok)-1 {
			continue
		}
		base, ext := tok[strings.LastIndexByte(tok[:dot], '/')+1:dot], tok[dot+1:]
		if len([]rune(base)) < 2 && !strings.Contains(tok, "/") || len(ext) > 8 || !isExt(ext) {
			continue
		}
		out = append(out, tok)
	}
	return out
}

func isExt(ext string) bool {
	for i, r := range ext {
		if r > unicode.MaxASCII || !(unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// normPaths trims "./" and, for paths found in prose, lowercases them (as the scorer compares paths for
// unknown-file-territory).
func normPaths(ps []string, fold bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range ps {
		p = strings.TrimPrefix(strings.TrimSpace(p), "./")
		if fold {
			p = strings.ToLower(p)
		}
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func intersect(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if in[x] {
			out = append(out, x)
		}
	}
	return out
}

// key identifies a flagged task across several logs: its log and meta line.
func (f *Flagged) key() string { return taskKey(f.Source, f.Line) }

// taskKey identifies a task by its log and meta line: meta timestamps can repeat across projects' logs.
func taskKey(source string, line int) string { return fmt.Sprintf("%s\x00%d", source, line) }

func (wt *windowTask) flagged() Flagged {
	return Flagged{
		MetaTimestamp: wt.t.MetaTimestamp, Title: wt.t.Title, Level: wt.t.Level, Evidence: wt.evidence,
		Signals: wt.signals, SignalsSource: wt.source, Source: wt.t.Source, Line: wt.t.Line,
		LossFinal: Num(*wt.t.LossFinal), Fired: wt.fired, Key: wt.key, ActiveLevel: wt.active.String(),
	}
}
