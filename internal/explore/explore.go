// Package explore is the [explore] setting of tune.toml: a small, recorded share of near-edge tasks that
// `tune score --log` dispatches one level above the scorer's, so that the effect of a level can be
// measured by a randomized comparison instead of inferred (docs/decisions.md#explore-a-randomized-share-of-near-edge-tasks).
//
// It is linked into the light `tune` binary (tune score), so it holds only the config, the near-edge
// rule, the draw and the meta-line fields; the analysis of the two arms is internal/explore/compare.
package explore

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ldd-tools/tune/internal/project"
	"github.com/ldd-tools/tune/internal/scorer"
	"github.com/ldd-tools/tune/internal/tomlbound"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// Config is the [explore] table of tune.toml.
type Config struct {
	// Share is the probability that a near-edge task is dispatched one level higher; 0 (the default)
	// turns exploration off.
	Share float64 `toml:"share" json:"share"`
	// Margin is how far, in score points, below the upper edge of its level a task may lie and still be
	// near the edge: a task is near when a raise of Margin points would lift it to the next level.
	// 0 means the default, DefaultMargin.
	Margin float64 `toml:"margin" json:"margin"`
}

const (
	// MaxShare bounds Share: the explore arm spends a level more on every task it takes, so it stays a
	// small share of the near-edge tasks.
	MaxShare = 0.2
	// DefaultMargin: the tasks a +1 step would lift (on the edge, or half a point below it).
	DefaultMargin = 1.0
	// MaxMargin bounds Margin: further from the edge a task is not "near" any more.
	MaxMargin = 5.0
)

// Keys is the sentence errors use to name the table's keys.
const Keys = "[explore] takes share (0 to 0.2, 0 = off) and margin (0.5 to 5 score points, in halves)"

// WithDefaults fills a zero Margin.
func (c Config) WithDefaults() Config {
	if c.Margin == 0 {
		c.Margin = DefaultMargin
	}
	return c
}

// On reports whether exploration is on.
func (c Config) On() bool { return c.Share > 0 }

// check validates the table's values; marginSet says the file wrote margin (a 0 written is refused,
// since 0 reads as the default).
func (c Config) check(marginSet bool) error {
	share, margin := []string{"explore", "share"}, []string{"explore", "margin"}
	if !(c.Share >= 0 && c.Share <= MaxShare) { // NaN fails both
		return &tomlbound.KeyError{Key: share, Msg: fmt.Sprintf("explore.share = %v: want a probability between 0 (off) and %v", c.Share, MaxShare)}
	}
	switch {
	case c.Margin == 0 && marginSet:
		return &tomlbound.KeyError{Key: margin, Msg: "explore.margin = 0 would be read as the default (1): leave the key out, or set a positive value"}
	case !(c.Margin >= 0 && c.Margin <= MaxMargin):
		return &tomlbound.KeyError{Key: margin, Msg: fmt.Sprintf("explore.margin = %v: want score points between 0.5 and %v", c.Margin, MaxMargin)}
	case c.Margin*2 != math.Trunc(c.Margin*2):
		return &tomlbound.KeyError{Key: margin, Msg: fmt.Sprintf("explore.margin = %v: want a multiple of 0.5 (scores move in half points)", c.Margin)}
	}
	return nil
}

// ParseConfig reads the [explore] table of a tune.toml's bytes; other tables are left to their readers.
// path names the file in errors. A file without the table gives the zero Config (off).
func ParseConfig(path string, data []byte) (Config, error) {
	var doc struct {
		Explore Config `toml:"explore"`
	}
	md, err := tomlbound.Decode(data, &doc)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	for _, k := range md.Undecoded() {
		if len(k) > 0 && k[0] == "explore" {
			return Config{}, fmt.Errorf("config %s: unknown key %s (%s)", path, k, Keys)
		}
	}
	if err := doc.Explore.check(md.IsDefined("explore", "margin")); err != nil {
		return Config{}, fmt.Errorf("config %s: %w", tomlbound.Where(path, data, err), err)
	}
	return doc.Explore, nil
}

// ReadConfig reads the [explore] table that applies in directory wd: the file TUNE_CONFIG names
// (config, when not empty; it must exist), else the tune.toml of the project wd lies in (the nearest
// one above, project.FindRoot); outside a project exploration is off.
func ReadConfig(wd, config string) (Config, error) {
	path := config
	if path == "" {
		root, err := project.FindRoot(wd)
		if err != nil || root == "" {
			return Config{}, err
		}
		path = filepath.Join(root, project.ConfigFile)
	}
	// A pull request can replace tune.toml with a FIFO, a device or a TOML bomb: read as every other
	// reader of it does (docs/decisions.md#hostile-files-issue-25).
	data, err := project.ReadConfig(path, config != "")
	if errors.Is(err, fs.ErrNotExist) && config == "" {
		if _, lerr := os.Lstat(path); errors.Is(lerr, fs.ErrNotExist) {
			return Config{}, nil // removed between the search and the read
		}
	}
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return ParseConfig(path, data)
}

// Arm is the arm of the comparison a near-edge task was drawn into.
type Arm string

const (
	// Raised tasks were dispatched one level above the scorer's (dispatch=explore).
	Raised Arm = "raised"
	// Control tasks were near an edge too, but dispatched at the scorer's level (dispatch=auto).
	Control Arm = "control"
)

// The meta-line fields that record a draw, after loops= among the extras (ldd-reference.md §1.4: the
// reference's readers ignore them): the arm, the level the scorer gave, and the share the draw was made
// with (a project that changes its share is then compared within each share, as its rates may drift
// meanwhile).
const (
	FieldArm   = "explore"
	FieldLevel = "explore_level"
	FieldShare = "explore_share"
)

// Near says whether a scorer result is a near-edge task the draw may raise: an auto dispatch (no user
// override) below L4, not clamped, whose raw score lies less than margin points below the upper edge of
// its level (a raise of margin points lifts it), and whose next level the clamp would not take back
// (L4 at standard creativity runs at L3, so an L3 task at standard creativity is never raised).
func Near(r *scorer.Result, w *weights.Weights, margin float64) bool {
	if r.DispatchSource != scorer.SourceAuto || r.ClampReason != nil {
		return false
	}
	lv, gap, ok := w.Buckets.Gap(r.RawScore)
	if !ok || lv != r.AutoLevel || r.FinalLevel != r.AutoLevel {
		return false
	}
	if scorer.Clamps(lv+1, r.Creativity) { // raised into the L4 bucket, it would still run at L3
		return false
	}
	return gap.Float() < margin
}

// Unit is the draw's uniform number in [0, 1) for a task: the first 53 bits of sha256(meta timestamp,
// NUL, title). It depends on the task's recorded data only, so the same line always draws the same arm
// and anyone can recompute it from the log; no global random state is read.
func Unit(stamp, title string) float64 {
	h := sha256.New()
	h.Write([]byte(stamp))
	h.Write([]byte{0})
	h.Write([]byte(title))
	var sum [sha256.Size]byte
	return float64(binary.BigEndian.Uint64(h.Sum(sum[:0]))>>11) / (1 << 53)
}

// Draw decides the arm of a scored task: none (ok false) when exploration is off or the task is not
// near an edge; else Raised with probability Share, Control otherwise. stamp is the meta timestamp
// as the line will hold it and title the task= title.
func (c Config) Draw(r *scorer.Result, w *weights.Weights, stamp, title string) (arm Arm, ok bool) {
	if !c.On() || !Near(r, w, c.WithDefaults().Margin) {
		return "", false
	}
	if Unit(stamp, title) < c.Share {
		return Raised, true
	}
	return Control, true
}

// Apply records a draw made under c: the result to dispatch (Raised: one level higher, dispatch explore)
// and the meta-line fields, added to extra (created when nil).
func (c Config) Apply(r scorer.Result, arm Arm, extra map[string]string) (scorer.Result, map[string]string) {
	if extra == nil {
		extra = map[string]string{}
	}
	extra[FieldArm], extra[FieldLevel] = string(arm), r.AutoLevel.String()
	extra[FieldShare] = strconv.FormatFloat(c.Share, 'g', -1, 64)
	if arm == Raised {
		r = r.Explored()
	}
	return r, extra
}

// Recorded is what a task's meta line says of a draw.
type Recorded struct {
	Arm Arm
	// Level is the level the scorer gave (explore_level=); the raised task ran one above it.
	Level weights.Level
	// Share is the share the draw was made with (explore_share=), as written; "" when the line does
	// not say.
	Share string
}

// ErrInconsistent marks an explore= record that its own line contradicts.
var ErrInconsistent = errors.New("inconsistent explore record")

// RecordOf reads the draw a task's meta line records: ok is false for a task without explore=; an
// error says what contradicts it (an unknown arm, a bad level, a raised task not dispatched explore
// one level above explore_level=, a control task not dispatched auto at it). Such a task is in
// neither arm.
func RecordOf(t *traceparse.Task) (rec Recorded, ok bool, err error) {
	arm, has := t.Meta.Fields.Get(FieldArm)
	if !has {
		return Recorded{}, false, nil
	}
	bad := func(format string, args ...any) (Recorded, bool, error) {
		return Recorded{}, true, fmt.Errorf("%w: %s", ErrInconsistent, fmt.Sprintf(format, args...))
	}
	lv, err := weights.ParseLevel(t.Meta.Fields.Value(FieldLevel))
	if err != nil || lv == weights.L4 {
		return bad("%s=%q is not a level L0..L3", FieldLevel, t.Meta.Fields.Value(FieldLevel))
	}
	ran, err := weights.ParseLevel(t.Level)
	if err != nil {
		return bad("no level on the meta line")
	}
	switch Arm(arm) {
	case Raised:
		if t.Dispatch != scorer.SourceExplore || ran != lv+1 {
			return bad("explore=raised at %s with dispatch=%s, %s=%s (want dispatch=explore one level above)", t.Level, t.Dispatch, FieldLevel, lv)
		}
	case Control:
		if t.Dispatch != "auto" || ran != lv {
			return bad("explore=control at %s with dispatch=%s, %s=%s (want dispatch=auto at that level)", t.Level, t.Dispatch, FieldLevel, lv)
		}
	default:
		return bad("explore=%q is neither %s nor %s", arm, Raised, Control)
	}
	share, hasShare := t.Meta.Fields.Get(FieldShare)
	if v, err := strconv.ParseFloat(share, 64); hasShare && (err != nil || !(v > 0 && v <= MaxShare)) {
		return bad("%s=%q is not a share in (0, %v]", FieldShare, share, MaxShare)
	}
	return Recorded{Arm: Arm(arm), Level: lv, Share: share}, true, nil
}

// Edge names the edge between a level and the next ("L1→L2").
func Edge(lv weights.Level) string { return lv.String() + "→" + (lv + 1).String() }
