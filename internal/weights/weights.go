// Package weights holds one version of the scorer's weights: the nine signal weights, the four bucket edges
// that cut a raw score into levels L0..L4, and the cost matrix that replay uses to price a wrong level.
//
// Weights are multiples of 0.5. They are kept as integer half-points (Half) so that sums and bucket
// comparisons are exact: no float drift can move a task across an edge.
package weights

import (
	"fmt"
	"strconv"
	"time"
)

// Half is a quantity in half-points: Half(5) is +2.5, Half(-10) is -5.
type Half int

// Whole returns n whole points as a Half.
func Whole(n int) Half { return Half(2 * n) }

// Float returns the value in points.
func (h Half) Float() float64 { return float64(h) / 2 }

// IsWhole reports whether h has no half point.
func (h Half) IsWhole() bool { return h%2 == 0 }

// String prints a signed weight the way the reference dispatch header does: "+2", "-5", "+2.5", "+0".
func (h Half) String() string {
	sign := "+"
	v := int(h)
	if v < 0 {
		sign, v = "-", -v
	}
	s := strconv.Itoa(v / 2)
	if v%2 != 0 {
		s += ".5"
	}
	return sign + s
}

// Plain prints h without a forced sign: "2", "-5", "2.5".
func (h Half) Plain() string { return string(h.AppendPlain(nil)) }

// AppendPlain appends Plain's text to dst without allocating (the trace JSON writes a weight per signal).
func (h Half) AppendPlain(dst []byte) []byte {
	v := int(h)
	if v < 0 {
		dst, v = append(dst, '-'), -v
	}
	dst = strconv.AppendInt(dst, int64(v/2), 10)
	if v%2 != 0 {
		dst = append(dst, ".5"...)
	}
	return dst
}

// HalfFromFloat converts points to half-points; it fails unless f is a multiple of 0.5.
func HalfFromFloat(f float64) (Half, error) {
	d := f * 2
	if d != float64(int64(d)) || d > 1e9 || d < -1e9 {
		return 0, fmt.Errorf("%v is not a multiple of 0.5", f)
	}
	return Half(int64(d)), nil
}

// ParseHalf parses "+2", "-5", "2.5", "+0.5".
func ParseHalf(s string) (Half, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return HalfFromFloat(f)
}

// Signal identifies one of the nine scorer signals. The order is the reference scorer's table order.
type Signal int

const (
	Greenfield Signal = iota
	Components
	CrossLayer
	Ambiguous
	ExplicitBugfix
	SingleFile
	LayerCrossings
	ContractRuleHit
	UnknownFileTerritory
	NumSignals
)

var signalNames = [NumSignals]string{
	"greenfield",
	"components>=3",
	"cross-layer",
	"ambiguous",
	"explicit-bugfix",
	"single-file",
	"layer-crossings",
	"contract-rule-hit",
	"unknown-file-territory",
}

// String returns the reference name of the signal, e.g. "components>=3".
func (s Signal) String() string {
	if s < 0 || s >= NumSignals {
		return fmt.Sprintf("signal(%d)", int(s))
	}
	return signalNames[s]
}

// Signals returns all signals in table order.
func Signals() []Signal {
	out := make([]Signal, NumSignals)
	for i := range out {
		out[i] = Signal(i)
	}
	return out
}

// SignalByName finds a signal by its reference name. The Unicode spelling "components≥3" that the
// upstream docs use is accepted as an alias of "components>=3".
func SignalByName(name string) (Signal, bool) {
	if name == "components≥3" {
		return Components, true
	}
	for i, n := range signalNames {
		if n == name {
			return Signal(i), true
		}
	}
	return 0, false
}

// Level is a thinking level, L0 (reflex) to L4 (method).
type Level int

const (
	L0 Level = iota
	L1
	L2
	L3
	L4
	NumLevels
)

var levelNames = [NumLevels]string{"reflex", "diagnostic", "deliberate", "structural", "method"}

// String returns "L0" … "L4".
func (l Level) String() string { return "L" + strconv.Itoa(int(l)) }

// Name returns the canonical level name: reflex, diagnostic, deliberate, structural, method.
func (l Level) Name() string {
	if l < 0 || l >= NumLevels {
		return "?"
	}
	return levelNames[l]
}

// Label returns the combined form used in headers and trace meta lines, e.g. "L3/structural".
func (l Level) Label() string { return l.String() + "/" + l.Name() }

// ParseLevel accepts "L0".."L4".
func ParseLevel(s string) (Level, error) {
	if len(s) == 2 && s[0] == 'L' && s[1] >= '0' && s[1] <= '4' {
		return Level(s[1] - '0'), nil
	}
	return 0, fmt.Errorf("%q is not a level (L0..L4)", s)
}

// Buckets holds the inclusive upper edge of levels L0..L3; L4 is everything above Edges[L3].
type Buckets struct {
	Edges [NumLevels - 1]Half
}

// Level buckets a raw score.
func (b Buckets) Level(raw Half) Level {
	for i, edge := range b.Edges {
		if raw <= edge {
			return Level(i)
		}
	}
	return L4
}

// Gap buckets a raw score and says how far it lies below the upper edge of its level: 0 on the edge,
// so a raise of more than the gap lifts it to the next level. ok is false at L4, which has no edge
// above. One definition for the evolve's rescoring and the explore rule's near-edge tasks.
func (b Buckets) Gap(raw Half) (lv Level, gap Half, ok bool) {
	lv = b.Level(raw)
	if lv == L4 {
		return lv, 0, false
	}
	return lv, b.Edges[lv] - raw, true
}

// Cost is the replay cost matrix: the price of a level too low and too high, per level missed, and of a
// correct level whose other checked item (dispatch source, top-2 signals, fragment) is wrong.
type Cost struct {
	TooLow    int
	TooHigh   int
	OtherItem int
}

// BreakEven is the excess regression rate at which raising levels starts to pay under these losses
// (docs/decisions.md#loss-rule): lifting `lifted` low-side tasks (by liftedLevels levels in all) avoids
// e·lifted regressions at excess e, and each raised level is too high unless its task needed it, so the
// gain e·(too_low·lifted + too_high·liftedLevels) − too_high·allLevels is linear in e. It is 1 when no
// excess up to 1 makes the gain positive. One definition for the evolve's loss rule and the watch.
func (c Cost) BreakEven(lifted, liftedLevels, allLevels float64) float64 {
	slope := float64(c.TooLow)*lifted + float64(c.TooHigh)*liftedLevels
	cost := float64(c.TooHigh) * allLevels
	if slope <= 0 || cost >= slope {
		return 1
	}
	return cost / slope
}

// Schema is the weights file schema this build reads and writes.
const Schema = 1

// Weights is one immutable weights version.
type Weights struct {
	Schema  int
	Version int // 1, 2, …; 0 for a candidate not yet stored
	Parent  int // 0 for the first version
	Created time.Time
	Reason  string
	// Evidence is a short free-text summary for the header comment (e.g. "3 flagged tasks, suite 0.000 -> 0.000").
	Evidence string
	Signals  [NumSignals]Half
	Buckets  Buckets
	Cost     Cost
}

// Score sums the weights of the fired signals.
func (w *Weights) Score(fired []Signal) Half {
	var sum Half
	for _, s := range fired {
		sum += w.Signals[s]
	}
	return sum
}

// Level buckets a raw score with this version's edges.
func (w *Weights) Level(raw Half) Level { return w.Buckets.Level(raw) }

// VersionName formats a version number as it appears in file names and meta lines: "v0001".
func VersionName(v int) string { return fmt.Sprintf("v%04d", v) }

// ParseVersionName accepts "v0001", "v1", "1".
func ParseVersionName(s string) (int, error) {
	t := s
	if len(t) > 0 && (t[0] == 'v' || t[0] == 'V') {
		t = t[1:]
	}
	n, err := strconv.Atoi(t)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a weights version (expected v0001, v2, …)", s)
	}
	return n, nil
}
