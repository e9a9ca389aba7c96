package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/fixtures"
	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/weights"
)

// EscalationDoc is the playbook an escalation points to.
const EscalationDoc = "docs/escalation.md"

type evolveOptions struct {
	IO          *IOStreams
	Now         func() time.Time
	Getenv      func(string) string
	WeightsDir  string
	FixturesDir string
	ReportsDir  string
	Logs        []string
	JSON        bool
	Apply       bool
	// MaxSteps and StallBound: 0 takes the config file's value, else the default in code.
	MaxSteps   int
	StallBound int
	ConfigPath string
}

// NewCmdEvolve builds `tune evolve`.
func NewCmdEvolve(f *Factory) *cobra.Command { return newCmdEvolve(f, nil) }

func newCmdEvolve(f *Factory, runF func(*evolveOptions) error) *cobra.Command {
	opts := &evolveOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "evolve [LOG...]",
		Short: "Repeat detect → propose → replay → decide while low-side regressions remain",
		Long: `Run evolution steps (see tune propose) on the trace logs (default ` + DefaultTraceLog + `) until
the pattern is resolved. After an accepted step, the flagged tasks the candidate lifts out of the
low side (L0/L1) count as resolved and the candidate is the next step's parent; the loop goes on
while 3 or more unresolved flagged tasks remain. A reverted change is not proposed again until a
later step is accepted.

Each step's progress is measured, never claimed: the witness is the suite loss plus the points the
unresolved flagged tasks still lack to leave the low side. The loop stops as
  converged      fewer than 3 unresolved flagged tasks remain
  stalled        --stall-bound consecutive steps did not lower the witness (default 2)
  escalated      the step cap (--max-steps, default 8) was reached while progressing: exit code 3,
                 a JSON state dump is written next to the reports and the output points to
                 ` + EscalationDoc + `; every accepted step is kept in the pending proposal
  nothing-to-do  the window never triggered

The accepted steps accumulate into one pending proposal under <weights-dir>/proposals/ (the chain
of steps is in it and in the evolution log). Nothing is applied unless --apply is given.
Defaults for --max-steps and --stall-bound can be set in a config file (--config, default tune.toml
when it exists):
  [evolve]
  max_steps = 8
  stall_bound = 2

--json prints {"outcome", "reason", "steps": [{"n", "decision", "signal" | "edge", "delta",
"suite_loss_before", "suite_loss_after", "witness_before", "witness_after", "progress", "lifted"}],
"proposal": null | {"id", "file", "decision", "weights": {"signals", "buckets"}}, "state_dump",
"applied"}.`,
		Example: `  tune evolve
  tune evolve projects/*/.ldd/trace.log --max-steps 4 --json | jq .outcome
  tune evolve --apply`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.bind(f, args); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			out, err := runEvolve(opts)
			if err != nil {
				return err
			}
			if err := printEvolve(opts, out); err != nil {
				return err
			}
			return out.exitError()
		},
	}
	addEvolveFlags(cmd, opts)
	return cmd
}

// bind takes the factory's clock, environment and directories and the LOG arguments, and checks the flags.
func (opts *evolveOptions) bind(f *Factory, logs []string) error {
	opts.Now, opts.Getenv, opts.Logs = f.Now, f.Getenv, logs
	opts.WeightsDir, opts.FixturesDir, opts.ReportsDir = f.WeightsDir, f.FixturesDir, f.ReportsDir
	if opts.MaxSteps < 0 || opts.StallBound < 0 {
		return FlagErrorf("--max-steps and --stall-bound must be positive")
	}
	return nil
}

func addEvolveFlags(cmd *cobra.Command, opts *evolveOptions) {
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the run as JSON")
	cmd.Flags().BoolVar(&opts.Apply, "apply", false, "apply the accumulated proposal to the weights store")
	cmd.Flags().IntVar(&opts.MaxSteps, "max-steps", 0, fmt.Sprintf("global cap on steps; reaching it escalates (default %d)", evolve.DefaultMaxSteps))
	cmd.Flags().IntVar(&opts.StallBound, "stall-bound", 0, fmt.Sprintf("consecutive steps without progress before the loop stalls (default %d)", evolve.DefaultStallBound))
	cmd.Flags().StringVar(&opts.ConfigPath, "config", "", "config `file` with an [evolve] table (default tune.toml when present; env TUNE_CONFIG)")
}

// evolveConfig is the optional config file.
type evolveConfig struct {
	Evolve struct {
		MaxSteps   int `toml:"max_steps"`
		StallBound int `toml:"stall_bound"`
	} `toml:"evolve"`
}

// loopConfig merges flags over the config file over the defaults in code.
func loopConfig(opts *evolveOptions) (evolve.LoopConfig, error) {
	path, explicit := opts.ConfigPath, opts.ConfigPath != ""
	if !explicit && opts.Getenv != nil {
		path, explicit = opts.Getenv("TUNE_CONFIG"), opts.Getenv("TUNE_CONFIG") != ""
	}
	if path == "" {
		path = "tune.toml"
	}
	var cfg evolveConfig
	md, err := toml.DecodeFile(path, &cfg)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !explicit:
	case err != nil:
		return evolve.LoopConfig{}, fmt.Errorf("config %s: %w", path, err)
	default:
		if und := md.Undecoded(); len(und) > 0 {
			return evolve.LoopConfig{}, fmt.Errorf("config %s: unknown key %s (the [evolve] table takes max_steps and stall_bound)", path, und[0])
		}
		if cfg.Evolve.MaxSteps < 0 || cfg.Evolve.StallBound < 0 {
			return evolve.LoopConfig{}, fmt.Errorf("config %s: evolve.max_steps and evolve.stall_bound must be positive", path)
		}
	}
	lc := evolve.LoopConfig{MaxSteps: cfg.Evolve.MaxSteps, StallBound: cfg.Evolve.StallBound}
	if opts.MaxSteps > 0 {
		lc.MaxSteps = opts.MaxSteps
	}
	if opts.StallBound > 0 {
		lc.StallBound = opts.StallBound
	}
	return lc, nil
}

// evolveStep is one loop step as --json prints it.
type evolveStep struct {
	N               int              `json:"n"`
	Decision        string           `json:"decision"`
	Kind            string           `json:"kind,omitempty"`
	Signal          string           `json:"signal,omitempty"`
	Edge            string           `json:"edge,omitempty"`
	Delta           *evolve.Points   `json:"delta"`
	SuiteLossBefore evolve.Num       `json:"suite_loss_before"`
	SuiteLossAfter  evolve.Num       `json:"suite_loss_after"`
	WitnessBefore   evolve.Num       `json:"witness_before"`
	WitnessAfter    evolve.Num       `json:"witness_after"`
	Progress        bool             `json:"progress"`
	Unresolved      int              `json:"unresolved"`
	Lifted          []string         `json:"lifted"`
	Attempts        []evolve.Attempt `json:"attempts"`
	Reason          string           `json:"reason"`
}

type evolveProposal struct {
	ID       string                `json:"id"`
	File     string                `json:"file"`
	Decision string                `json:"decision"`
	Created  bool                  `json:"created"`
	Weights  evolveProposalWeights `json:"weights"`
}

type evolveProposalWeights struct {
	Signals store.NumberMap `json:"signals"`
	Buckets store.NumberMap `json:"buckets"`
}

// evolveOutcome is what `tune evolve` and `tune nightly` print.
type evolveOutcome struct {
	Outcome   string            `json:"outcome"`
	Reason    string            `json:"reason"`
	Parent    string            `json:"parent"`
	Config    evolve.LoopConfig `json:"config"`
	Steps     []evolveStep      `json:"steps"`
	Proposal  *evolveProposal   `json:"proposal"`
	StateDump *string           `json:"state_dump"`
	Applied   *string           `json:"applied"`
	Reports   []string          `json:"reports,omitempty"`
	Warnings  []evolve.Warning  `json:"warnings"`

	loop     *evolve.LoopResult
	proposal *store.Proposal
	tails    tailLines
}

// exitError maps the outcome to the process result: an escalation exits 3.
func (o *evolveOutcome) exitError() error {
	if o.Outcome == evolve.OutcomeEscalated {
		return &EscalationError{Reason: o.Reason + "; see " + EscalationDoc}
	}
	return nil
}

// runEvolve runs the loop and writes its proposal (and, on escalation, the state dump). It prints
// nothing: evolve and nightly print the outcome their own way.
func runEvolve(opts *evolveOptions) (*evolveOutcome, error) {
	cfg, err := loopConfig(opts)
	if err != nil {
		return nil, err
	}
	parent, resolver, err := activeWeights(opts.WeightsDir)
	if err != nil {
		return nil, err
	}
	fx, err := fixtures.LoadSuite(opts.FixturesDir)
	if err != nil {
		return nil, err
	}
	_, read, err := readTraceLogs(opts.Logs)
	if err != nil {
		return nil, err
	}
	res, err := evolve.Loop(evolve.LoopInput{Tasks: read.Tasks, Parent: parent, WeightsFor: resolver,
		Suite: evolve.PrepareSuite(fx.Scenarios), Holdout: evolve.PrepareSuite(fx.Holdout), Config: cfg})
	if err != nil {
		return nil, err
	}
	out := &evolveOutcome{Outcome: res.Outcome, Reason: res.Reason, Parent: weights.VersionName(parent.Version),
		Config: res.Config, Steps: []evolveStep{}, loop: res, tails: newTailLines(read),
		Warnings: append(parseWarnings(read), res.Detection.Warnings...)}
	for _, s := range res.Steps {
		out.Steps = append(out.Steps, jsonStep(s))
	}
	if len(res.Steps) > 0 {
		p, path, created, err := writeProposalOnce(opts.WeightsDir, proposalFromSteps(stepResults(res), &parent, res.Final, opts.Now()))
		if err != nil {
			return nil, err
		}
		out.proposal = p
		sig, bkt, _ := store.WeightsJSON(&p.Candidate)
		out.Proposal = &evolveProposal{ID: p.ID, File: path, Decision: p.Decision, Created: created,
			Weights: evolveProposalWeights{Signals: sig, Buckets: bkt}}
		if err := logLoopAttempts(opts, p, res); err != nil {
			return nil, err
		}
	}
	if res.Outcome == evolve.OutcomeEscalated {
		path, err := writeStateDump(opts.ReportsDir, out)
		if err != nil {
			return nil, err
		}
		out.StateDump = &path
	}
	if opts.Apply && out.proposal != nil && out.proposal.Applicable() {
		s, err := store.Open(opts.WeightsDir, opts.Now)
		if err != nil {
			return nil, err
		}
		s.FixturesDir = opts.FixturesDir
		w, err := s.Apply(out.proposal)
		if err != nil && !errors.Is(err, store.ErrNothingToDo) {
			return nil, fmt.Errorf("apply %s: %w", out.proposal.ID, err)
		}
		if err == nil {
			v := weights.VersionName(w.Version)
			out.Applied = &v
		}
	}
	return out, nil
}

// writeProposalOnce writes p as a pending proposal unless the same proposal is already pending; then it
// returns the stored one, so a re-run reports exactly what the first run wrote (its created time too).
func writeProposalOnce(weightsDir string, p *store.Proposal) (*store.Proposal, string, bool, error) {
	path, created, err := store.WriteProposal(filepath.Join(weightsDir, store.ProposalsDir), p)
	if err != nil || created {
		return p, path, created, err
	}
	stored, err := store.ReadProposal(path)
	return stored, path, false, err
}

func stepResults(res *evolve.LoopResult) []*evolve.StepResult {
	out := make([]*evolve.StepResult, len(res.Steps))
	for i := range res.Steps {
		out[i] = res.Steps[i].StepResult
	}
	return out
}

func jsonStep(s evolve.LoopStep) evolveStep {
	js := evolveStep{N: s.N, Decision: s.Decision, SuiteLossBefore: s.SuiteLossBefore, SuiteLossAfter: s.SuiteLossAfter,
		WitnessBefore: s.WitnessBefore, WitnessAfter: s.WitnessAfter, Progress: s.Progress, Unresolved: s.Unresolved,
		Lifted: s.Lifted, Attempts: s.Attempts, Reason: s.Reason}
	c := s.Change
	if c == nil {
		c = s.Tried
	}
	if c != nil {
		js.Kind = c.Kind
		d := evolve.Points(c.Delta)
		js.Delta = &d
		if c.Kind == evolve.ChangeBucket {
			js.Edge = c.Edge.String()
		} else {
			js.Signal = c.Signal.String()
		}
	}
	return js
}

// proposalFromSteps turns one or more evolution steps into the store's proposal: every attempt of every
// step in order, the candidate with every accepted change, and the flagged tasks of the first step.
// A run without an accepted change keeps the parent weights as its candidate (nothing to apply).
func proposalFromSteps(steps []*evolve.StepResult, parent *weights.Weights, final weights.Weights, now time.Time) *store.Proposal {
	first, last := steps[0], steps[len(steps)-1]
	p := &store.Proposal{Created: now.UTC(), Parent: parent.Version, Candidate: final,
		SuiteLossBefore: float64(first.SuiteLossBefore), SuiteLossAfter: float64(last.SuiteLossAfter)}
	var parts []string
	accepted := []string{}
	for _, res := range steps {
		for _, a := range res.Attempts {
			st := store.ProposalStep{Kind: a.Change.Kind, Delta: a.Change.Delta, Decision: a.Decision,
				SuiteLossBefore: float64(a.SuiteLossBefore), SuiteLossAfter: float64(a.SuiteLossAfter)}
			if a.Change.Kind == evolve.ChangeBucket {
				st.Edge = a.Change.Edge.String()
			} else {
				st.Signal = a.Change.Signal.String()
				row := res.Screen[a.Change.Signal]
				fisher, holm := float64(row.P), float64(row.HolmP)
				st.Counts = &store.TwoByTwo{A: row.A, B: row.B, C: row.C, D: row.D}
				st.FisherP, st.HolmP, st.Confidence = &fisher, &holm, row.Confidence
			}
			p.Steps = append(p.Steps, st)
			parts = append(parts, fmt.Sprintf("%s: %s", a.Change, a.Decision))
		}
		if res.Change != nil {
			accepted = append(accepted, res.Decision)
			if res.Change.Kind == evolve.ChangeSignal && p.Confidence == "" {
				p.Confidence = res.Screen[res.Change.Signal].Confidence
			}
		}
	}
	// The run's decision: accept when a full step was kept, halve when only half steps were; without a
	// kept change, revert when something was measured (the last step may have had nothing left to try),
	// else none.
	switch {
	case slices.Contains(accepted, evolve.DecisionAccept):
		p.Decision = evolve.DecisionAccept
	case len(accepted) > 0:
		p.Decision = evolve.DecisionHalve
	case len(p.Steps) > 0:
		p.Decision = evolve.DecisionRevert
	default:
		p.Decision = evolve.DecisionNone
	}
	for _, f := range first.Flagged {
		// Proposal files travel into pull requests: a secret-looking string in a title never goes with them.
		title := report.Redact(f.Title)
		ft := store.FlaggedTask{MetaTimestamp: f.MetaTimestamp, Title: title, Level: f.Level, Source: f.Source,
			Evidence: f.EvidenceStrings()}
		// The trace keeps a title, not the prompt. Only when the signals were re-detected from the title
		// is the title what the scorer judged, and so a prompt worth harvesting as a fixture.
		if f.SignalsSource == evolve.SignalsReDetected {
			ft.Prompt = title
		}
		p.Evidence = append(p.Evidence, ft)
	}
	p.Reason = fmt.Sprintf("%d flagged task(s); %s; %s", len(first.Flagged), first.Reason, strings.Join(parts, ", "))
	return p
}

// logLoopAttempts appends every attempt of every step to the evolution log, once per proposal (see
// openUnlogged).
func logLoopAttempts(opts *evolveOptions, p *store.Proposal, res *evolve.LoopResult) error {
	s, err := openUnlogged(opts.WeightsDir, opts.Now, p.ID)
	if s == nil || err != nil {
		return err
	}
	for _, step := range res.Steps {
		if err := appendAttemptLog(s, p, step.Attempts, fmt.Sprintf("evolve step %d: ", step.N)); err != nil {
			return err
		}
	}
	return nil
}

// stateDump is what a human needs after an escalation: where the loop stands, and why.
type stateDump struct {
	Outcome  string            `json:"outcome"`
	Reason   string            `json:"reason"`
	Playbook string            `json:"playbook"`
	Config   evolve.LoopConfig `json:"config"`
	Versions stateVersions     `json:"versions"`
	Window   evolve.Window     `json:"window"`
	Flagged  []evolve.Flagged  `json:"flagged"`
	Resolved []string          `json:"resolved"`
	Screens  []stateScreen     `json:"screens"`
	Steps    []evolveStep      `json:"steps"`
	Proposal *store.Proposal   `json:"proposal"`
	Warnings []evolve.Warning  `json:"warnings"`
}

type stateVersions struct {
	Parent    string `json:"parent"`
	Candidate string `json:"candidate"`
}

type stateScreen struct {
	Step   int                `json:"step"`
	Screen []evolve.ScreenRow `json:"screen"`
}

// writeStateDump writes the escalation state next to the reports, named after the proposal.
func writeStateDump(dir string, out *evolveOutcome) (string, error) {
	res := out.loop
	d := stateDump{Outcome: out.Outcome, Reason: out.Reason, Playbook: EscalationDoc, Config: out.Config,
		Versions: stateVersions{Parent: out.Parent, Candidate: "pending proposal"},
		Window:   res.Detection.Window, Flagged: res.Detection.Flagged, Resolved: res.Resolved,
		Steps: out.Steps, Proposal: out.proposal, Warnings: out.Warnings}
	if out.proposal != nil {
		d.Versions.Candidate = out.proposal.ID
	}
	for _, s := range res.Steps {
		d.Screens = append(d.Screens, stateScreen{Step: s.N, Screen: s.Screen})
	}
	name := "evolve-state.json"
	if out.proposal != nil {
		name = "evolve-state-" + out.proposal.ID + ".json"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	f, err := os.CreateTemp(dir, ".state-*")
	if err != nil {
		return "", err
	}
	if err := storeWriteJSON(f, d); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return path, os.Rename(f.Name(), path)
}

func printEvolve(opts *evolveOptions, out *evolveOutcome) error {
	printWarnings(opts.IO.ErrOut, out.Warnings, out.tails)
	if opts.JSON {
		return storeWriteJSON(opts.IO.Out, out)
	}
	return printEvolveText(opts.IO.Out, out)
}

func printEvolveText(w io.Writer, out *evolveOutcome) error {
	fmt.Fprintf(w, "outcome: %s — %s\n", out.Outcome, out.Reason)
	if len(out.Steps) > 0 {
		t := storeTable(w, false)
		t.Header("Step", "Change", "Decision", "Suite loss", "Witness", "Progress", "Unresolved", "Lifted")
		for _, s := range out.Steps {
			change := "—"
			if s.Delta != nil {
				knob := s.Signal
				if s.Kind == evolve.ChangeBucket {
					knob = "bucket " + s.Edge
				}
				change = knob + " " + weights.Half(*s.Delta).String()
			}
			progress := "no"
			if s.Progress {
				progress = "yes"
			}
			if err := t.Append([]string{fmt.Sprint(s.N), change, s.Decision,
				fmt.Sprintf("%.3f → %.3f", float64(s.SuiteLossBefore), float64(s.SuiteLossAfter)),
				fmt.Sprintf("%.3f → %.3f", float64(s.WitnessBefore), float64(s.WitnessAfter)),
				progress, fmt.Sprint(s.Unresolved), fmt.Sprint(len(s.Lifted))}); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
		// Every measured attempt with its numbers, also the reverted ones the step table sums up.
		var attempts []evolve.Attempt
		var labels []string
		for _, s := range out.Steps {
			for i, a := range s.Attempts {
				attempts = append(attempts, a)
				labels = append(labels, fmt.Sprintf("%d.%d", s.N, i+1))
			}
		}
		if len(attempts) > 0 {
			fmt.Fprintln(w, "attempts:")
			if err := attemptsTable(w, attempts, labels); err != nil {
				return err
			}
		}
	}
	if p := out.Proposal; p != nil {
		state := "written"
		if !p.Created {
			state = "unchanged (same proposal already pending)"
		}
		fmt.Fprintf(w, "proposal %s (%s, parent %s): %s %s\n", p.ID, p.Decision, out.Parent, displayPath(p.File), state)
	}
	if out.Applied != nil {
		fmt.Fprintf(w, "applied: weights %s is now active\n", *out.Applied)
	}
	for _, r := range out.Reports {
		fmt.Fprintf(w, "report: %s\n", displayPath(r))
	}
	if out.StateDump != nil {
		fmt.Fprintf(w, "state dump: %s\n", displayPath(*out.StateDump))
		fmt.Fprintf(w, "escalated: a human decides next — read the state dump, then follow %s\n", EscalationDoc)
	}
	return nil
}
