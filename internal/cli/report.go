package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/fixtures"
	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/weights"
)

type reportOptions struct {
	IO          *IOStreams
	Now         func() time.Time
	Getenv      func(string) string
	WeightsDir  string
	FixturesDir string
	OutDir      string
	JSON        bool

	Kind     string   // proposal | history | audit
	Proposal string   // proposal file or id; "" = the newest proposal
	Logs     []string // trace logs a proposal was made from; default the sources of its flagged tasks

	Paths      []string // audit: transcript paths
	Arms       []string // audit: NAME=PATH
	AllowMixed bool
}

// NewCmdReport builds `tune report` and its subcommands.
func NewCmdReport(f *Factory) *cobra.Command {
	return newCmdReport(f, nil)
}

func newCmdReport(f *Factory, runF func(*reportOptions) error) *cobra.Command {
	opts := &reportOptions{IO: f.IO, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "report <command>",
		Short: "Write an EVAL report (Markdown with SVG charts) for a proposal, the weights history or an audit",
		Long: `Write an EVAL report under --out (default the --reports-dir, "reports"): a Markdown file with
SVG charts beside it, meant to be read in a pull request.

Reports are byte-for-byte reproducible: the same input gives the same bytes and the same file
names (proposal-<id>.md, history-<hash>.md, audit-<hash>.md; the hash is of the report's input), so regenerating one
changes nothing and a diff shows only what really changed. Task titles and labels pass through a
redaction of secret-looking strings (API keys, tokens, passwords in URLs); no transcript text is
ever copied into a report.

tune propose and tune nightly write the proposal report themselves (tune audit --report the audit
report); these commands write one on demand. The written paths are printed one per line (--json: {"report", "files", ...}).`,
		Example: `  tune report proposal
  tune report proposal weights/proposals/p-4f1c2a9be07d.json --out /tmp/review
  tune report history --json
  tune report audit --arm high=runs/high --arm xhigh=runs/xhigh`,
		Args: cobra.ArbitraryArgs,
		// A parent without RunE would print its help and exit 0 even for "tune report bogus".
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return FlagErrorf("unknown report %q: want proposal, history or audit", args[0])
			}
			return FlagErrorf("which report? tune report proposal|history|audit")
		},
	}
	cmd.PersistentFlags().StringVar(&opts.OutDir, "out", "", "write the report into `DIR` (default the --reports-dir)")
	cmd.PersistentFlags().BoolVar(&opts.JSON, "json", false, "print the written files as JSON")

	run := func(kind string) func(*cobra.Command, []string) error {
		return func(_ *cobra.Command, args []string) error {
			opts.Kind, opts.Now, opts.WeightsDir, opts.FixturesDir = kind, f.Now, f.WeightsDir, f.FixturesDir
			if opts.OutDir == "" {
				opts.OutDir = f.ReportsDir
			}
			switch {
			case kind == "audit":
				opts.Paths = args
			case len(args) > 0:
				opts.Proposal = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return reportRun(opts)
		}
	}

	proposal := &cobra.Command{
		Use:   "proposal [PROPOSAL]",
		Short: "Report on a proposal: evidence, screen, every attempt, replay per scenario, weight diff",
		Long: `Write the EVAL report of a proposal (a file, or an id under <weights-dir>/proposals/; default the
newest proposal there): the window of trace history, the flagged tasks with their evidence, the
signal screen, every attempt with its decision, the replay of every fixture scenario before and after
with a chart, the guardrails (sign test, leave-one-out, holdout) and the weight diff.

The window and the screen are not stored in the proposal file. They are recovered by re-running the
evolution step on the trace logs the proposal came from (--logs, default the logs of its flagged
tasks) against its parent version; the re-run must give the same proposal id, else those sections say
"not recorded" and the rest comes from the file and a fresh replay of the fixtures.`,
		Example: `  tune report proposal
  tune report proposal p-4f1c2a9be07d --logs projects/api/.ldd/trace.log --logs projects/web/.ldd/trace.log`,
		Args: cobra.MaximumNArgs(1),
		RunE: run("proposal"),
	}
	proposal.Flags().StringArrayVar(&opts.Logs, "logs", nil, "a trace `LOG` the proposal was made from (repeatable)")

	history := &cobra.Command{
		Use:   "history",
		Short: "Report on the weights history: every version and attempt, loss by generation, weight trajectory",
		Long: `Write the EVAL report of the weights store: every version with its changes, every evolution log
entry (attempts, applies, rollbacks), a chart of suite loss by generation with accepted, halved,
reverted, applied and rolled-back steps marked, and the trajectory of every weight that changed.`,
		Example: `  tune report history --out reports/`,
		Args:    cobra.NoArgs,
		RunE:    run("history"),
	}
	cmd.AddCommand(proposal, history, newCmdReportAudit(opts, run))
	return cmd
}

type reportResult struct {
	Report string   `json:"report"`
	Files  []string `json:"files"`
	// Replayed is true when the proposal's window and screen were recovered from its trace logs.
	Replayed *bool    `json:"replayed,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

func reportRun(opts *reportOptions) error {
	var res reportResult
	var err error
	switch opts.Kind {
	case "proposal":
		res, err = proposalReportRun(opts)
	case "history":
		res, err = historyReportRun(opts)
	case "audit":
		res, err = auditReportRun(opts)
	default:
		err = fmt.Errorf("unknown report %q", opts.Kind)
	}
	if err != nil {
		return err
	}
	for _, n := range res.Notes {
		fmt.Fprintf(opts.IO.ErrOut, "tune: note: %s\n", n)
	}
	if opts.JSON {
		return storeWriteJSON(opts.IO.Out, res)
	}
	for _, p := range res.Files {
		fmt.Fprintln(opts.IO.Out, p)
	}
	return nil
}

// --- proposal

func proposalReportRun(opts *reportOptions) (reportResult, error) {
	res := reportResult{Report: "proposal"}
	s, err := store.Open(opts.WeightsDir, nil)
	if err != nil {
		return res, err
	}
	var p *store.Proposal
	if opts.Proposal != "" {
		p, err = readProposalArg(opts.WeightsDir, opts.Proposal)
	} else {
		p, err = newestProposal(opts.WeightsDir)
	}
	if err != nil {
		return res, err
	}
	parent, err := s.Version(p.Parent)
	if err != nil {
		return res, fmt.Errorf("proposal %s: parent version: %w", p.ID, err)
	}
	in, replayed, notes := recoverProposalReport(opts, p, parent)
	res.Replayed, res.Notes = &replayed, notes
	res.Files, err = report.WriteProposal(opts.OutDir, in)
	return res, err
}

// newestProposal is the proposal in <weights>/proposals/ with the latest created time (ties: the smaller
// id), whatever its decision: a reverted proposal deserves a report too.
func newestProposal(weightsDir string) (*store.Proposal, error) {
	dir := filepath.Join(weightsDir, store.ProposalsDir)
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var newest *store.Proposal
	for _, path := range paths {
		p, err := store.ReadProposal(path)
		if err != nil {
			return nil, err
		}
		if newest == nil || p.Created.After(newest.Created) || (p.Created.Equal(newest.Created) && p.ID < newest.ID) {
			newest = p
		}
	}
	if newest == nil {
		return nil, fmt.Errorf("no proposal in %s (tune propose writes them; or pass a PROPOSAL file)", dir)
	}
	return newest, nil
}

// recoverProposalReport re-runs the evolution step that made p, on its trace logs against its parent, and
// uses the full result when it reproduces p (same content id). Otherwise the report holds what the file
// has, plus a fresh replay of the fixtures under the parent and the candidate.
func recoverProposalReport(opts *reportOptions, p *store.Proposal, parent weights.Weights) (report.ProposalReport, bool, []string) {
	var notes []string
	logs := opts.Logs
	if len(logs) == 0 {
		logs = evidenceSources(p)
	}
	fx, fxErr := fixtures.LoadSuite(opts.FixturesDir)
	if fxErr != nil {
		notes = append(notes, fmt.Sprintf("fixtures: %v; the report has no replay", fxErr))
	}
	if fxErr == nil && len(logs) > 0 {
		step, why := rerunStep(opts, p, parent, logs, fx)
		if step != nil {
			return ProposalReportFromSteps([]*evolve.StepResult{step}, parent, p), true, notes
		}
		notes = append(notes, "window and screen not recovered: "+why)
	}
	in := proposalReportFromFile(p, parent)
	if fxErr == nil {
		suite := evolve.PrepareSuite(fx.Scenarios)
		in.Replay = replayRows(suite.Score(&parent), suite.Score(&p.Candidate))
	}
	return in, false, notes
}

func evidenceSources(p *store.Proposal) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range p.Evidence {
		if f.Source != "" && !seen[f.Source] {
			seen[f.Source] = true
			out = append(out, f.Source)
		}
	}
	sort.Strings(out)
	return out
}

// rerunStep runs the step of propose again and returns it when it reproduces p; why says otherwise.
func rerunStep(opts *reportOptions, p *store.Proposal, parent weights.Weights, logs []string, fx fixtures.Suite) (*evolve.StepResult, string) {
	for _, l := range logs {
		if _, err := os.Stat(l); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Sprintf("trace log %s is not here (pass --logs)", l)
		}
	}
	_, read, err := readTraceLogs(logs)
	if err != nil {
		return nil, err.Error()
	}
	_, resolve, err := activeWeights(opts.WeightsDir)
	if err != nil {
		return nil, err.Error()
	}
	step, err := evolve.Step(evolve.StepInput{Tasks: read.Tasks, Parent: parent, WeightsFor: resolve,
		Suite: evolve.PrepareSuite(fx.Scenarios), Holdout: evolve.PrepareSuite(fx.Holdout)})
	if err != nil {
		return nil, err.Error()
	}
	if again := buildProposal(step, &parent, p.Created); again.ComputeID() != p.ID {
		return nil, fmt.Sprintf("re-running the step on %s gives %s, not %s (the logs moved on, or other logs were read: pass --logs)",
			strings.Join(logs, ", "), again.ComputeID(), p.ID)
	}
	step.Warnings = append(parseWarnings(read), step.Warnings...)
	return step, ""
}

// ProposalReportFromSteps converts evolution steps into the proposal report's input. steps holds one step
// for tune propose and the whole chain for tune evolve / nightly (window, flagged tasks and screen come
// from the first step; attempts from all; the replay compares the original parent with the final
// candidate). p is the proposal written for them (its id names the report).
//
// propose, evolve and nightly call it and then report.WriteProposal(dir, in).
func ProposalReportFromSteps(steps []*evolve.StepResult, parent weights.Weights, p *store.Proposal) report.ProposalReport {
	in := proposalReportFromFile(p, parent)
	if len(steps) == 0 {
		return in
	}
	first, last := steps[0], steps[len(steps)-1]
	in.Window = reportWindow(first.Detection)
	in.Flagged = reportFlagged(first.Flagged)
	chosen := ""
	if first.Tried != nil && first.Tried.Kind == evolve.ChangeSignal {
		chosen = first.Tried.Signal.String()
	}
	in.Screen = make([]report.ScreenRow, len(first.Screen))
	for i, r := range first.Screen {
		verdict := r.Verdict
		if r.Confidence != "" && r.Confidence != r.Verdict {
			verdict += " (" + r.Confidence + ")"
		}
		in.Screen[i] = report.ScreenRow{Signal: r.Signal, A: r.A, B: r.B, C: r.C, D: r.D, Phi: float64(r.Phi),
			LogOdds: float64(r.LogOR), Z: float64(r.Z), FisherP: float64(r.P), HolmP: float64(r.HolmP), MinP: float64(r.MinP),
			Consistent: r.Consistent, Verdict: verdict, Chosen: r.Signal == chosen}
	}
	if first.Detection.Proposal == nil && first.Reason != "" && strings.HasPrefix(first.Reason, "no consistent pattern") {
		in.NoPattern = "no consistent pattern"
	}
	in.Attempts = nil
	var decisive *evolve.Attempt
	for si, st := range steps {
		for ai := range st.Attempts {
			a := &st.Attempts[ai]
			in.Attempts = append(in.Attempts, reportAttempt(si+1, a))
			if decisive == nil || a.Accepted || !decisive.Accepted {
				decisive = a
			}
		}
	}
	if decisive != nil {
		in.Discordant = &report.SignTest{Better: decisive.Discordant.Improved, Worse: decisive.Discordant.Worsened,
			P: float64(decisive.Discordant.P), MinP: float64(decisive.Discordant.MinP), Verdict: decisive.Discordant.Verdict}
		in.LeaveOneOut = &report.LeaveOneOut{Agree: decisive.LOO.Agree, Folds: decisive.LOO.Folds, Flips: decisive.LOO.Flips}
	}
	in.Replay = replayRows(first.Before, last.After)
	in.SuiteLossBefore, in.SuiteLossAfter = float64(first.SuiteLossBefore), float64(last.SuiteLossAfter)
	h := last.Holdout
	in.Holdout = &report.Holdout{Scenarios: h.Scenarios, Reads: h.Reads, Verdict: h.Verdict,
		LossBefore: numPtr(h.LossBefore), LossAfter: numPtr(h.LossAfter)}
	for _, st := range steps {
		for _, w := range st.Warnings {
			in.Warnings = append(in.Warnings, warningText(w))
		}
	}
	return in
}

// proposalReportFromFile is what a proposal file holds: decision, losses, flagged tasks (without their
// signals), every step with the screen numbers it stored, and the weight diff.
func proposalReportFromFile(p *store.Proposal, parent weights.Weights) report.ProposalReport {
	in := report.ProposalReport{ID: p.ID, Created: p.Created, Parent: p.Parent, Decision: p.Decision, Reason: p.Reason,
		Confidence: p.Confidence, SuiteLossBefore: p.SuiteLossBefore, SuiteLossAfter: p.SuiteLossAfter,
		Before: parent, After: p.Candidate}
	for _, f := range p.Evidence {
		in.Flagged = append(in.Flagged, report.FlaggedTask{MetaTimestamp: f.MetaTimestamp, Title: f.Title, Level: f.Level,
			Source: f.Source, Evidence: f.Evidence})
	}
	seen := map[string]bool{}
	for i, st := range p.Steps {
		change := st.Signal + " " + st.Delta.String()
		if st.Kind == evolve.ChangeBucket {
			change = "bucket " + st.Edge + " edge " + st.Delta.String()
		}
		in.Attempts = append(in.Attempts, report.Attempt{Change: change, Decision: st.Decision,
			SuiteLossBefore: st.SuiteLossBefore, SuiteLossAfter: st.SuiteLossAfter})
		// The screen rows a proposal stores are those of the signals it changed; the rest are recomputed
		// from the counts (Holm needs all nine signals, so only the stored adjusted p is shown).
		if st.Counts == nil || seen[st.Signal] {
			continue
		}
		seen[st.Signal] = true
		c := st.Counts
		logOR, _, z := stats.LogOddsZ(c.A, c.B, c.C, c.D)
		row := report.ScreenRow{Signal: st.Signal, A: c.A, B: c.B, C: c.C, D: c.D, Phi: stats.Phi(c.A, c.B, c.C, c.D),
			LogOdds: logOR, Z: z, FisherP: deref(st.FisherP), HolmP: deref(st.HolmP), MinP: stats.FisherMinP(c.A, c.B, c.C, c.D),
			Verdict: strings.TrimSpace("candidate " + parenthesised(st.Confidence)), Chosen: i == 0}
		in.Screen = append(in.Screen, row)
	}
	return in
}

func reportWindow(det *evolve.Detection) *report.Window {
	win := &report.Window{Size: det.Window.Size, Triggered: det.Triggered, Trigger: evolve.TriggerThreshold}
	for _, l := range det.Window.Logs {
		win.Logs = append(win.Logs, report.WindowLog{Source: l.Source, Labelled: l.Labelled, Tasks: l.Tasks, Closed: l.Closed,
			Eligible: l.Eligible, MedianLossFinal: numPtr(l.Median), First: l.First, Last: l.Last})
	}
	return win
}

func reportFlagged(flagged []evolve.Flagged) []report.FlaggedTask {
	out := make([]report.FlaggedTask, len(flagged))
	for i := range flagged {
		f := &flagged[i]
		signals := make([]string, len(f.Signals))
		for j, s := range f.Signals {
			signals[j] = s.Name
		}
		out[i] = report.FlaggedTask{MetaTimestamp: f.MetaTimestamp, Title: f.Title, Level: f.Level, Source: f.Source, Line: f.Line,
			Evidence: f.EvidenceStrings(), Signals: signals, Redetected: f.SignalsSource == evolve.SignalsReDetected}
	}
	return out
}

func reportAttempt(step int, a *evolve.Attempt) report.Attempt {
	worse := make([]string, len(a.Worse))
	for i, d := range a.Worse {
		worse[i] = fmt.Sprintf("%s %d→%d", d.Name, d.Before, d.After)
	}
	up := 0
	for _, m := range a.Motivating {
		if m.Moved == "up" {
			up++
		}
	}
	note := ""
	if !a.Accepted {
		note = a.Reason
	}
	return report.Attempt{Step: step, Change: a.Change.String(), Decision: a.Decision, SuiteLossBefore: float64(a.SuiteLossBefore),
		SuiteLossAfter: float64(a.SuiteLossAfter), ScenariosWorse: worse, MotivatingUp: up, Motivating: len(a.Motivating), Note: note}
}

// replayRows pairs the scenarios of two replays of the same suite by position.
func replayRows(before, after evolve.Replay) []report.ScenarioLoss {
	rows := make([]report.ScenarioLoss, 0, len(before.Rows))
	for i, b := range before.Rows {
		if i >= len(after.Rows) {
			break
		}
		a := after.Rows[i]
		rows = append(rows, report.ScenarioLoss{Scenario: b.Name, Expected: strings.Join(b.Accepted, "|"),
			LevelBefore: b.Got, LevelAfter: a.Got, LossBefore: float64(b.Loss), LossAfter: float64(a.Loss)})
	}
	return rows
}

func warningText(w evolve.Warning) string {
	loc := w.Source
	if w.Line > 0 {
		loc = fmt.Sprintf("%s:%d", w.Source, w.Line)
	}
	if loc == "" {
		return w.Reason
	}
	return loc + ": " + w.Reason
}

func numPtr(n *evolve.Num) *float64 {
	if n == nil || math.IsNaN(float64(*n)) {
		return nil
	}
	v := float64(*n)
	return &v
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func parenthesised(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}

// --- history

func historyReportRun(opts *reportOptions) (reportResult, error) {
	res := reportResult{Report: "history"}
	in, err := HistoryReportFromStore(opts.WeightsDir)
	if err != nil {
		return res, err
	}
	res.Files, err = report.WriteHistory(opts.OutDir, in)
	return res, err
}

// HistoryReportFromStore reads every version and the evolution log of the weights store in dir into the
// history report's input. Evidence is carried as a count: the log's evidence lines quote task titles,
// which the report does not need to repeat.
func HistoryReportFromStore(dir string) (report.HistoryReport, error) {
	var in report.HistoryReport
	s, err := store.Open(dir, nil)
	if err != nil {
		return in, err
	}
	if in.Active, err = s.ActiveVersion(); err != nil {
		return in, err
	}
	nums, err := s.Versions()
	if err != nil {
		return in, err
	}
	for _, n := range nums {
		w, err := s.Version(n)
		if err != nil {
			return in, err
		}
		in.Versions = append(in.Versions, w)
	}
	entries, err := s.Entries()
	if err != nil {
		return in, err
	}
	for _, e := range entries {
		in.Entries = append(in.Entries, report.HistoryEntry{Serial: e.Serial, Time: e.Time, Action: e.Action, Parent: e.Parent,
			Result: e.Result, Restores: e.Restores, Proposal: e.Proposal, Change: e.Change, Decision: e.Decision,
			SuiteLossBefore: e.SuiteLossBefore, SuiteLossAfter: e.SuiteLossAfter, Evidence: len(e.Evidence), Reason: e.Reason})
	}
	return in, nil
}
