package evolve

import (
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// Detection is the result of the detect stages: logs → flagged → accumulated evidence → trigger →
// screen → loss rule → proposal.
type Detection struct {
	Window Window `json:"window"`
	// Median is the window median final loss when exactly one log was read (each log has its own, in
	// Window.Logs); nil otherwise or when no loss is known.
	Median *Num `json:"median_loss_final"`
	// Flagged are the flagged tasks of the windows and of the accumulated evidence (see InWindow and
	// Counted).
	Flagged   []Flagged   `json:"flagged"`
	Triggered bool        `json:"triggered"`
	Screen    []ScreenRow `json:"screen"`
	// Accumulated summarises the population the screen counted (docs/decisions.md#accumulated-evidence).
	Accumulated Accumulated `json:"accumulated"`
	// Gains are the changes the loss rule weighed with a positive expected gain, best first (the
	// proposal is the first within the drift bound); Beyond those the drift bound forbids.
	Gains  []Gain `json:"loss_rule"`
	Beyond []Gain `json:"beyond_drift,omitempty"`
	// Unpaid are, for each signal that passes the test but has no change that pays, its step nearest to
	// paying (the excess it was credited with, the break-even, how many more regressions it needs).
	Unpaid []Gain `json:"loss_rule_unpaid,omitempty"`
	// Proposal is the first change to try, nil when there is none.
	Proposal *Change `json:"proposal"`
	// Reason says why there is no proposal (or names the rule that produced it).
	Reason   string    `json:"reason"`
	Warnings []Warning `json:"warnings"`
	// EdgeTasks is how many flagged tasks sit exactly on the upper edge of their bucket (the edge the
	// bucket rule would move).
	EdgeTasks int `json:"edge_tasks"`
	// Population and Correction say what the screen compared and how it controls error.
	Population string `json:"population"`
	Correction string `json:"correction"`
	// Used lists the window tasks the evidence ledger names: left out of flagging, trigger and screen.
	Used []UsedTask `json:"ledger_used"`

	// screenTasks are the accumulated population (eligible or not), kept so that a loop can weigh
	// changes again once some flagged tasks are resolved.
	screenTasks population
	// pending are the eligible tasks not settled yet (Accumulated.Pending), as screen tasks: what a
	// change would lift among them is said beside what it needs (Gain.PendingLifted).
	pending population
	// states are what the next detection of each log may start from (States).
	states []*LogState
}

// Accumulated is the population of the accumulated evidence (docs/decisions.md#accumulated-evidence).
type Accumulated struct {
	// Horizon is how many later labelled tasks settle a task; SettleAfter how old a log's last task must
	// be for all of its tasks to settle.
	Horizon     int    `json:"horizon"`
	SettleAfter string `json:"settle_after"`
	// Eligible counts the settled eligible tasks the tables hold, Flagged the flagged ones among them;
	// Pending the eligible tasks not settled yet; BeforeWatermark the eligible tasks at or before the
	// watermark (evidence an applied change already spent); Tasks every auto closed settled task after
	// the watermark the loss rule weighs (at any level).
	Eligible        int `json:"eligible"`
	Flagged         int `json:"flagged"`
	Pending         int `json:"pending"`
	BeforeWatermark int `json:"before_watermark"`
	Tasks           int `json:"tasks"`
	// Watermark is the evidence_through of the last applied proposal ("" when none); Through the meta
	// time of the last settled task counted, what a proposal made from this evidence records.
	Watermark string `json:"evidence_after,omitempty"`
	Through   string `json:"evidence_through,omitempty"`
}

// withResolved is the detection as a later loop step sees it: the resolved flagged tasks (by taskKey)
// are left out of the flagged list and the trigger. The tables and their e-values are NOT recomputed:
// a run tests once, and every candidate any step tries is a member of that family
// (docs/decisions.md#accumulated-evidence). The proposal is left for Step to derive.
func (d *Detection) withResolved(resolved map[string]bool) *Detection {
	out := *d
	out.Flagged = make([]Flagged, 0, len(d.Flagged))
	for _, f := range d.Flagged {
		if !resolved[f.key()] {
			out.Flagged = append(out.Flagged, f)
		}
	}
	out.Screen = make([]ScreenRow, len(d.Screen))
	for s, r := range d.Screen {
		a := 0
		for _, f := range out.Flagged {
			if f.Counted && slices.Contains(f.Fired, weights.Signal(s)) {
				a++
			}
		}
		r.Consistent = consistent(a, countedFlagged(out.Flagged))
		out.Screen[s] = r
	}
	out.Triggered = triggered(out.Flagged, out.Screen)
	return &out
}

// triggered is the reason to look (docs/decisions.md#accumulated-evidence): at least TriggerThreshold
// low-side regressions in the windows (the seed's trigger), or a signal whose accumulated evidence
// passes with at least TriggerThreshold of its counted flagged carriers still low. Looks are free
// under the anytime-valid test, so the second reason costs no error; without it a project whose
// regressions are spread thinner than 3 in 20 tasks would never look at evidence that has long passed.
func triggered(flagged []Flagged, screen []ScreenRow) bool {
	if windowFlagged(flagged) >= TriggerThreshold {
		return true
	}
	for s, r := range screen {
		if r.Verdict != VerdictCandidate && r.Verdict != VerdictTied {
			continue
		}
		n := 0
		for _, f := range flagged {
			if f.Counted && slices.Contains(f.Fired, weights.Signal(s)) {
				n++
			}
		}
		if n >= TriggerThreshold {
			return true
		}
	}
	return false
}

// windowFlagged counts the flagged tasks in a window: the trigger.
func windowFlagged(fs []Flagged) int {
	n := 0
	for _, f := range fs {
		if f.InWindow {
			n++
		}
	}
	return n
}

func countedFlagged(fs []Flagged) int {
	n := 0
	for _, f := range fs {
		if f.Counted {
			n++
		}
	}
	return n
}

// DetectInput is what Detect needs.
type DetectInput struct {
	// Tasks are the tasks read from one or several logs, in file order per log (traceparse.ReadLast per log).
	Tasks []traceparse.Task
	// Stream, when set, is read instead of Tasks, once: the tasks of each log in file order, one log
	// after the other (a log's tasks together), none twice. A task is not kept once its evidence is
	// fixed, so a stream's tasks may be dropped as soon as the next one comes.
	Stream   iter.Seq[*traceparse.Task]
	Resolver Resolver
	// Exclude lists changes not to propose (a loop passes the ones it already tried).
	Exclude []Change
	// Now is the clock that settles the tasks of a quiet log (SettleAfter); zero reads every log as
	// ended (a finished history).
	Now time.Time
	// EvidenceAfter is the evidence watermark: the evidence_through of the last applied proposal. Tasks
	// at or before it were spent and never count again (zero: none).
	EvidenceAfter time.Time
	// Resume, by log, is what an earlier detection of the same logs under the same decision inputs kept
	// of each (Detection.States): a log found there is taken up where it stopped, and Stream must then
	// yield its tasks from that state's Offset on (docs/decisions.md#nightly-state).
	Resume map[string]*LogState
	// Origin and Parity, when given, make the proposal respect the drift bound and weigh the parity
	// prompts (Step passes them).
	Origin *weights.Weights
	Parity *Parity
	// Follow, when set, replaces the eligibility rule: the closed tasks with a known final loss it
	// accepts, at any level, are the ones whose regression evidence is followed, by the detection's
	// own rules (regression_followed, regression_of within the horizon, corroborated same-area
	// witnesses that speak for one task). Followed is then called once for each settled one, in log
	// order, with its evidence (none: it did not regress). tune explore compares its two arms this way
	// (docs/decisions.md#explore-a-randomized-share-of-near-edge-tasks); the screen and the proposal of
	// such a detection mean nothing.
	Follow   func(*traceparse.Task) bool
	Followed func(t *traceparse.Task, evidence []Evidence)
}

// StratumSpan is the length of the time blocks within a log in which the accumulated test fits its null
// apart (docs/decisions.md#evidence-per-log): 30 days, measured from the log's first unspent task.
const StratumSpan = 30 * 24 * time.Hour

// Detect runs the stages up to the proposal. It needs Resolver.Active. It reads the tasks once, in
// order, holding only the tasks whose evidence is still open (docs/decisions.md#flat-memory-issue-28).
func Detect(in DetectInput) *Detection {
	tasks := in.Stream
	if tasks == nil {
		tasks = groupedBySource(distinctTasks(in.Tasks))
	}
	d := newDetector(in)
	for t := range tasks {
		d.add(t)
	}
	return d.finish()
}

// distinctTasks drops a task read again: the same log line (source and meta line) with the same TaskKey.
// A log named twice under two spellings (a relative and an absolute path, both relabelled to one
// project-relative name) would otherwise enter the accumulated evidence twice, and a doubled table's
// e-value is about the square of the single one's: 3 flagged carriers beside 12 benign tasks, e ≈ 125,
// read twice give e ≈ 76 000 ≥ 450 (docs/decisions.md#accumulated-evidence).
func distinctTasks(tasks []traceparse.Task) []traceparse.Task {
	seen := make(map[string]bool, len(tasks))
	out := tasks[:0:0]
	for i := range tasks {
		k := taskKey(tasks[i].Source, tasks[i].Line) + "\x00" + TaskKey(&tasks[i])
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, tasks[i])
	}
	if len(out) == len(tasks) {
		return tasks
	}
	return out
}

// propose applies the loss rule (docs/decisions.md#loss-rule): among +1 and +2 on every candidate signal
// it takes the change with the largest expected gain within the drift bound. signalReverted is true when
// that change was measured and reverted, which opens the bucket rule: an edge with TriggerThreshold or
// more flagged tasks on it, when moving it has a positive expected gain. Without a candidate signal no
// edge moves either: the bucket rule spends the evidence a signal's test established.
func propose(det *Detection, parent, origin *weights.Weights, parity *Parity, exclude []Change, signalReverted bool) (*Change, int, string) {
	if !det.Triggered {
		return nil, 0, fmt.Sprintf("no trigger: %d low-side regression(s) in the window, %d needed, and no signal's accumulated evidence passes with %d of its regressions still low",
			windowFlagged(det.Flagged), TriggerThreshold, TriggerThreshold)
	}
	if tied := Tied(det.Screen); len(tied) > 0 {
		return nil, 0, fmt.Sprintf("no proposal: indistinguishable %s — their 2×2 tables over the accumulated evidence are identical, so the evidence cannot say which one is the signal",
			strings.Join(tied, ", "))
	}
	ranked, beyond, unpaid := rankChanges(det.Screen, det.screenTasks.cells, parent, origin, parity, exclude)
	for _, gs := range [][]Gain{ranked, beyond, unpaid} {
		for i := range gs {
			cand := gs[i].Change.Apply(*parent)
			gs[i].PendingLifted = int(raiseOf(parent, &cand, det.pending.cells).lifted)
		}
	}
	if !signalReverted {
		det.Gains, det.Beyond, det.Unpaid = ranked, beyond, unpaid
		if ranked == nil {
			det.Gains = []Gain{}
		}
		if len(ranked) > 0 {
			c := ranked[0].Change
			since := ""
			if day := det.Screen[c.Signal].EvidenceSince; day != "" {
				since = ", mostly on the tasks since " + day
			}
			why := fmt.Sprintf("%s passes the accumulated test (e %s ≥ %.0f%s) and the loss rule prefers %s", c.Signal,
				formatE(float64(det.Screen[c.Signal].EValue)), Threshold, since, ranked[0])
			if len(ranked) > 1 {
				why += "; alternatives: " + gainsSummary(ranked[1:])
			}
			return &c, 0, why
		}
		if len(beyond) > 0 {
			// The only changes worth making cross the drift bound: Step stops on it and escalates.
			c := beyond[0].Change
			return &c, 0, fmt.Sprintf("the only change the loss rule prefers crosses the drift bound: %s", beyond[0])
		}
	}
	if !signalReverted {
		return nil, 0, noProposalReason(det, exclude, unpaid)
	}
	edge, onEdge, ok := pickEdge(det.Flagged, parent, exclude)
	if ok {
		g := lossGain(edge, changeExcess(edge, parent, det.screenTasks.cells), parent, det.screenTasks.cells, parity)
		if float64(g.Net) > 0 {
			return &edge, onEdge, fmt.Sprintf("the signal change was reverted, and %d flagged tasks score exactly on the upper edge of %s (%s)", onEdge, edge.Edge, g)
		}
		return nil, onEdge, fmt.Sprintf("the signal change was reverted; %d flagged tasks score exactly on the upper edge of %s, but moving it has no positive expected gain (%s)", onEdge, edge.Edge, g)
	}
	return nil, onEdge, fmt.Sprintf("the signal change was reverted, and %d flagged task(s) score exactly on a bucket edge, %d needed to move it", onEdge, TriggerThreshold)
}

// formatE prints an e-value compactly: "12.3", "4.1e+03".
func formatE(e float64) string {
	if e >= 1e4 || (e > 0 && e < 0.01) {
		return fmt.Sprintf("%.2g", e)
	}
	return fmt.Sprintf("%.1f", e)
}

// maxReasonTitles bounds the flagged tasks a reason names. The reason is a headline (nightly's
// outcome line, the proposal's reason): with 20 titles a stalled night's summary opened with ~35
// terminal lines of them. The whole list is detect's flagged table, --json "flagged" and the EVAL
// report's flagged section.
const maxReasonTitles = 3

// noProposalReason says why the loss rule found no change: which signals pass the accumulated test
// (and why their changes do not pay: unpaid, the step of each nearest to paying; or that they were
// tried), and for the others how far they are from it; then the flagged tasks counted.
func noProposalReason(det *Detection, exclude []Change, unpaid []Gain) string {
	var tried, short []string
	for s, r := range det.Screen {
		sig := weights.Signal(s)
		switch {
		case r.Verdict == VerdictCandidate && excluded(exclude, Change{Kind: weights.ChangeSignal, Signal: sig}):
			tried = append(tried, r.Signal)
		case r.A > 0 && r.Verdict == VerdictUnderpowered:
			short = append(short, fmt.Sprintf("%s is underpowered (a=%d b=%d c=%d d=%d: even every carrier flagged would not reach %.0f)", r.Signal, r.A, r.B, r.C, r.D, Threshold))
		case r.A > 0 && r.Verdict != VerdictCandidate && r.MoreNeeded > 0:
			short = append(short, fmt.Sprintf("%s e %s < %.0f, %d more regression(s) carrying it needed", r.Signal, formatE(float64(r.EValue)), Threshold, r.MoreNeeded))
		}
	}
	var unpaidWhy []string
	weighed := map[weights.Signal]bool{}
	for _, g := range unpaid {
		weighed[g.Change.Signal] = true
		unpaidWhy = append(unpaidWhy, fmt.Sprintf("%s (e %s; %s)", g.Change.Signal, formatE(float64(det.Screen[g.Change.Signal].EValue)), g))
	}
	for s, r := range det.Screen {
		if sig := weights.Signal(s); r.Verdict == VerdictCandidate && !weighed[sig] && !excluded(exclude, Change{Kind: weights.ChangeSignal, Signal: sig}) {
			unpaidWhy = append(unpaidWhy, fmt.Sprintf("%s (e %s; no step within the drift bound)", r.Signal, formatE(float64(r.EValue))))
		}
	}
	var parts []string
	switch {
	case len(tried) > 0:
		parts = append(parts, "every passing signal was tried and reverted, or is refused on this version ("+strings.Join(tried, ", ")+")")
	case len(unpaidWhy) > 0:
		parts = append(parts, "the signals that pass the accumulated test have no change with a positive expected gain under the stated losses: "+strings.Join(unpaidWhy, "; "))
	case len(short) > 0:
		parts = append(parts, "no signal passes the accumulated test: "+strings.Join(short, "; "))
	default:
		parts = append(parts, "no signal passes the accumulated test: no flagged task carries a signal more often than the others")
	}
	var titles []string
	for i, f := range det.Flagged {
		if i == maxReasonTitles {
			// A year of an effect never applied holds thousands (a 610 KB reason line, i28-cost's 64 MB log).
			titles = append(titles, fmt.Sprintf("… %d more (tune detect lists them all)", len(det.Flagged)-i))
			break
		}
		titles = append(titles, fmt.Sprintf("%s %q", f.MetaTimestamp, f.Title))
	}
	// Two populations, each named: the settled ones the test counted, and the list, which also holds the
	// windows' flagged tasks not settled yet (a reader saw "3 flagged" beside eight titles).
	return "no proposal: " + strings.Join(parts, "; ") + fmt.Sprintf(" (%d settled eligible task(s), %d of them flagged)", det.Accumulated.Eligible, det.Accumulated.Flagged) +
		fmt.Sprintf("; flagged in the windows or settled (%d): ", len(det.Flagged)) + strings.Join(titles, "; ")
}

// StepInput is one evolution step's input. A loop calls Step repeatedly: it passes the tasks once (or the
// Detection of the first call, which does not depend on the weights), the current parent, and the changes
// it already tried.
type StepInput struct {
	// Tasks are read by the caller (traceparse.ReadLast per log); ignored when Detected is set. Stream,
	// when set, is read instead, and Resume taken up (see DetectInput).
	Tasks  []traceparse.Task
	Stream iter.Seq[*traceparse.Task]
	Resume map[string]*LogState
	// Detected reuses an earlier Detection (window, flagged tasks with their signals, screen) instead of
	// re-reading Tasks; the proposal is re-derived for Parent.
	Detected *Detection
	// Parent is the weights version the step measures against.
	Parent weights.Weights
	// WeightsFor resolves meta weights= for re-detected tasks (optional; Parent is the fallback).
	WeightsFor func(version string) (*weights.Weights, bool)
	// Detect overrides re-detection of task titles (optional, tests).
	Detect func(title string) []weights.Signal
	// Suite is the prepared fixture suite the decision is measured on; Holdout the frozen split, read
	// only after the decision.
	Suite   *Suite
	Holdout *Suite
	// HoldoutRule is how a change that raises the holdout's loss is decided ("": HoldoutVeto).
	HoldoutRule HoldoutRule
	// Exclude lists changes not to propose again.
	Exclude []Change
	// Parity prices a candidate on real prompts (nil: not priced); ParityBudget is the most too-high cost
	// a change may add (0 takes DefaultParityBudget).
	Parity       *Parity
	ParityBudget float64
	// ParityBase is what the parity price compares with: the active version the run started from (nil:
	// Parent), so that a run's steps are priced together.
	ParityBase *weights.Weights
	// Origin is the first version (v0001): no weight may move more than DriftBound points away from it
	// without a human. Nil skips the bound.
	Origin *weights.Weights
	// InLoop marks a step of the evolve loop: its change is kept when the witness falls, and the loop
	// judges the whole run (a lift out of L0/L1). A single step (tune propose) must lift a flagged task
	// out of L0/L1 itself.
	InLoop bool
	// Used is the evidence ledger (see Resolver.Used); ignored when Detected is set.
	Used map[string]string
	// Now and EvidenceAfter mean what they mean in DetectInput; ignored when Detected is set.
	Now           time.Time
	EvidenceAfter time.Time
}

// StepResult is everything the step found, tried and decided.
type StepResult struct {
	*Detection
	// Attempts are every measured change in order (full step, half step, then the bucket rule).
	Attempts []Attempt `json:"attempts"`
	// Decision is accept, halve, revert or none (no trigger or no proposal).
	Decision weights.Decision `json:"decision"`
	// Change is the accepted change (nil unless Decision is accept or halve); Tried the first change
	// measured (nil when none was).
	Change *Change `json:"change"`
	Tried  *Change `json:"tried"`
	// Candidate is Parent with Change applied (Parent itself when nothing was accepted).
	Candidate       weights.Weights `json:"-"`
	SuiteLossBefore Num             `json:"suite_loss_before"`
	SuiteLossAfter  Num             `json:"suite_loss_after"`
	// Before and After are the suite replays under Parent and Candidate.
	Before Replay `json:"-"`
	After  Replay `json:"-"`
	// Lifted are the meta timestamps of the flagged tasks the candidate lifts out of the low side (the
	// parent scores them L0/L1 from their signals, the candidate L2 or higher).
	Lifted  []string `json:"lifted"`
	Holdout Holdout  `json:"holdout"`
	// HoldoutRule is the rule the holdout was decided by (StepInput.HoldoutRule; "" is the veto).
	HoldoutRule HoldoutRule `json:"holdout_rule,omitempty"`
	// Drift is set when the change would move a weight more than DriftBound points away from the first
	// version: the step measured nothing and the caller escalates (exit 3).
	Drift *Drift `json:"drift"`
}

// Drift is a change the drift bound stops (docs/decisions.md#drift-bound).
type Drift struct {
	Change Change       `json:"change"`
	Knob   string       `json:"knob"`
	Origin weights.Half `json:"origin"`
	Would  weights.Half `json:"would_be"`
	Bound  weights.Half `json:"bound"`
	// Active is the knob's value in the active version, the value an acknowledgement names (set with
	// DriftAcks.Page when the stop pages).
	Active weights.Half `json:"active"`
	Reason string       `json:"reason"`
}

// driftOf returns the drift of a candidate from origin when any signal weight or bucket edge lies more
// than DriftBound points away from it, nil otherwise.
func driftOf(c Change, cand, origin *weights.Weights) *Drift {
	if origin == nil {
		return nil
	}
	bound := weights.Whole(DriftBound)
	mk := func(knob string, o, w weights.Half) *Drift {
		return &Drift{Change: c, Knob: knob, Origin: o, Would: w, Bound: bound,
			Reason: fmt.Sprintf("%s would move %s from %s (v%04d) to %s, more than %d points: a human decides (drift bound)",
				c, knob, o, origin.Version, w, DriftBound)}
	}
	for s := range cand.Signals {
		if d := cand.Signals[s] - origin.Signals[s]; d > bound || d < -bound {
			return mk(weights.Signal(s).String(), origin.Signals[s], cand.Signals[s])
		}
	}
	for l := range cand.Buckets.Edges {
		if d := cand.Buckets.Edges[l] - origin.Buckets.Edges[l]; d > bound || d < -bound {
			return mk(edgeKnob(weights.Level(l)), origin.Buckets.Edges[l], cand.Buckets.Edges[l])
		}
	}
	return nil
}

// edgeKnob is the name a bucket edge has as a knob: "L1 edge" (the upper edge of L1).
func edgeKnob(l weights.Level) string { return l.String() + " edge" }

// KnobNames are the names of every knob a drift can name: the nine signals, then the bucket edges.
func KnobNames() []string {
	var names []string
	for s := range weights.NumSignals {
		names = append(names, weights.Signal(s).String())
	}
	for l := range len(weights.Weights{}.Buckets.Edges) {
		names = append(names, edgeKnob(weights.Level(l)))
	}
	return names
}

// DriftAcks are the drift-bound stops a human has read and answered "leave it": each knob with the value
// it was left at (tune.toml's [evolve.drift_acknowledged], docs/decisions.md#a-drift-bound-a-human-has-read).
type DriftAcks map[string]weights.Half

// HeldDrift is a drift-bound stop a DriftAcks entry answers: the knob is acknowledged at Drift.Active, its
// value in the active version, and the night goes on without it and without a page. From is the knob's
// value in the weights the step ran from, which the night's own kept steps may have moved.
type HeldDrift struct {
	Drift
	From weights.Half `json:"from"`
}

// KnobValue is the value of the knob named knob (KnobNames) in w; false for a name that is none.
func KnobValue(w *weights.Weights, knob string) (weights.Half, bool) {
	i := slices.Index(KnobNames(), knob)
	switch {
	case i < 0:
		return 0, false
	case i < int(weights.NumSignals):
		return w.Signals[i], true
	}
	return w.Buckets.Edges[i-int(weights.NumSignals)], true
}

// Held is d as a HeldDrift when the knob it names is acknowledged at its value in active (the version the
// run started from), nil otherwise. The acknowledgement is of the value a human can read in weights/ and
// wrote into tune.toml: a rollback, an apply or a new v0001 that moves the active knob brings the page
// back. The night's own kept steps do not: they are a proposal, reviewed like any other, and a night
// whose kept steps are refused (they lift no flagged task) would otherwise page every night whatever the
// human wrote (docs/decisions.md#a-drift-bound-a-human-has-read).
func (a DriftAcks) Held(d *Drift, parent, active *weights.Weights) *HeldDrift {
	if d == nil {
		return nil
	}
	v, ok := a[d.Knob]
	now, _ := KnobValue(active, d.Knob)
	if !ok || v != now {
		return nil
	}
	from, _ := KnobValue(parent, d.Knob)
	h := &HeldDrift{Drift: *d, From: from}
	h.Active = now
	// The drift's own reason ends "a human decides": held, the reason is what happened instead.
	h.Reason = h.Line()
	return h
}

// Page completes a drift-bound stop that pages with what the human needs to answer it: the knob's value
// in the active version (the value tune.toml's [evolve.drift_acknowledged] must name to leave it there),
// and, when tune.toml names the knob at another value, that it does not hold this stop. The reviewer of
// the rule wrote the value the page showed last ("to +5") or its step's ("from +4") and was paged every
// night after, with nothing to say why.
func (a DriftAcks) Page(d *Drift, active *weights.Weights) {
	if d == nil {
		return
	}
	d.Active, _ = KnobValue(active, d.Knob)
	d.Reason += fmt.Sprintf("; %s is %s in the active weights (v%04d): to leave it there, name it at %s under tune.toml's [evolve.drift_acknowledged]",
		d.Knob, d.Active, active.Version, d.Active)
	if v, ok := a[d.Knob]; ok {
		d.Reason += fmt.Sprintf(" (tune.toml names it at %s, not its active %s, so this stop pages)", v, d.Active)
	}
}

// HeldLine is what follows "held: " for the drift-bound stops a run held.
func HeldLine(held []HeldDrift) string {
	s := make([]string, len(held))
	for i := range held {
		s[i] = held[i].Line()
	}
	return strings.Join(s, "; ")
}

// Line is what follows "held: " in a summary and in a proposal's reason.
func (h *HeldDrift) Line() string {
	return fmt.Sprintf("%s at the drift bound (%s would go from %s to %s, more than %d points from v0001's %s): tune.toml's [evolve.drift_acknowledged] leaves %s at %s, its active value; no page",
		h.Change, h.Knob, h.From, h.Would, DriftBound, h.Origin, h.Knob, h.Active)
}

// Excluded are the changes a step measured or tried without keeping them: what the loop and tune
// propose leave out of the next step on the same weights, so that none is measured twice.
func (r *StepResult) Excluded() []Change {
	var out []Change
	for _, a := range r.Attempts {
		out = append(out, a.Change)
	}
	if r.Tried != nil {
		out = append(out, *r.Tried)
	}
	return out
}

// Step runs one evolution step. The only error is a missing suite; everything else is data.
func Step(in StepInput) (*StepResult, error) {
	if in.Suite.Len() == 0 {
		return nil, fmt.Errorf("evolve: the fixture suite is empty; a step needs scenarios to measure on")
	}
	parent := in.Parent
	det := in.Detected
	if det == nil {
		det = Detect(DetectInput{Tasks: in.Tasks, Stream: in.Stream, Resume: in.Resume, Exclude: in.Exclude, Now: in.Now, EvidenceAfter: in.EvidenceAfter,
			Origin: in.Origin, Parity: in.Parity,
			Resolver: Resolver{Active: &parent, WeightsFor: in.WeightsFor, Detect: in.Detect, Used: in.Used}})
	} else {
		d := *det
		d.Proposal, d.EdgeTasks, d.Reason = propose(&d, &parent, in.Origin, in.Parity, in.Exclude, false)
		det = &d
	}
	res := &StepResult{Detection: det, Attempts: []Attempt{}, Decision: weights.DecisionNone, Candidate: parent, Lifted: []string{}}
	res.Before = in.Suite.Score(&parent)
	res.After = res.Before
	res.SuiteLossBefore, res.SuiteLossAfter = res.Before.Loss, res.Before.Loss
	res.Holdout, res.HoldoutRule = Holdout{Scenarios: in.Holdout.Len(), Verdict: "not read"}, in.HoldoutRule
	if det.Proposal == nil {
		return res, nil
	}
	budget := in.ParityBudget
	if budget <= 0 {
		budget = DefaultParityBudget
	}
	base := in.ParityBase
	if base == nil {
		base = &parent
	}
	j := &judge{parent: &parent, parityBase: base, suite: in.Suite, holdout: in.Holdout, holdoutPriced: in.HoldoutRule == HoldoutPriced, parity: in.Parity, budget: budget,
		before: in.Suite.Losses(&parent), flagged: det.Flagged, requireLift: !in.InLoop, tasks: det.screenTasks.cells}
	first := *det.Proposal
	res.Tried = &first
	// A change beyond the drift bound is not measured: the step stops and the caller escalates.
	// tryChange measures the change and, when it is rejected, its half — only when the loss rule
	// expects the half to gain too (a half step that lifts nothing is not worth a try).
	tryChange := func(c Change) bool {
		for _, half := range []bool{false, true} {
			cc := c
			if half {
				cc = c.Halved()
			}
			// The excess is the tasks this change (the half included) lifts.
			j.excess = changeExcess(cc, &parent, det.screenTasks.cells)
			if half {
				if g := lossGain(cc, j.excess, &parent, det.screenTasks.cells, in.Parity); !(float64(g.Net) > 0) {
					return false
				}
			}
			cw := cc.Apply(parent)
			if d := driftOf(cc, &cw, in.Origin); d != nil {
				res.Drift = d
				return false
			}
			a, cand := evaluate(cc, half, j)
			res.Attempts = append(res.Attempts, a)
			if a.Accepted {
				res.Decision, res.Change, res.Candidate = a.Decision, &cc, cand
				res.Holdout = a.Holdout
				return true
			}
		}
		return false
	}
	accepted := tryChange(first)
	if !accepted && res.Drift == nil && first.Kind == weights.ChangeSignal {
		// The signal change was reverted: the bucket rule may move an edge instead.
		if edge, n, _ := propose(det, &parent, in.Origin, in.Parity, in.Exclude, true); edge != nil {
			res.EdgeTasks = n
			accepted = tryChange(*edge)
		}
	}
	if !accepted {
		res.Decision = weights.DecisionRevert
		if len(res.Attempts) == 0 {
			res.Decision = weights.DecisionNone
		}
		return res, nil
	}
	res.After = in.Suite.Score(&res.Candidate)
	res.SuiteLossAfter = res.After.Loss
	for i := range det.Flagged {
		if r := rescore(&det.Flagged[i], &parent, &res.Candidate); r.OutOfLowSide {
			res.Lifted = append(res.Lifted, r.MetaTimestamp)
		}
	}
	return res, nil
}

// SupportingKeys are the evidence-ledger keys of the flagged tasks behind a kept change (nil when the
// step keeps none).
func (res *StepResult) SupportingKeys() []string {
	if res.Change == nil {
		return nil
	}
	keys := make([]string, 0, len(res.Flagged))
	for _, f := range res.Flagged {
		keys = append(keys, f.Key)
	}
	sort.Strings(keys)
	return slices.Compact(keys)
}
