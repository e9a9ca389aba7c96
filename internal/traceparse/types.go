package traceparse

import (
	"slices"
	"time"

	"github.com/ldd-tools/tune/internal/weights"
)

// Warning is a line that was skipped (Skipped) or kept with a caveat. Line counts from the start of
// the file, or from the tail start for a tail read (see the package doc); Offset is always the
// absolute byte offset of the line.
type Warning struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Offset  int64  `json:"offset"`
	Reason  string `json:"reason"`
	Skipped bool   `json:"skipped"`
}

// LineCounts accounts for every physical line read: Read == Parsed + Skipped. Blank and Comment are
// the part of Skipped that is harmless and has no warning.
type LineCounts struct {
	Read    int `json:"read"`
	Parsed  int `json:"parsed"`
	Skipped int `json:"skipped"`
	Blank   int `json:"blank"`
	Comment int `json:"comment"`
}

// Add sums two counts (for several logs).
func (c *LineCounts) Add(o LineCounts) {
	c.Read += o.Read
	c.Parsed += o.Parsed
	c.Skipped += o.Skipped
	c.Blank += o.Blank
	c.Comment += o.Comment
}

// Entry kinds.
const (
	KindMeta  = "meta"
	KindIter  = "iter"
	KindClose = "close"
	KindEpoch = "epoch"
)

// Entry is one parsed line. Fields holds the key=value pairs as the reference reader produces them
// (including its synthesised level, level_name, level_chosen, baseline and k=0), plus the legacy
// aliases the package doc lists. The typed fields below are this package's reading of them.
type Entry struct {
	Line      int    `json:"line"`
	Offset    int64  `json:"offset"`
	Timestamp string `json:"timestamp"`
	Loop      string `json:"loop"`
	Kind      string `json:"kind"` // meta | iter | close | epoch
	Fields    Fields `json:"fields"`
	// K is the iteration index (k=, else r=/o=/phase=); nil when absent or not an integer.
	K        *int `json:"k"`
	Baseline bool `json:"baseline"`
	// Epoch is the iteration's epoch= value, else the last epoch line seen in its task, else 0.
	Epoch int `json:"epoch"`
	// Loss is loss= (or legacy loss_norm=); nil when absent or not a finite number.
	Loss *float64 `json:"loss"`
	// DeltaLoss is Loss minus the previous known Loss of the same task, loop and epoch (rounded to 1e-6);
	// nil for a baseline, for the first iteration of a group, or when either loss is unknown.
	DeltaLoss *float64 `json:"delta_loss"`
}

// Departure is a line of a task that this package reads otherwise than the reference reader does.
// Line is numbered as Task.Line is; Offset is absolute.
type Departure struct {
	Line   int
	Offset int64
	Reason string
}

// Task is one meta-delimited slice of a log (or the legacy slice before the first meta line).
type Task struct {
	Source string `json:"source"`
	// Line is the meta line (the first line of a legacy task); Offset its absolute byte offset.
	Line          int    `json:"line"`
	Offset        int64  `json:"offset"`
	MetaTimestamp string `json:"meta_timestamp"`
	// MetaTime is MetaTimestamp parsed as RFC 3339; zero when it is not (the task then stays out of
	// time windows: docs/decisions.md#trace-logs).
	MetaTime time.Time `json:"-"`
	// Legacy marks the synthetic task of the lines before the first meta line; it has no level.
	Legacy bool `json:"legacy"`
	// Level is "L0".."L4" or "" when unknown.
	Level string `json:"level"`
	// Dispatch is the short form auto|explicit|bump|override-down; unknown values pass through; "" none.
	Dispatch   string `json:"dispatch"`
	Creativity string `json:"creativity"`
	// Signals is nil when the meta line has no signals= field (HasSignals false).
	Signals    []weights.SignalWeight `json:"signals"`
	HasSignals bool                   `json:"-"`
	// WeightsVersion is the meta weights= field (e.g. "v0002"), "" when absent.
	WeightsVersion string `json:"weights_version"`
	// Title is task=; a legacy task gets the reference's "(legacy-trace, no meta header)".
	Title string `json:"task"`
	// Loops is the declared loops= list; LoopsUsed the loops of its iterations in order of appearance.
	Loops     []string `json:"loops"`
	LoopsUsed []string `json:"loops_used"`
	Closed    bool     `json:"closed"`
	// Terminal and LossFinal come from the last close line. Without a loss_final there, LossFinal is
	// the last iteration's loss (as the reference aggregator does); nil when that is unknown too.
	Terminal  string   `json:"terminal"`
	LossFinal *float64 `json:"loss_final"`
	// LossFinalFrom says where LossFinal came from: "close", "iteration" or "" (unknown).
	LossFinalFrom      string `json:"loss_final_from"`
	RegressionFollowed bool   `json:"regression_followed"`
	// RegressionOf is regression_of= (the meta timestamp of an earlier task), "" when absent.
	RegressionOf string `json:"regression_of"`
	// Explore, ExploreLevel and ExploreShare are the [explore] draw the meta line records (explore=,
	// explore_level=, explore_share=), "" (and left out of the JSON) when it records none: the arms
	// `tune explore` compares, so that an export can compare them too (the review of the writing side).
	Explore      string `json:"explore,omitempty"`
	ExploreLevel string `json:"explore_level,omitempty"`
	ExploreShare string `json:"explore_share,omitempty"`
	// Files is the union of files= on any of its lines, sorted and deduplicated.
	Files []string `json:"files"`
	// Departures say, one line each, where this reading of the task departs from the reference
	// reader's (a stripped BOM, a level from level_chosen=, a line kept despite unbalanced quotes or
	// skipped where the reference reads it, …); empty when the reference reads the task the same way.
	// Reports that promise the reference's numbers count these tasks apart (docs/decisions.md#accuracy-beyond-reference).
	Departures []Departure `json:"-"`
	// CloseSkipped: its close is the incomplete last line, skipped here, which the reference reads and
	// counts the task closed by (tune accuracy lists such a task beside the reference's numbers).
	CloseSkipped bool `json:"-"`
	// Omitted is nil unless the task reached a bound of what one task keeps (MaxTaskEntries): it then
	// counts the entries (and departures, files) read but not kept (docs/decisions.md#bounded-memory-per-task).
	Omitted *Omitted `json:"omitted,omitempty"`
	// Meta is the meta line itself (zero for a legacy task).
	Meta Entry `json:"-"`
	// Entries are its iteration, close and epoch lines in file order.
	Entries []Entry `json:"iterations"`
}

// Tail records that a log was read from Offset rather than from its start: its line numbers count
// from 1 at that offset.
type Tail struct {
	File   string `json:"file"`
	Offset int64  `json:"offset"`
}

// Result is what a read returns: the tasks in file order, the line accounting, and the warnings.
type Result struct {
	Tasks    []Task     `json:"tasks"`
	Lines    LineCounts `json:"lines"`
	Warnings []Warning  `json:"warnings"`
	Tails    []Tail     `json:"tails,omitempty"`
}

// Loops are the loop names of the trace grammar a writer may declare in loops= and use on iteration
// lines (the legacy spellings architect and refinement are read as design and refine, never written).
var Loops = []string{"inner", "refine", "outer", "design", "cot"}

// IsLoop reports whether name is one of Loops.
func IsLoop(name string) bool { return slices.Contains(Loops, name) }

// Iterations counts the task's iteration lines, and those that are not baselines, the ones past its
// bound (Omitted) included.
func (t *Task) Iterations() (all, nonBaseline int) {
	for i := range t.Entries {
		if e := &t.Entries[i]; e.Kind == KindIter {
			all++
			if !e.Baseline {
				nonBaseline++
			}
		}
	}
	if o := t.Omitted; o != nil {
		all += o.Iterations
		nonBaseline += o.Iterations - o.Baselines
	}
	return all, nonBaseline
}
