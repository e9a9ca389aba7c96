package evolve

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ldd-tools/tune/internal/weights"
)

// Rules of the step. They are fixed values, as the reference keeps them (docs/decisions.md#evolution-step, rule 11: the threshold
// 3 and the halving are deliberately not configurable).
const (
	WindowSize       = 20   // tasks with a level label, per trace log
	TriggerThreshold = 3    // distinct low-side regressions in the window
	Alpha            = 0.05 // significance level of the screen and the sign test
	Confidence       = 0.95 // for the Jeffreys intervals of the screen
)

// Decision rules of issue 11 (docs/decisions.md#decisions-evidence-screen-and-acceptance-issue-11). They
// are fixed for the same reason: a knob a run could turn is a knob noise could turn.
const (
	// SameAreaDistance bounds same-area evidence: the later task must come at most this many labelled
	// tasks after the original.
	SameAreaDistance = 5
	// heldContext is how many counted tasks stay held before the first uncounted one: a held task's
	// placebo looks SameAreaDistance back, and the median its same-area followers are judged by is the
	// one of the WindowSize tasks that end its horizon — which, when a quiet week ends the horizon, reach
	// up to WindowSize − 1 tasks before it (docs/decisions.md#nightly-state). With SameAreaDistance
	// alone a night taken up from a state judged such tasks against a shorter block than a full read.
	heldContext = max(SameAreaDistance, WindowSize-1)
	// SameAreaMargin is how far above the window median a later task's final loss must lie to count as
	// a failure when it neither ended failed/aborted nor carries regression_followed=true.
	SameAreaMargin = 0.5
	// SameAreaWitnesses is how many consecutive later same-area tasks must have failed for same-area
	// evidence to count: one ordinary failure in a busy module is not enough
	// (docs/decisions.md#same-area-evidence).
	SameAreaWitnesses = 2
	// ClaimWait is how many tasks after its horizon a task's claim on its same-area witnesses may stay
	// open (a nearer earlier task may take them, docs/decisions.md#same-area-evidence); then the log read
	// so far decides it. In a run of failures in one module the claims alternate from the last task and
	// never close: without a bound the detection held the whole run, and its time grew with its square
	// (docs/decisions.md#flat-memory-issue-28).
	ClaimWait = Horizon
	// Horizon is how many later labelled tasks of the same log fix a task's evidence: after them it is
	// settled and enters the accumulated evidence (docs/decisions.md#settling).
	Horizon = WindowSize
	// DriftBound is how far (in points) any weight or bucket edge may move away from the first version
	// before a human must decide: a candidate beyond it escalates instead of being proposed.
	DriftBound = 2
)

// SettleAfter settles every task of a log whose last task is older than this (by the injected clock):
// a project that has been quiet for a week adds no more evidence to its old tasks
// (docs/decisions.md#settling). A week, not a day: a team's logs are quiet every weekend, and Monday's
// fix naming Friday's regression is evidence a day's pause would lose.
const SettleAfter = 7 * 24 * time.Hour

// SettlingRule says when a task settles, as the outputs put it.
func SettlingRule() string {
	return fmt.Sprintf("a task settles %d labelled tasks later, or when its log has been quiet for %d days", Horizon, SettleAfter/(24*time.Hour))
}

// Quiet says whether at is SettleAfter or more after last, the latest meta time of a log's labelled
// tasks so far (both known): a night at then counts the log's tasks as settled, and a task at then ends
// their horizon, so that what a night counted, the nights after it count the same
// (docs/decisions.md#settling).
func Quiet(last, at time.Time) bool {
	return !last.IsZero() && !at.IsZero() && !at.Before(last.Add(SettleAfter))
}

// Evidence kinds.
const (
	KindRegressionFollowed = "regression_followed"
	KindRegressionOf       = "regression_of"
	KindSameArea           = "same-area"
)

// Where a task's signals came from.
const (
	SignalsRecorded   = "recorded"    // the meta line's signals=
	SignalsReDetected = "re-detected" // detected from the task title (no signals= recorded)
)

// Screen verdicts.
const (
	VerdictCandidate    = "candidate"
	VerdictUnderpowered = "underpowered"
	VerdictNoSignal     = "no-signal"
	// VerdictTied is a candidate whose 2×2 table equals another candidate's: the data cannot tell them apart.
	VerdictTied = "indistinguishable"
)

// Warning is a problem found on the way that does not stop the step: a damaged line, a recorded level
// that disagrees with its recorded signals, a signal name nobody knows.
type Warning struct {
	Source string `json:"source,omitempty"`
	Line   int    `json:"line,omitempty"`
	Reason string `json:"reason"`
}

// UniqueWarnings keeps the first of warnings that say the same thing about the same line, in order
// (docs/decisions.md#warnings-once): a run's reads and detections may meet one problem more than once.
func UniqueWarnings(ws []Warning) []Warning {
	seen := make(map[Warning]bool, len(ws))
	out := make([]Warning, 0, len(ws))
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// Where locates the warning: "source:line", "source" without a line, "" without a source.
func (w Warning) Where() string {
	if w.Line > 0 && w.Source != "" {
		return fmt.Sprintf("%s:%d", w.Source, w.Line)
	}
	return w.Source
}

// String is "where: reason", or the reason alone when the warning has no place.
func (w Warning) String() string {
	if where := w.Where(); where != "" {
		return where + ": " + w.Reason
	}
	return w.Reason
}

// Num is a float that marshals NaN and ±Inf as JSON null (encoding/json refuses them), and everything else
// rounded to 6 decimals so output bytes do not depend on the last float bit.
type Num float64

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(round6(f), 'f', -1, 64)), nil
}

func round6(f float64) float64 {
	r := math.Round(f*1e6) / 1e6
	if r == 0 {
		return 0 // no "-0"
	}
	return r
}

// Change is one proposed change: Delta on a signal weight, or on a bucket edge.
type Change struct {
	Kind   weights.ChangeKind
	Signal weights.Signal // when Kind is signal
	Edge   weights.Level  // when Kind is bucket: the upper edge of this level (L0..L3)
	Delta  weights.Half
}

// MarshalJSON writes {"kind","signal"|"edge","delta"} with delta in points.
func (c Change) MarshalJSON() ([]byte, error) {
	type signal struct {
		Kind   weights.ChangeKind `json:"kind"`
		Signal string             `json:"signal"`
		Delta  weights.Half       `json:"delta"`
	}
	type bucket struct {
		Kind  weights.ChangeKind `json:"kind"`
		Edge  string             `json:"edge"`
		Delta weights.Half       `json:"delta"`
	}
	if c.Kind == weights.ChangeBucket {
		return json.Marshal(bucket{c.Kind, c.Edge.String(), weights.Half(c.Delta)})
	}
	return json.Marshal(signal{c.Kind, c.Signal.String(), weights.Half(c.Delta)})
}

// String describes the change as every table, report and log line names it (weights.ChangeLabel):
// "ambiguous +1", "bucket L1 edge -1".
func (c Change) String() string {
	knob := c.Signal.String()
	if c.Kind == weights.ChangeBucket {
		knob = c.Edge.String()
	}
	return weights.ChangeLabel(c.Kind, knob, c.Delta)
}

// Name is the changed knob: the signal name, or "L1 edge".
func (c Change) Name() string {
	if c.Kind == weights.ChangeBucket {
		return c.Edge.String() + " edge"
	}
	return c.Signal.String()
}

// SameKnob reports whether c and x move the same signal, or the same bucket edge, whatever their steps:
// what a refusal, a no and a held change cover.
func (c Change) SameKnob(x Change) bool {
	switch {
	case c.Kind != x.Kind:
		return false
	case c.Kind == weights.ChangeSignal:
		return c.Signal == x.Signal
	case c.Kind == weights.ChangeBucket:
		return c.Edge == x.Edge
	}
	return false
}

// knob is the value c moves in w: the bucket edge, or the signal's weight.
func (c Change) knob(w *weights.Weights) weights.Half {
	if c.Kind == weights.ChangeBucket {
		return w.Buckets.Edges[c.Edge]
	}
	return w.Signals[c.Signal]
}

// Apply returns w with the change made. The result is a candidate: version 0, parent w.Version.
func (c Change) Apply(w weights.Weights) weights.Weights {
	out := w
	out.Version = 0
	out.Parent = w.Version
	if c.Kind == weights.ChangeBucket {
		out.Buckets.Edges[c.Edge] += c.Delta
	} else {
		out.Signals[c.Signal] += c.Delta
	}
	return out
}

// Halved is the same change with half the delta (the +0.5 retry).
func (c Change) Halved() Change {
	c.Delta /= 2
	return c
}

// Valid reports whether the change keeps the weights well formed: bucket edges strictly increasing.
func (c Change) Valid(w *weights.Weights) bool {
	if c.Kind != weights.ChangeBucket {
		return true
	}
	e := w.Buckets.Edges
	e[c.Edge] += c.Delta
	for i := 1; i < len(e); i++ {
		if e[i] <= e[i-1] {
			return false
		}
	}
	return true
}
