package scorer

import (
	"sort"
	"strings"

	"github.com/ldd-tools/tune/internal/weights"
)

// Dispatch sources, as the reference JSON prints them (the long form).
const (
	SourceAuto         = "auto-level"
	SourceExplicit     = "user-explicit"
	SourceBump         = "user-bump"
	SourceOverrideDown = "user-override-down"
	// SourceExplore is tune's own: an auto task near a bucket edge that the [explore] draw dispatched
	// one level above the scorer's (docs/decisions.md#explore-a-randomized-share-of-near-edge-tasks). The
	// reference never writes it; its readers pass an unknown dispatch through.
	SourceExplore = "explore"
)

// ClampedFromL4 is the reference clamp reason (v0.11+: the creativity is already in the header).
const ClampedFromL4 = "clamped from L4"

// Result is the reference scorer's decision for one prompt under one weights version.
type Result struct {
	RawScore         weights.Half
	AutoLevel        weights.Level // after the clamp, as the reference reports it
	FinalLevel       weights.Level
	Creativity       string // conservative|standard|inventive
	DispatchSource   string // auto-level|user-explicit|user-bump|user-override-down
	Signals          []weights.SignalWeight
	ClampReason      *string
	OverrideFragment *string
	DispatchHeader   string
	WeightsVersion   int
}

// Score scores text from scratch: Detect, then Detection.Score.
func Score(text string, history []string, w *weights.Weights) Result {
	return Detect(text, history).Score(w)
}

// Levels is the numeric core of Score: raw score, the (clamped) auto level, the final level after the
// override, and whether the clamp fired. It allocates nothing; replay loops that only compare levels
// use it instead of Score.
func (d *Detection) Levels(w *weights.Weights) (raw weights.Half, auto, final weights.Level, clamped bool) {
	raw = w.Score(d.Fired)
	auto = w.Level(raw)
	// The clamp happens before overrides, so a bump starts from L3.
	if Clamps(auto, d.Creativity) {
		auto, clamped = weights.L3, true
	}
	final = auto
	if o := d.Override; o != nil {
		if o.Absolute() {
			final = o.Level
		} else {
			final = min(max(auto+weights.Level(o.Delta), weights.L0), weights.L4) // bumps saturate at L4
		}
	}
	return raw, auto, final, clamped
}

// Clamps says whether a task whose signals fall in bucket runs one level lower (docs/decisions.md#scorer):
// an L4 bucket without an inventive or conservative cue runs at L3; the reference clamps only
// L4+standard. creativity "" is a task whose creativity was not recorded (the trace writes it only from
// L3 on) and counts as standard, the scorer's default: every reader of recorded tasks that re-scores
// them under other weights asks this, so that a task it moves into the L4 bucket stays where it would run.
func Clamps(bucket weights.Level, creativity string) bool {
	return bucket == weights.L4 && (creativity == Standard || creativity == "")
}

// RunsAt is the level a recorded task whose signals fall in bucket runs at: L3 in the L4 bucket when the
// clamp holds it (clamped: RanClamped of its record), the bucket otherwise. Readers that re-score
// recorded tasks under other weights (the loss rule, the watch) ask this.
func RunsAt(bucket weights.Level, clamped bool) weights.Level {
	if clamped && Clamps(bucket, Standard) {
		return weights.L3
	}
	return bucket
}

// RanClamped says whether a recorded task, dispatched at level with creativity, is one the clamp holds at
// L3 in the L4 bucket: its creativity is standard or not recorded (Clamps), and its record does not show
// it running at L4. Readers that re-score recorded tasks under other weights ask this.
func RanClamped(level, creativity string) bool {
	return Clamps(weights.L4, creativity) && level != weights.L4.String()
}

// Score turns the detection into the reference result under w: no text work, only sums and comparisons.
func (d Detection) Score(w *weights.Weights) Result {
	raw, auto, final, clamped := d.Levels(w)
	r := Result{
		RawScore:       raw,
		AutoLevel:      auto,
		FinalLevel:     final,
		Creativity:     d.Creativity,
		DispatchSource: SourceAuto,
		Signals:        make([]weights.SignalWeight, len(d.Fired)),
		WeightsVersion: w.Version,
	}
	for i, s := range d.Fired {
		r.Signals[i] = weights.SignalWeight{Name: s.String(), Weight: w.Signals[s]}
	}
	r.DispatchSource = d.DispatchSource(auto, final)
	if o := d.Override; o != nil {
		r.OverrideFragment = &o.Fragment
	} else if clamped {
		// clamp_reason is reported only when no override applies.
		reason := ClampedFromL4
		r.ClampReason = &reason
	}
	r.DispatchHeader = r.header()
	return r
}

// Explored is r dispatched one level higher by the explore draw: the final level one above the auto
// level, the dispatch source SourceExplore, and the header saying so ("Dispatched: L2/deliberate
// (explore from L1; signals: …)"). r must be an auto dispatch below L4 (explore.Draw checks it).
func (r Result) Explored() Result {
	r.FinalLevel = r.AutoLevel + 1
	r.DispatchSource = SourceExplore
	r.DispatchHeader = r.header()
	return r
}

// DispatchSource is the reference's dispatch source (long form) for a detection scored at auto and final:
// the only weight-dependent part is that an explicit level below the scorer's is an override-down.
func (d *Detection) DispatchSource(auto, final weights.Level) string {
	o := d.Override
	switch {
	case o == nil:
		return SourceAuto
	case o.Kind == OverrideExplicit || o.Kind == OverrideModeAlias:
		if final < auto {
			return SourceOverrideDown
		}
		return SourceExplicit
	default: // max, natural max and every relative bump
		return SourceBump
	}
}

// Top2 returns the two leading fired signals under w, as the header orders them (larger absolute weight
// first, then by name), without building a Result; n is how many there are (0, 1 or 2).
func (d *Detection) Top2(w *weights.Weights) (top [2]weights.Signal, n int) {
	for _, s := range d.Fired {
		sw := weights.SignalWeight{Name: s.String(), Weight: w.Signals[s]}
		switch {
		case n == 0 || ahead(sw, weights.SignalWeight{Name: top[0].String(), Weight: w.Signals[top[0]]}):
			top[1], top[0] = top[0], s
		case n == 1 || ahead(sw, weights.SignalWeight{Name: top[1].String(), Weight: w.Signals[top[1]]}):
			top[1] = s
		default:
			continue
		}
		n = min(n+1, 2)
	}
	return top, n
}

// TopSignals returns the n signals with the largest absolute weight, ties broken by name.
func (r *Result) TopSignals(n int) []weights.SignalWeight {
	top := append([]weights.SignalWeight(nil), r.Signals...)
	sort.SliceStable(top, func(i, j int) bool { return ahead(top[i], top[j]) })
	if len(top) > n {
		top = top[:n]
	}
	return top
}

// top2 is TopSignals(2) without allocating: the indexes of the two leading signals, -1 when absent.
func (r *Result) top2() (first, second int) {
	first, second = -1, -1
	for i := range r.Signals {
		switch {
		case first < 0 || ahead(r.Signals[i], r.Signals[first]):
			first, second = i, first
		case second < 0 || ahead(r.Signals[i], r.Signals[second]):
			second = i
		}
	}
	return first, second
}

// ahead orders signals as the reference's top_signals: larger absolute weight first, then by name.
func ahead(a, b weights.SignalWeight) bool {
	if x, y := abs(a.Weight), abs(b.Weight); x != y {
		return x > y
	}
	return a.Name < b.Name
}

func abs(h weights.Half) weights.Half {
	if h < 0 {
		return -h
	}
	return h
}

// header renders the v0.11+ dispatch header, one line:
//
//	Dispatched: L<n>/<name>[ · creativity=<c>] (signals: a=+3, b=+2)[ [clamped from L4]]
//	Dispatched: L<n>/<name>[ · creativity=<c>] (user-explicit; scorer proposed L<m>)
//	Dispatched: L<n>/<name>[ · creativity=<c>] (user-bump from L<m>, fragment: "<fragment>")
//	Dispatched: L<n>/<name>[ · creativity=<c>] (user-override-down from L<m>). User accepts loss risk.
//
// The creativity part appears only at L3/L4.
func (r *Result) header() string {
	var b strings.Builder
	b.Grow(96)
	b.WriteString("Dispatched: ")
	b.WriteString(r.FinalLevel.Label())
	if r.FinalLevel >= weights.L3 {
		b.WriteString(" · creativity=")
		b.WriteString(r.Creativity)
	}
	switch r.DispatchSource {
	case SourceExplicit:
		b.WriteString(" (user-explicit; scorer proposed ")
		b.WriteString(r.AutoLevel.String())
		b.WriteString(")")
	case SourceBump:
		b.WriteString(" (user-bump from ")
		b.WriteString(r.AutoLevel.String())
		b.WriteString(`, fragment: "`)
		// The reference strips the quotes around the fragment (str.strip('"')) and adds its own.
		b.WriteString(strings.Trim(*r.OverrideFragment, `"`))
		b.WriteString(`")`)
	case SourceOverrideDown:
		b.WriteString(" (user-override-down from ")
		b.WriteString(r.AutoLevel.String())
		b.WriteString("). User accepts loss risk.")
	default:
		b.WriteString(" (")
		if r.DispatchSource == SourceExplore {
			b.WriteString("explore from ")
			b.WriteString(r.AutoLevel.String())
			b.WriteString("; ")
		}
		b.WriteString("signals: ")
		first, second := r.top2()
		for i, k := range [2]int{first, second} {
			if k < 0 {
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(r.Signals[k].Name)
			b.WriteString("=")
			b.WriteString(r.Signals[k].Weight.String())
		}
		b.WriteString(")")
		if r.ClampReason != nil {
			b.WriteString(" [")
			b.WriteString(*r.ClampReason)
			b.WriteString("]")
		}
	}
	return b.String()
}
