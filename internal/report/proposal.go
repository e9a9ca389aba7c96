package report

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/textfmt"
	"github.com/ldd-tools/tune/internal/weights"
)

// ProposalReport is everything the proposal report shows: why a weight should change (the window and the
// flagged tasks with their evidence, the signal screen), what the replay measured (every attempt, every
// scenario before → after, the guardrails) and what would change (the weight diff). Sections whose data is
// missing (nil or empty) say so instead of disappearing, so a reader can tell "none" from "not recorded".
type ProposalReport struct {
	ID         string    // proposal id (p-…); names the files
	Created    time.Time // when the proposal was made (injected clock); zero when unknown
	Parent     int       // weights version the proposal was measured against
	Decision   weights.Decision
	Reason     string // one line, e.g. "3 low-side regressions with ambiguous"
	Confidence string // strong | provisional | underpowered, "" when unknown
	// NoPattern, when set, says why there is no change ("no consistent pattern"); the flagged tasks are then
	// a detector gap that weights cannot fix.
	NoPattern string

	Window  *Window
	Flagged []FlaggedTask
	Screen  []ScreenRow
	// Accumulated summarises the accumulated evidence the screen counted; LossRule lists the changes
	// the loss rule weighed with their expected gain, the chosen one first (issue 28; empty in inputs
	// saved before).
	Accumulated string
	LossRule    []string
	// LossRuleUnpaid lists, for each signal the test supports whose changes do not pay, the step nearest
	// to paying with its excess, break-even and the regressions it still needs (empty in inputs saved
	// before).
	LossRuleUnpaid []string
	Attempts       []Attempt
	Replay         []ScenarioLoss // the parent weights against the final candidate, per scenario
	// SuiteLossBefore and SuiteLossAfter are the decision's suite losses (mean scenario loss).
	SuiteLossBefore, SuiteLossAfter float64

	// Before and After are the parent and candidate weights; their difference is the weight diff.
	Before, After weights.Weights

	// Decisive are the flagged tasks' scores under the parent and the deciding candidate (the decision
	// chart, proposal_decision.go); empty when the proposal file is all there is.
	Decisive []TaskScore

	Discordant  *SignTest
	LeaveOneOut *LeaveOneOut
	Holdout     *Holdout
	Warnings    []string

	// Watch is what the nightly watch found on the applied version before this run; nil when it did
	// not run (tune propose, tune evolve) or had no version to judge.
	Watch *WatchFinding
}

// WatchFinding is the watch's verdict on an applied version, as the EVAL report shows it.
type WatchFinding struct {
	Version, Parent string
	Changes         []string
	Verdict         string // holding | too early | not helping | harmful
	Reason          string
	// Proposal is the rollback proposal the verdict wrote (or found pending), "" when none.
	Proposal string
	Tests    []WatchTest
	// Moved are the tasks the change moved (dispatched auto), MovedMore how many more the section
	// leaves out; NotCounted says which moved tasks never count ("3 override-down"), "" when none.
	Moved      []WatchMoved
	MovedMore  int
	NotCounted string
}

// WatchTest is one of the watch's e-processes.
type WatchTest struct {
	Name, Basis string
	Events      string // "k/n"
	Null, Alt   float64
	E           float64
	Threshold   float64
	NeedMore    int
	Note        string
}

// WatchMoved is one task the change moved: its levels under the parent and the version, the test it
// is a trial of, and whether (and how it is known that) it counts against the version.
type WatchMoved struct {
	MetaTimestamp, Task string
	Levels              string // "L1 → L2"
	Test                string
	Against             string // "" when it does not count against the version
}

// Window is the slice of trace history the evolution step looked at: the last Size labelled tasks of each
// trace log.
type Window struct {
	Size      int // tasks per log
	Logs      []WindowLog
	Triggered bool // at least Trigger low-side regressions
	Trigger   int
}

// WindowLog is the window of one trace log.
type WindowLog struct {
	Source   string
	Labelled int // tasks with a level label read
	Tasks    int // of them in the window
	Closed   int // closed window tasks (the screen's population)
	Eligible int // auto-dispatched L0/L1, closed, final loss known
	// ResolvedByActive are the tasks dispatched low that the active weights already lift, LedgerUsed
	// those left out because they supported an applied change (nil in inputs saved before they were).
	ResolvedByActive, LedgerUsed *int
	MedianLossFinal              *float64
	First, Last                  string // meta timestamps of the window's first and last task
}

// FlaggedTask is one low-side regression and the evidence that flagged it.
type FlaggedTask struct {
	MetaTimestamp string
	Title         string // from the trace; redacted before it is written
	Level         string // level it was dispatched at
	Source        string // trace log path
	Line          int    // line of its meta line, 0 when unknown
	Evidence      []string
	Signals       []string
	Redetected    bool // signals re-detected from the task text (no signals= on the meta line)
}

// ScreenRow is one signal's 2×2 screen over the closed tasks of the window.
type ScreenRow struct {
	Signal string
	// A present & flagged, B present & not flagged, C absent & flagged, D absent & not flagged.
	A, B, C, D      int
	Phi, LogOdds, Z float64
	FisherP, HolmP  float64
	MinP            float64 // smallest attainable one-sided p for these margins
	Consistent      bool    // fired in (nearly) every flagged task
	Verdict         string  // candidate | underpowered | no signal
	Chosen          bool    // the signal the proposal changes
	// EValue and MoreNeeded are the screen's (per log and block, mixed over onsets); nil when the input
	// did not record them (a proposal written before), and then computed from the counts as one table.
	EValue     *float64
	MoreNeeded *int
}

// Attempt is one tried change and its replay.
type Attempt struct {
	Step                            int    // evolution step it belongs to (an evolve chain has several); 0 or 1 for a single step
	Change                          string // weights.ChangeLabel: "ambiguous +1", "bucket L1 edge +1"
	Decision                        weights.Decision
	SuiteLossBefore, SuiteLossAfter float64
	ScenariosWorse                  []string // scenarios whose loss rose
	MotivatingUp, Motivating        int      // motivating tasks that moved up, of how many
	Note                            string   // why this decision, when not obvious from the numbers
	// Lifted is how many flagged tasks the change lifts out of L0/L1 by level (-1: not recorded); Parity
	// summarises its price on the parity prompts ("" when not priced).
	Lifted int
	Parity string
}

// ScenarioLoss is one fixture scenario scored under the parent and the candidate.
type ScenarioLoss struct {
	Scenario                string
	Expected                string // accepted levels, e.g. "L2" or "L2|L3"
	LevelBefore, LevelAfter string
	LossBefore, LossAfter   float64
}

// SignTest is the exact sign test over discordant scenarios (better vs worse under the candidate).
type SignTest struct {
	Better, Worse int
	P, MinP       float64 // MinP: the p a unanimous result over this many scenarios would have
	Verdict       string  // significant | not significant | insufficient evidence
}

// LeaveOneOut is the decision re-taken with each scenario left out in turn.
type LeaveOneOut struct {
	Agree, Folds int
	Flips        []string // scenarios whose removal flips the decision
}

// Holdout is the frozen split that never takes part in a decision.
type Holdout struct {
	Scenarios             int
	LossBefore, LossAfter *float64 // nil when not read
	Verdict               string   // not read | better | no change | worse
	Reads                 int      // scorings of the split (each read spends some of its worth)
	// Priced says the run priced the holdout (tune.toml [evolve] holdout = "priced") instead of the
	// veto; Paid names the kept changes whose holdout loss the history's gain paid for.
	Priced bool
	Paid   []string
}

// ProposalBase is the file stem of a proposal's report: proposal-<id>.
func ProposalBase(id string) string { return "proposal-" + fileStem(id) }

// RenderProposal renders the proposal report: proposal-<id>.md and proposal-<id>-loss.svg (loss per
// scenario before and after; omitted when there is no replay or nothing was kept).
func RenderProposal(in ProposalReport) ([]File, error) {
	r := &renderSet{base: ProposalBase(in.ID)}
	w := &r.md
	red := &redactions{}

	fmt.Fprintf(w, "# EVAL: proposal %s\n\n", Escape(in.ID))
	fmt.Fprintf(w, "%s\n\n", proposalHeadline(in))
	var meta []string
	if !in.Created.IsZero() {
		meta = append(meta, "created "+in.Created.UTC().Format(time.RFC3339))
	}
	meta = append(meta, "measured against weights "+weights.VersionName(in.Parent))
	if in.Confidence != "" {
		meta = append(meta, "confidence: "+Escape(in.Confidence))
	}
	fmt.Fprintf(w, "%s.\n\n", capitalize(strings.Join(meta, " · ")))
	if in.Reason != "" {
		fmt.Fprintf(w, "Reason: %s\n\n", red.safe(in.Reason))
	}
	if in.NoPattern != "" {
		fmt.Fprintf(w, "> **No change proposed: %s.** The flagged tasks below are a detector gap that weights cannot fix.\n\n", red.safe(in.NoPattern))
	}

	if err := proposalDecision(r, in); err != nil {
		return nil, err
	}
	proposalWatch(w, in.Watch, red)
	if err := proposalWindow(w, in.Window, red); err != nil {
		return nil, err
	}
	if err := proposalFlagged(w, in.Flagged, red); err != nil {
		return nil, err
	}
	if err := proposalScreen(w, in.Screen, in.Accumulated, in.LossRule, in.LossRuleUnpaid); err != nil {
		return nil, err
	}
	if err := proposalAttempts(w, in.Attempts, red); err != nil {
		return nil, err
	}
	if err := proposalReplay(r, in); err != nil {
		return nil, err
	}
	proposalGuardrails(w, in, red)
	if err := proposalWeightDiff(w, in); err != nil {
		return nil, err
	}
	if len(in.Warnings) > 0 {
		fmt.Fprintf(w, "## Warnings\n\n")
		for _, s := range in.Warnings {
			fmt.Fprintf(w, "- %s\n", red.safe(s))
		}
		fmt.Fprintln(w)
	}
	red.footnote(w)
	return r.files(), nil
}

// WriteProposal renders the proposal report and writes it under dir; it returns the written paths
// (Markdown first). propose, nightly and `tune report proposal` all go through it.
func WriteProposal(dir string, in ProposalReport) ([]string, error) {
	files, err := RenderProposal(in)
	if err != nil {
		return nil, err
	}
	return WriteFiles(dir, files)
}

func proposalHeadline(in ProposalReport) string {
	var accepted []string
	for _, a := range in.Attempts {
		if a.Decision.Applicable() {
			accepted = append(accepted, Escape(a.Change))
		}
	}
	change := "no change"
	if len(accepted) > 0 {
		change = strings.Join(accepted, ", then ")
	}
	decision := in.Decision
	if decision == "" {
		decision = weights.DecisionNone
	}
	if len(in.Attempts) == 0 && len(in.Replay) == 0 {
		return fmt.Sprintf("**Decision: %s** — no change; nothing was replayed.", Escape(string(decision)))
	}
	tried := make([]float64, len(in.Attempts))
	for i, a := range in.Attempts {
		tried[i] = a.SuiteLossAfter
	}
	loss := evolve.LossSummary(decision, in.SuiteLossBefore, in.SuiteLossAfter, tried, fmtLoss)
	if !keepsChange(in) {
		// Nothing kept: there is no candidate, the parent stays (docs/decisions.md#nothing-kept).
		return fmt.Sprintf("**Decision: %s** — no change kept; %s stays. Suite loss %s.", Escape(string(decision)),
			weights.VersionName(in.Parent), loss)
	}
	return fmt.Sprintf("**Decision: %s** — %s (%s → candidate). Suite loss %s.", Escape(string(decision)), change,
		weights.VersionName(in.Parent), loss)
}

// keepsChange reports whether the run keeps a candidate (accept or halve). When it does not, the
// "after" side of the replay is the parent itself and the report says so instead of naming a candidate.
func keepsChange(in ProposalReport) bool { return in.Decision.Applicable() }

func proposalWindow(w io.Writer, win *Window, red *redactions) error {
	fmt.Fprintf(w, "## Window\n\n")
	if win == nil {
		fmt.Fprintf(w, "_Not recorded in the proposal._\n\n")
		return nil
	}
	trigger := win.Trigger
	if trigger == 0 {
		trigger = 3
	}
	triggered := "not triggered"
	if win.Triggered {
		triggered = "triggered"
	}
	fmt.Fprintf(w, "The last %d labelled tasks of each trace log; %s (%d low-side regressions needed).\n\n", win.Size, triggered, trigger)
	rows := make([][]string, len(win.Logs))
	for i, l := range win.Logs {
		median := "–"
		if l.MedianLossFinal != nil {
			median = fmtLoss(*l.MedianLossFinal)
		}
		span := "–"
		if l.First != "" || l.Last != "" {
			span = Escape(l.First) + " → " + Escape(l.Last)
		}
		rows[i] = []string{red.code(filepath.ToSlash(l.Source)), strconv.Itoa(l.Labelled), strconv.Itoa(l.Tasks), strconv.Itoa(l.Closed),
			strconv.Itoa(l.Eligible), fmtCount(l.ResolvedByActive), fmtCount(l.LedgerUsed), median, span}
	}
	cols := []Column{Text("trace log"), Num("labelled"), Num("in window"), Num("closed"), Num("eligible"),
		Num("lifted by the active weights"), Num("already used"), Num("median final loss"), Text("first → last task")}
	return tableBlock(w, cols, rows)
}

// MaxFlaggedListed bounds the flagged tasks an EVAL report lists: the most recent ones, by meta time. A
// year of evidence holds a thousand or more, and a report must stay readable in a pull request (and
// small, whatever the logs: 40,000 flagged tasks made a 10 MB report); `tune detect` lists them all.
const MaxFlaggedListed = 100

func proposalFlagged(w io.Writer, tasks []FlaggedTask, red *redactions) error {
	if !section(w, "Flagged tasks", len(tasks), "None.") {
		return nil
	}
	listed := mostRecent(tasks, MaxFlaggedListed)
	rows := make([][]string, len(listed))
	for i, at := range listed {
		t := tasks[at]
		signals := strings.Join(t.Signals, ", ")
		if t.Redetected {
			signals += " (re-detected)"
		}
		source := filepath.ToSlash(t.Source)
		if t.Line > 0 {
			source += ":" + strconv.Itoa(t.Line)
		}
		rows[i] = []string{strconv.Itoa(at + 1), Escape(t.MetaTimestamp), red.safe(t.Title), Escape(t.Level),
			red.safe(strings.Join(t.Evidence, "; ")), signals, red.code(source)}
	}
	if err := tableBlock(w, []Column{Num("#"), Text("meta time"), Text("task"), Text("level"), Text("evidence"), Text("signals"), Text("source")}, rows); err != nil {
		return err
	}
	if left := len(tasks) - len(listed); left > 0 {
		fmt.Fprintf(w, "_The %d most recent of %d flagged tasks; `tune detect` lists the %d earlier ones._\n\n", len(listed), len(tasks), left)
	}
	return nil
}

// mostRecent is the indices of the n tasks with the latest meta timestamps (compared as written: RFC 3339
// in UTC sorts by time), all of them when there are no more, in their order.
func mostRecent(tasks []FlaggedTask, n int) []int {
	at := make([]int, len(tasks))
	for i := range at {
		at[i] = i
	}
	if len(tasks) <= n {
		return at
	}
	slices.SortStableFunc(at, func(a, b int) int { return strings.Compare(tasks[b].MetaTimestamp, tasks[a].MetaTimestamp) })
	at = at[:n]
	slices.Sort(at)
	return at
}

// screenEvidence is the row's e-value and the regressions it still needs: as the screen recorded them,
// or, where the input did not (a proposal written before they were kept), from the counts as one table.
// A recorded e-value that passes needs none more.
func (s ScreenRow) screenEvidence() (float64, int) {
	e := evolve.ShownEValue(evolve.LogEValueOnsets([]evolve.Table{{s.A, s.B, s.C, s.D}}, nil)) // as MoreNeeded weighs it
	if s.EValue != nil {
		e = *s.EValue
	}
	switch {
	case s.MoreNeeded != nil:
		return e, *s.MoreNeeded
	case s.EValue != nil && e >= evolve.Threshold:
		return e, 0
	}
	return e, evolve.MoreNeeded(s.A, s.B, s.C, s.D)
}

func proposalScreen(w io.Writer, screen []ScreenRow, accumulated string, lossRule, unpaid []string) error {
	if !section(w, "Signal screen", len(screen), "Not recorded in the proposal.") {
		return nil
	}
	if accumulated != "" {
		fmt.Fprintf(w, "%s\n\n", Escape(accumulated))
	}
	fmt.Fprintf(w, "Per signal over the accumulated evidence (since issue 28: every settled eligible task of the logs read — auto, L0/L1 under the active weights, closed, not already used by an applied change, after the evidence watermark): present & flagged (a), present & not flagged (b), absent & flagged (c), absent & not flagged (d). The decision is the anytime-valid e-value (docs/decisions.md#accumulated-evidence): a candidate needs e ≥ %.0f (9 signals, 2 %% over every night's look); more is how many more regressions carrying the signal it would need. Fisher p, Holm p and min p are descriptive.\n\n", evolve.Threshold)
	rows := make([][]string, len(screen))
	for i, s := range screen {
		name := s.Signal
		if s.Chosen {
			name = "**" + name + "** ←"
		}
		// The effect is a function of the counts, so inputs saved before the column existed show it too.
		effect := fmtFloat(stats.PrevalenceDiff(s.A, s.B, s.C, s.D))
		e, n := s.screenEvidence()
		more := strconv.Itoa(n)
		if n < 0 {
			more = fmt.Sprintf("> %d", evolve.MaxMoreNeeded)
		}
		rows[i] = []string{name, strconv.Itoa(s.A), strconv.Itoa(s.B), strconv.Itoa(s.C), strconv.Itoa(s.D),
			strconv.FormatFloat(e, 'g', 3, 64), more, effect,
			fmtP(s.FisherP), fmtP(s.HolmP), fmtP(s.MinP), yesNo(s.Consistent), Escape(s.Verdict)}
	}
	cols := []Column{Text("signal"), Num("a"), Num("b"), Num("c"), Num("d"), Num("e-value"), Num("more"), Num("effect"),
		Num("Fisher p"), Num("Holm p"), Num("min p"), Text("consistent"), Text("verdict")}
	if err := tableBlock(w, cols, rows); err != nil {
		return err
	}
	if len(lossRule) > 0 {
		fmt.Fprintf(w, "**Loss rule** — expected gain per task of each change weighed (too_low × regressions avoided − too_high × levels raised without need, on the history's tasks and the parity prompts), the chosen one first:\n\n")
		for _, l := range lossRule {
			fmt.Fprintf(w, "- %s\n", Escape(l))
		}
		fmt.Fprintln(w)
	}
	if len(unpaid) > 0 {
		fmt.Fprintf(w, "**No change pays** for these signals, though the test supports them — the step of each nearest to paying, with the excess it was credited with, its break-even and the regressions it still needs:\n\n")
		for _, l := range unpaid {
			fmt.Fprintf(w, "- %s\n", Escape(l))
		}
		fmt.Fprintln(w)
	}
	return nil
}

func proposalAttempts(w io.Writer, attempts []Attempt, red *redactions) error {
	if !section(w, "Attempts", len(attempts), "None: nothing was tried.") {
		return nil
	}
	multiStep := false
	for _, a := range attempts {
		multiStep = multiStep || a.Step > 1
	}
	rows := make([][]string, len(attempts))
	for i, a := range attempts {
		worse := "none"
		if len(a.ScenariosWorse) > 0 {
			worse = red.safe(strings.Join(a.ScenariosWorse, ", "))
		}
		up := "–"
		if a.Motivating > 0 {
			up = fmt.Sprintf("%d of %d", a.MotivatingUp, a.Motivating)
		}
		lifted, parity := "–", "–"
		if a.Lifted >= 0 {
			lifted = strconv.Itoa(a.Lifted)
		}
		if a.Parity != "" {
			parity = Escape(a.Parity)
		}
		rows[i] = []string{strconv.Itoa(i + 1), Escape(a.Change), fmtLoss(a.SuiteLossBefore), fmtLoss(a.SuiteLossAfter),
			fmtDelta(a.SuiteLossAfter - a.SuiteLossBefore), worse, up, lifted, parity, "**" + Escape(string(a.Decision)) + "**", red.safe(a.Note)}
		if multiStep {
			rows[i] = append([]string{strconv.Itoa(a.Step)}, rows[i]...)
		}
	}
	cols := []Column{Num("#"), Text("change"), Num("suite loss before"), Num("after"), Num("Δ"), Text("scenarios worse"),
		Num("motivating tasks up"), Num("lifted out of L0/L1"), Text("parity price"), Text("decision"), Text("note")}
	if multiStep {
		cols = append([]Column{Num("step")}, cols...)
	}
	return tableBlock(w, cols, rows)
}

func proposalReplay(r *renderSet, in ProposalReport) error {
	w := &r.md
	if !section(w, "Replay per scenario", len(in.Replay), "Not recorded in the proposal.") {
		return nil
	}
	versus, after := " and the candidate", ""
	if !keepsChange(in) {
		versus, after = "", " Nothing was kept, so \"after\" is "+weights.VersionName(in.Parent)+" too; what the reverted attempts measured is under Attempts."
	}
	fmt.Fprintf(w, "Loss per scenario under %s%s (level too low: %d × levels missed; too high: %d ×; other checked item wrong: +%d).%s\n\n",
		weights.VersionName(in.Parent), versus, in.Before.Cost.TooLow, in.Before.Cost.TooHigh, in.Before.Cost.OtherItem, after)
	// The main table holds the scenarios that cost something or moved; the full table follows folded
	// (GitHub renders <details>), so a suite of a hundred green scenarios does not bury the few that matter.
	cols := []Column{Text("scenario"), Text("expected"), Text("level before"), Text("level after"), Num("loss before"), Num("loss after"), Num("Δ")}
	row := func(s ScenarioLoss) []string {
		return []string{Escape(s.Scenario), Escape(s.Expected), Escape(s.LevelBefore), Escape(s.LevelAfter),
			fmtLoss(s.LossBefore), fmtLoss(s.LossAfter), fmtDelta(s.LossAfter - s.LossBefore)}
	}
	suiteRow := []string{"**suite (mean)**", "", "", "", fmtLoss(in.SuiteLossBefore), fmtLoss(in.SuiteLossAfter),
		fmtDelta(in.SuiteLossAfter - in.SuiteLossBefore)}
	var notable, all [][]string
	for _, s := range in.Replay {
		all = append(all, row(s))
		if s.LossBefore != 0 || s.LossAfter != 0 || s.LevelBefore != s.LevelAfter {
			notable = append(notable, row(s))
		}
	}
	quiet := len(in.Replay) - len(notable)
	if len(notable) > 0 {
		if err := tableBlock(w, cols, append(notable, suiteRow)); err != nil {
			return err
		}
	}
	switch {
	case quiet == len(in.Replay):
		fmt.Fprintf(w, "All %d scenarios score a loss of 0 at the same level before and after.\n\n", quiet)
	case quiet > 0:
		fmt.Fprintf(w, "The other %d %s score a loss of 0 at the same level before and after.\n\n", quiet, textfmt.Form(quiet, "scenario", "scenarios"))
	}
	if quiet > 0 {
		fmt.Fprintf(w, "<details><summary>All %d scenarios</summary>\n\n", len(in.Replay))
		if err := WriteTable(w, cols, append(all, suiteRow)); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n</details>\n\n")
	}
	if !keepsChange(in) {
		return nil // nothing to draw: both sides are the parent
	}
	chart, shown := proposalLossChart(in)
	if shown == 0 {
		return nil // nothing to draw: every bar would be 0
	}
	return r.chart("loss", "loss per scenario before and after", chart)
}

// proposalLossChart is the per-scenario loss before and after, for the scenarios that cost something on
// either side (the table has them all); shown is how many it holds.
func proposalLossChart(in ProposalReport) (chart BarChart, shown int) {
	chart = BarChart{
		Title:      fmt.Sprintf("Loss per scenario: %s → candidate", weights.VersionName(in.Parent)),
		ValueLabel: "scenario loss",
		Groups:     []BarGroup{{Name: "before (" + weights.VersionName(in.Parent) + ")"}, {Name: "after (candidate)"}},
	}
	for _, s := range in.Replay {
		if s.LossBefore == 0 && s.LossAfter == 0 {
			continue
		}
		chart.Categories = append(chart.Categories, s.Scenario)
		chart.Groups[0].Values = append(chart.Groups[0].Values, s.LossBefore)
		chart.Groups[1].Values = append(chart.Groups[1].Values, s.LossAfter)
	}
	return chart, len(chart.Categories)
}

func proposalGuardrails(w io.Writer, in ProposalReport, red *redactions) {
	fmt.Fprintf(w, "## Guardrails\n\n")
	if d := in.Discordant; d != nil {
		fmt.Fprintf(w, "- **Discordant scenarios:** %d better, %d worse; exact sign test p = %s (a unanimous result could reach %s)",
			d.Better, d.Worse, fmtP(d.P), fmtP(d.MinP))
		if d.Verdict != "" {
			fmt.Fprintf(w, " — %s", red.safe(d.Verdict))
		}
		fmt.Fprintln(w, ".")
	} else {
		fmt.Fprintln(w, "- **Discordant scenarios:** not recorded.")
	}
	if l := in.LeaveOneOut; l != nil {
		fmt.Fprintf(w, "- **Leave-one-out:** the decision holds in %d of %d folds with one scenario left out", l.Agree, l.Folds)
		if len(l.Flips) > 0 {
			fmt.Fprintf(w, "; leaving out %s flips it", red.safe(strings.Join(l.Flips, ", ")))
		}
		fmt.Fprintln(w, ".")
	} else {
		fmt.Fprintln(w, "- **Leave-one-out:** not recorded.")
	}
	rule := "as a veto: its loss must not rise"
	if h := in.Holdout; h != nil && h.Priced {
		rule = "priced: the loss it adds is paid by the history's expected gain, with the suite's"
	}
	switch h := in.Holdout; {
	case h == nil:
		fmt.Fprintln(w, "- **Holdout:** not recorded.")
	case h.LossBefore == nil || h.LossAfter == nil:
		fmt.Fprintf(w, "- **Holdout** (%d scenarios, read last, %s): %s. Read %d %s.\n",
			h.Scenarios, rule, red.safe(orDash(h.Verdict, "not read")), h.Reads, textfmt.Form(h.Reads, "time", "times"))
	default:
		fmt.Fprintf(w, "- **Holdout** (%d scenarios, read last, %s): loss %s → %s — **%s**. Read %d %s.\n",
			h.Scenarios, rule, fmtLoss(*h.LossBefore), fmtLoss(*h.LossAfter), red.safe(orDash(h.Verdict, "–")), h.Reads, textfmt.Form(h.Reads, "time", "times"))
	}
	if h := in.Holdout; h != nil && len(h.Paid) > 0 {
		fmt.Fprintf(w, "- **Holdout paid:** %s: the history's expected gain pays for the loss these kept changes add on the frozen holdout.\n",
			red.safe(strings.Join(h.Paid, "; ")))
	}
	fmt.Fprintln(w)
}

func orDash(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func proposalWeightDiff(w io.Writer, in ProposalReport) error {
	if !keepsChange(in) {
		fmt.Fprintf(w, "## Weight diff\n\nNothing was kept: the weights stay those of %s.\n\n", weights.VersionName(in.Parent))
		return nil
	}
	fmt.Fprintf(w, "## Weight diff (%s → candidate)\n\n", weights.VersionName(in.Parent))
	var rows [][]string
	changed := 0
	row := func(name string, old, new weights.Half) {
		d := weights.Half(new - old)
		delta := "±0"
		if d != 0 {
			delta = d.String()
			name = "**" + name + "**"
			changed++
		}
		rows = append(rows, []string{name, old.Plain(), new.Plain(), delta})
	}
	for _, s := range weights.Signals() {
		row(s.String(), in.Before.Signals[s], in.After.Signals[s])
	}
	for i, e := range in.Before.Buckets.Edges {
		row(fmt.Sprintf("bucket edge %s (upper)", weights.Level(i)), e, in.After.Buckets.Edges[i])
	}
	if err := WriteTable(w, []Column{Text("weight"), Num("old"), Num("new"), Num("Δ")}, rows); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d %s changed.\n\n", changed, textfmt.Form(changed, "weight", "weights"))
	return nil
}

// redactions counts what Redact replaced across a report, for its footnote.
type redactions struct{ n int }

func (r *redactions) safe(s string) string {
	out, n := RedactCount(s)
	r.n += n
	return Escape(out)
}

// title is a task title as a table cell: redacted (counted), cut to MaxTitleRunes, escaped, pipes too.
func (r *redactions) title(s string) string {
	out, _, n := taskTitleCount(s)
	r.n += n
	return Cell(out)
}

// code prints a path or label as inline code, exactly: no Markdown escaping is needed there, and a
// backtick in it is kept by a longer fence (CommonMark), where it was shown as ' (a path that does not
// exist: the review of the reports).
func (r *redactions) code(s string) string {
	out, n := RedactCount(s)
	r.n += n
	return CodeSpan(out)
}

// CodeSpan is s as a Markdown code span: fenced by one backtick more than its longest run of them, and
// padded with a space where it begins or ends with one.
func CodeSpan(s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

func (r *redactions) footnote(w io.Writer) {
	if r.n > 0 {
		fmt.Fprintf(w, "---\n%d secret-looking %s redacted.\n", r.n, textfmt.Form(r.n, "string was", "strings were"))
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// proposalWatch is the section on what the nightly watch found before this run: the verdict, its
// tests, and the table of the tasks the change moved.
func proposalWatch(w io.Writer, f *WatchFinding, red *redactions) {
	if f == nil {
		return
	}
	fmt.Fprintf(w, "## Watch\n\n")
	fmt.Fprintf(w, "The applied version %s (parent %s, %s) is **%s**: %s.\n\n", Escape(f.Version), Escape(f.Parent),
		Escape(strings.Join(f.Changes, ", ")), Escape(f.Verdict), red.safe(f.Reason))
	if f.Proposal != "" {
		fmt.Fprintf(w, "Rollback proposal %s awaits review (`tune apply %s`).\n\n", Escape(f.Proposal), Escape(f.Proposal))
	}
	if len(f.Tests) > 0 {
		fmt.Fprintf(w, "| test | events | null ≤ | alternative | e-value | threshold | more needed | null from |\n|---|---|---:|---:|---:|---:|---:|---|\n")
		for _, t := range f.Tests {
			if t.Note != "" {
				fmt.Fprintf(w, "| %s | %s | – | – | – | %.3g | – | %s |\n", Cell(t.Name), Cell(t.Events), t.Threshold, Cell(t.Note))
				continue
			}
			alt := "any worse"
			if t.Alt > 0 {
				alt = fmt.Sprintf("%.0f%%", 100*t.Alt)
			}
			more := "–"
			if t.NeedMore > 0 {
				more = strconv.Itoa(t.NeedMore)
			}
			fmt.Fprintf(w, "| %s | %s | %.0f%% | %s | %.3g | %.3g | %s | %s |\n", Cell(t.Name), Cell(t.Events), 100*t.Null, alt, t.E, t.Threshold, more, Cell(t.Basis))
		}
		fmt.Fprintln(w)
	}
	if len(f.Moved) > 0 {
		fmt.Fprintf(w, "Tasks the change moved (dispatched auto):\n\n| meta time | task | parent → version | test | against the version |\n|---|---|---|---|---|\n")
		for _, m := range f.Moved {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", Cell(m.MetaTimestamp), red.title(m.Task), Cell(m.Levels), Cell(cmp.Or(m.Test, "–")), Cell(cmp.Or(m.Against, "–")))
		}
		fmt.Fprintln(w)
		if f.MovedMore > 0 {
			fmt.Fprintf(w, "… and %d more (`tune watch --json` lists them all).\n\n", f.MovedMore)
		}
	}
	if f.NotCounted != "" {
		fmt.Fprintf(w, "Moved but not counted (a level the user set is not the weights'): %s.\n\n", Escape(f.NotCounted))
	}
}

// fmtCount shows a count, or "–" when the input did not record it.
func fmtCount(n *int) string {
	if n == nil {
		return "–"
	}
	return strconv.Itoa(*n)
}
