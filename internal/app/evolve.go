package app

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/ldd-tools/tune/internal/atomicfile"
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/exitcode"
	"github.com/ldd-tools/tune/internal/explore"
	"github.com/ldd-tools/tune/internal/project"
	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/tomlbound"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/watch"
	"github.com/ldd-tools/tune/internal/weights"
)

// EscalationDoc is the playbook an escalation points to.
// It is a command, not a path: the playbook is embedded in the binary (docs/escalation.md in the source).
const EscalationDoc = "tune help escalation"

// EvolveOptions are tune evolve's (and tune nightly's) options.
type EvolveOptions struct {
	Logs  []string
	Apply bool
	// MaxSteps and StallBound: 0 takes the config file's value, else the default in code.
	MaxSteps   int
	StallBound int
	// ConfigPath is the config file ("" = TUNE_CONFIG, else tune.toml when it exists).
	ConfigPath string
	// nightState: the run starts from the nightly state the last night left and leaves its own
	// (docs/decisions.md#nightly-state); only Nightly sets it.
	nightState bool
	// watch is the night's watch, judged before the run decides anything: from the run's own read of
	// the logs when it can serve (watchRun.tapDetection), else from its own read before the run's; a
	// harmful verdict stops the run (errStoppedByWatch). Only Nightly sets it.
	watch *watchRun
	// Declined are branch names (tune/<parent>-<hash>) of changes a reviewer declined by closing their
	// pull request unmerged; only NightlyBranch reads them, and refuses on this parent the signals and
	// edges such a change moved (declinedChanges, added to the refuted raises).
	Declined        []string
	declinedChanges []evolve.Change
}

// EvolveStep is one loop step as tune evolve and nightly report it: the loop's step, and the change
// it names (Named). Its --json shape is flat (MarshalJSON).
type EvolveStep struct {
	evolve.LoopStep
}

// Named is the change the step names: the kept change, else the first one tried (nil when none was).
func (s *EvolveStep) Named() *evolve.Change {
	if s.Change != nil {
		return s.Change
	}
	return s.Tried
}

// MarshalJSON writes the step as --json prints it: the named change's kind, signal or edge and delta
// (delta null when no change was tried), the losses, the witness and the attempts.
func (s EvolveStep) MarshalJSON() ([]byte, error) {
	type flat struct {
		N               int                `json:"n"`
		Decision        weights.Decision   `json:"decision"`
		Kind            weights.ChangeKind `json:"kind,omitempty"`
		Signal          string             `json:"signal,omitempty"`
		Edge            string             `json:"edge,omitempty"`
		Delta           *weights.Half      `json:"delta"`
		SuiteLossBefore evolve.Num         `json:"suite_loss_before"`
		SuiteLossAfter  evolve.Num         `json:"suite_loss_after"`
		WitnessBefore   evolve.Num         `json:"witness_before"`
		WitnessAfter    evolve.Num         `json:"witness_after"`
		Progress        bool               `json:"progress"`
		Unresolved      int                `json:"unresolved"`
		Lifted          []string           `json:"lifted"`
		Attempts        []evolve.Attempt   `json:"attempts"`
		Reason          string             `json:"reason"`
	}
	j := flat{N: s.N, Decision: s.Decision, SuiteLossBefore: s.SuiteLossBefore, SuiteLossAfter: s.SuiteLossAfter,
		WitnessBefore: s.WitnessBefore, WitnessAfter: s.WitnessAfter, Progress: s.Progress, Unresolved: s.Unresolved,
		Lifted: s.Lifted, Attempts: s.Attempts, Reason: s.Reason}
	if c := s.Named(); c != nil {
		d := c.Delta
		j.Kind, j.Delta = c.Kind, &d
		if c.Kind == weights.ChangeBucket {
			j.Edge = c.Edge.String()
		} else {
			j.Signal = c.Signal.String()
		}
	}
	// Not json.Marshal: it would escape the reasons' "<", ">" and "&" before the caller's encoder, which
	// prints them as they are, sees them.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(j); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// EvolveProposal is the proposal a run wrote, as --json prints it.
type EvolveProposal struct {
	ID       string                `json:"id"`
	File     string                `json:"file"`
	Decision weights.Decision      `json:"decision"`
	Created  bool                  `json:"created"`
	Weights  EvolveProposalWeights `json:"weights"`
}

// EvolveProposalWeights are the candidate weights of a proposal.
type EvolveProposalWeights struct {
	Signals store.NumberMap `json:"signals"`
	Buckets store.NumberMap `json:"buckets"`
}

// EvolveResult is what tune evolve and tune nightly report (and their --json shape).
type EvolveResult struct {
	Outcome   string            `json:"outcome"`
	Reason    string            `json:"reason"`
	Parent    string            `json:"parent"`
	Config    evolve.LoopConfig `json:"config"`
	Steps     []EvolveStep      `json:"steps"`
	Proposal  *EvolveProposal   `json:"proposal"`
	StateDump *string           `json:"state_dump"`
	Applied   *string           `json:"applied"`
	Reports   []string          `json:"reports,omitempty"`
	// FilesOn is set by nightly --branch: the branch that holds the proposal and report files the result
	// names, which are in the work tree only once it is merged (git show BRANCH:PATH reads them before).
	// A --branch night that commits nothing new leaves them nowhere: their paths are then empty.
	FilesOn  string           `json:"files_on,omitempty"`
	Warnings []evolve.Warning `json:"warnings"`
	// Watch is what the nightly watch found on the applied version (nightly only); WatchNote says why
	// there was nothing to watch.
	Watch     *WatchResult `json:"watch,omitempty"`
	WatchNote string       `json:"watch_note,omitempty"`
	// Decision is the run's decision; Refused says why kept steps were dropped; Drift names the change
	// the drift bound stopped (the outcome is then escalated); Explain is the screen's population,
	// correction and ledger exclusions.
	Decision weights.Decision `json:"decision"`
	Refused  string           `json:"refused,omitempty"`
	Drift    *evolve.Drift    `json:"drift,omitempty"`
	// DriftHeld are the stops at the drift bound on knobs tune.toml acknowledges at their value: no page
	// (docs/escalation.md, "A drift bound a human has read").
	DriftHeld []evolve.HeldDrift `json:"drift_held,omitempty"`
	Explain   Explain            `json:"explain"`
	// Partial is set when the outcome is partial: the flagged tasks still low and the refusal that
	// stopped the run from going further (docs/decisions.md#partial-runs).
	Partial string `json:"partial,omitempty"`
	// Held are the changes issue 11's frozen holdout vetoed after every other rule let them through: a
	// conflict no rule settles, for a human (docs/escalation.md, "A change the holdout holds").
	Held []evolve.HoldoutChange `json:"held,omitempty"`
	// HoldoutPaid are the kept changes whose holdout loss the history's gain paid for, under tune.toml's
	// [evolve] holdout = "priced": the frozen scenarios the project chose to overrule, said where its
	// reviewer looks (docs/decisions.md#the-holdout-priced-on-request).
	HoldoutPaid []evolve.HoldoutChange `json:"holdout_paid,omitempty"`

	// Loop is the loop's full result; Stored the proposal written for it (nil when no step ran) and
	// ReportInput its report's input, saved beside it; Tails the logs whose line numbers count from a
	// tail read.
	Loop        *evolve.LoopResult     `json:"-"`
	Stored      *store.Proposal        `json:"-"`
	ReportInput *report.ProposalReport `json:"-"`
	Tails       []traceparse.Tail      `json:"-"`
	// Tasks counts the tasks of the logs (nightly's empty-log alert); TakenUp those of them the nightly
	// states gave, not read tonight.
	Tasks   int `json:"-"`
	TakenUp int `json:"-"`
}

// HeldLine says which changes the holdout holds and who decides: what follows "held: " in the summary
// and in the proposal's reason (docs/escalation.md, "A change the holdout holds").
func HeldLine(held []evolve.HoldoutChange) string {
	names, it := holdoutNames(held)
	return names + " by the frozen holdout: the project's evidence and the stated losses want " + it +
		", the holdout refuses " + it + " whatever the evidence; a human decides (" + EscalationDoc + `, "A change the holdout holds")`
}

// HoldoutPaidLine says which kept changes overrule the frozen holdout and on what ground: what follows
// "holdout paid: " in the summary and in the proposal's reason, so the pull request's reviewer sees it.
func HoldoutPaidLine(paid []evolve.HoldoutChange) string {
	names, _ := holdoutNames(paid)
	return names + `: the history's expected gain pays for the loss added on the frozen holdout, as tune.toml's [evolve] holdout = "priced" asks (docs/decisions.md, "The holdout, priced on request")`
}

// holdoutNames lists the changes and the pronoun that stands for them.
func holdoutNames(changes []evolve.HoldoutChange) (names, it string) {
	s := make([]string, len(changes))
	for i, h := range changes {
		s[i] = h.String()
	}
	it = "it"
	if len(changes) > 1 {
		it = "them"
	}
	return strings.Join(s, ", "), it
}

// Escalated reports whether the run needs a human (exit code 3).
func (r *EvolveResult) Escalated() bool { return r.Outcome == evolve.OutcomeEscalated }

// Escalation is the error that ends an escalated run with exit code 3, pointing to the playbook; nil
// when the run did not escalate.
func (r *EvolveResult) Escalation() error {
	if !r.Escalated() {
		return nil
	}
	return escalation(r.Reason)
}

func escalation(reason string) error {
	return &exitcode.EscalationError{Reason: reason + "; see " + EscalationDoc}
}

// evolveConfig is the optional config file (tune.toml): the [evolve], [watch] and [explore] tables.
type evolveConfig struct {
	Evolve struct {
		MaxSteps   int `toml:"max_steps"`
		StallBound int `toml:"stall_bound"`
		// ParityBudget is the most too-high cost a run may add on the parity prompts
		// (docs/decisions.md#parity-price).
		ParityBudget float64 `toml:"parity_budget"`
		// Holdout is how a change that raises the frozen holdout's loss is decided: "veto" (the
		// default) or "priced" (docs/decisions.md#the-holdout-priced-on-request).
		Holdout evolve.HoldoutRule `toml:"holdout"`
		// DriftAcknowledged are the knobs a human left at the drift bound, each at its value
		// (docs/decisions.md#a-drift-bound-a-human-has-read); checked into DriftAcks by parseConfig.
		DriftAcknowledged any `toml:"drift_acknowledged"`
	} `toml:"evolve"`
	// driftAcks is DriftAcknowledged, checked.
	driftAcks evolve.DriftAcks
	Watch     watch.Config `toml:"watch"`
	// Explore is read by tune score and tune explore (explore.ParseConfig checks it); it is here so
	// that the table is known (docs/decisions.md#explore-a-randomized-share-of-near-edge-tasks).
	Explore explore.Config `toml:"explore"`
}

// readConfig reads the config file: configPath, else TUNE_CONFIG, else tune.toml when it exists.
func readConfig(env Env, configPath string) (evolveConfig, error) {
	path, explicit := configPath, configPath != ""
	if !explicit {
		path = env.getenv("TUNE_CONFIG")
		explicit = path != ""
	}
	named := explicit
	if path == "" && env.Config != "" {
		path, explicit = env.Config, true // the project's tune.toml, found upward
	}
	if path == "" {
		path = "tune.toml"
	}
	// tune.toml is read only as a regular file within its size limit (the project's own never through a
	// link), then parsed within its nesting limits: a pull request can replace it with a FIFO, a link to
	// /dev/zero or a TOML bomb (docs/decisions.md#hostile-files-issue-25).
	data, err := project.ReadConfig(path, named)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		return evolveConfig{}, nil
	case err != nil:
		return evolveConfig{}, fmt.Errorf("config: %w", err) // the error names the path
	}
	return parseConfig(path, data)
}

// parseConfig parses and checks the config file's bytes; path names it in errors.
func parseConfig(path string, data []byte) (evolveConfig, error) {
	var cfg evolveConfig
	md, err := tomlbound.Decode(data, &cfg)
	if err != nil {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	// The acknowledged knobs are decoded as any and checked by driftAcks, so BurntSushi/toml reports
	// them as undecoded.
	und := slices.DeleteFunc(md.Undecoded(), func(k toml.Key) bool {
		return len(k) > 2 && k[0] == "evolve" && k[1] == "drift_acknowledged"
	})
	if len(und) > 0 {
		return cfg, fmt.Errorf("config %s: unknown key %s (the [evolve] table takes max_steps, stall_bound, parity_budget, holdout and the table drift_acknowledged; [watch] takes min_tasks, overkill_bound, min_recurrences and alpha; %s)", tomlbound.At(path, data, und[0]...), und[0], explore.Keys)
	}
	if cfg.driftAcks, err = driftAcks(cfg.Evolve.DriftAcknowledged); err != nil {
		where := tomlbound.Where(path, data, err) // the knob's line
		if where == path {
			where = tomlbound.At(path, data, "evolve", "drift_acknowledged")
		}
		return cfg, fmt.Errorf("config %s: %w", where, err)
	}
	// bad is the error of a value out of range: the file and the key's line.
	bad := func(table, key, format string, args ...any) error {
		return fmt.Errorf("config %s: "+format, append([]any{tomlbound.At(path, data, table, key)}, args...)...)
	}
	switch {
	case cfg.Evolve.MaxSteps < 0:
		return cfg, bad("evolve", "max_steps", "evolve.max_steps and evolve.stall_bound must be positive")
	case cfg.Evolve.StallBound < 0:
		return cfg, bad("evolve", "stall_bound", "evolve.max_steps and evolve.stall_bound must be positive")
	case !(cfg.Evolve.ParityBudget >= 0 && cfg.Evolve.ParityBudget <= 2): // NaN fails both
		return cfg, bad("evolve", "parity_budget", "evolve.parity_budget must lie between 0 and 2 (a too-high cost per prompt)")
	}
	switch cfg.Evolve.Holdout {
	case evolve.HoldoutVeto, evolve.HoldoutPriced:
	case "":
		if md.IsDefined("evolve", "holdout") {
			return cfg, bad("evolve", "holdout", "evolve.holdout = \"\": want %q (the default) or %q; leave the key out for the default", evolve.HoldoutVeto, evolve.HoldoutPriced)
		}
	default:
		return cfg, bad("evolve", "holdout", "evolve.holdout = %q: want %q (the default: the frozen holdout's loss must not rise) or %q (the loss it adds is paid by the history's expected gain, as the suite's is)",
			cfg.Evolve.Holdout, evolve.HoldoutVeto, evolve.HoldoutPriced)
	}
	if err := cfg.Watch.Check(); err != nil {
		return cfg, fmt.Errorf("config %s: %w", tomlbound.Where(path, data, err), err)
	}
	if cfg.Explore, err = explore.ParseConfig(path, data); err != nil {
		return cfg, err
	}
	// A bound of 0 is read as "not set" below (the default in code), so a 0 the user wrote would be
	// replaced in silence: refuse it instead.
	for _, z := range []struct {
		table, key string
		zero       bool
	}{{"evolve", "max_steps", cfg.Evolve.MaxSteps == 0}, {"evolve", "stall_bound", cfg.Evolve.StallBound == 0},
		{"evolve", "parity_budget", cfg.Evolve.ParityBudget == 0}, {"watch", "min_tasks", cfg.Watch.MinTasks == 0},
		{"watch", "overkill_bound", cfg.Watch.OverkillBound == 0}, {"watch", "min_recurrences", cfg.Watch.MinRecurrences == 0},
		{"watch", "alpha", cfg.Watch.Alpha == 0}} {
		if z.zero && md.IsDefined(z.table, z.key) {
			return cfg, bad(z.table, z.key, "%s.%s = 0 would be read as the default: leave the key out, or set a positive value", z.table, z.key)
		}
	}
	return cfg, nil
}

// driftAcks checks tune.toml's [evolve.drift_acknowledged]: a table (written as [evolve.drift_acknowledged],
// inline or with dotted keys), every key a knob (a signal, or an edge such as "L1 edge"), every value a
// weight (a multiple of 0.5). A pull request can write anything there. It is decoded as any and checked
// here: BurntSushi/toml decodes a string into a map field as an empty map without an error, which would
// read a mistyped acknowledgement as none while the pages go on unexplained.
func driftAcks(raw any) (evolve.DriftAcks, error) {
	if raw == nil {
		return nil, nil
	}
	table, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("evolve.drift_acknowledged is %s: want a table of knobs and the values they were left at, e.g. [evolve.drift_acknowledged] layer-crossings = 4", tomlKind(raw))
	}
	knobs := evolve.KnobNames()
	acks := evolve.DriftAcks{}
	for _, k := range slices.Sorted(maps.Keys(table)) {
		if !slices.Contains(knobs, k) {
			return nil, &tomlbound.KeyError{Key: []string{"evolve", "drift_acknowledged", k}, Msg: fmt.Sprintf("evolve.drift_acknowledged: %q is not a knob (a signal: %s; or an edge: %s)",
				k, strings.Join(knobs[:weights.NumSignals], ", "), strings.Join(knobs[weights.NumSignals:], ", "))}
		}
		var f float64
		switch v := table[k].(type) {
		case int64:
			f = float64(v)
		case float64:
			f = v
		default:
			return nil, &tomlbound.KeyError{Key: []string{"evolve", "drift_acknowledged", k}, Msg: fmt.Sprintf("evolve.drift_acknowledged.%q is %s: want the weight the knob was left at, a multiple of 0.5", k, tomlKind(v))}
		}
		v, err := weights.SaneHalf(f)
		if err != nil {
			return nil, &tomlbound.KeyError{Key: []string{"evolve", "drift_acknowledged", k}, Msg: fmt.Sprintf("evolve.drift_acknowledged.%q: %v (the weight the knob was left at)", k, err)}
		}
		acks[k] = v
	}
	return acks, nil
}

// tomlKind names the kind of a decoded TOML value for an error: "a string", "an array".
func tomlKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return "a date or time"
}

// LoopConfig merges the options over the config file over the defaults in code.
func LoopConfig(env Env, opts EvolveOptions) (evolve.LoopConfig, error) {
	cfg, err := readConfig(env, opts.ConfigPath)
	if err != nil {
		return evolve.LoopConfig{}, err
	}
	lc := evolve.LoopConfig{MaxSteps: cfg.Evolve.MaxSteps, StallBound: cfg.Evolve.StallBound, ParityBudget: cfg.Evolve.ParityBudget, HoldoutRule: cfg.Evolve.Holdout,
		DriftAcknowledged: cfg.driftAcks}
	if lc.ParityBudget == 0 {
		lc.ParityBudget = evolve.DefaultParityBudget
	}
	if opts.MaxSteps > 0 {
		lc.MaxSteps = opts.MaxSteps
	}
	if opts.StallBound > 0 {
		lc.StallBound = opts.StallBound
	}
	return lc, nil
}

// Evolve runs the loop and writes its proposal (once), logs its attempts (once per proposal), writes
// the state dump on escalation and, with Apply, applies an accepted proposal.
func Evolve(env Env, opts EvolveOptions) (*EvolveResult, error) {
	cfg, err := LoopConfig(env, opts)
	if err != nil {
		return nil, err
	}
	inputs, err := readStepInputs(env, opts.Logs, true)
	if err != nil {
		return nil, err
	}
	parent, resolver, fx, read, dec := inputs.active, inputs.resolver, inputs.suite, inputs.read, inputs.dec
	var stateKey string
	if opts.nightState {
		stateKey = inputs.stateKey(env)
		read.loadDetectState(env.WeightsDir, stateKey)
		if w := opts.watch; w != nil && len(read.names) >= 2 && !read.checked {
			// Only a night whose new tasks were checked against every log's earlier ones may read the
			// logs' new parts alone (checkRepeats); the watch reads whole too then.
			w.forgetState()
		}
	}
	st, err := env.OpenStore()
	if err != nil {
		return nil, err
	}
	refuted, err := refutedRaises(st, &parent)
	if err != nil {
		return nil, err
	}
	refuted = append(refuted, opts.declinedChanges...)
	stream := read.stream
	if w := opts.watch; w != nil {
		if tapped, ok := w.tapDetection(read); ok {
			stream = tapped
		} else if err := w.judgeAlone(env); err != nil || w.stops() {
			return nil, cmp.Or(err, errStoppedByWatch)
		}
	}
	res, err := evolve.Loop(evolve.LoopInput{Stream: stream, Resume: read.resumeStates(), Parent: parent, WeightsFor: resolver,
		Suite: evolve.PrepareSuite(fx.Scenarios), Holdout: evolve.PrepareSuite(fx.Holdout), Config: cfg,
		Used: dec.Used, Origin: dec.Origin, Parity: dec.Parity, Now: env.Now(), EvidenceAfter: dec.EvidenceAfter, Refuted: refuted})
	if err == nil {
		err = read.err
	}
	if err != nil {
		return nil, err
	}
	if w := opts.watch; w != nil && w.result == nil {
		if err := w.endTap(read); err != nil {
			return nil, err
		}
		if err := w.judge(env); err != nil || w.stops() {
			return nil, cmp.Or(err, errStoppedByWatch)
		}
	}
	if opts.nightState {
		read.saveDetectState(env.WeightsDir, stateKey, res.Detection.States())
	}
	out := &EvolveResult{Outcome: res.Outcome, Reason: res.Reason, Parent: weights.VersionName(parent.Version),
		Config: res.Config, Steps: []EvolveStep{}, Loop: res, Tasks: read.tasks, TakenUp: read.takenUp,
		Warnings: evolve.UniqueWarnings(append(parseWarnings(read), res.Detection.Warnings...)),
		Decision: res.Decision(), Refused: res.Refused, Drift: res.Drift, DriftHeld: res.DriftHeld, Explain: explain(res.Detection),
		Partial: res.Partial, Held: res.Held, HoldoutPaid: res.HoldoutPaid}
	for _, s := range res.Steps {
		out.Steps = append(out.Steps, EvolveStep{s})
	}
	if len(res.Steps) > 0 {
		steps := res.StepResults()
		prop := ProposalFromSteps(steps, &parent, res.Final, env.Now())
		// The run's decision, not the steps': a refused run keeps nothing (docs/decisions.md#acceptance).
		prop.Decision = res.Decision()
		if res.Refused != "" {
			prop.Reason += "; refused: " + res.Refused
		}
		if res.Drift != nil {
			prop.Reason += "; " + res.Drift.Reason
		}
		if len(res.DriftHeld) > 0 {
			prop.Reason += "; held: " + evolve.HeldLine(res.DriftHeld)
		}
		if res.Partial != "" {
			prop.Reason += "; partial: " + res.Partial
		}
		if len(res.Held) > 0 {
			prop.Reason += "; held: " + HeldLine(res.Held)
		}
		var in report.ProposalReport
		p, path, created, err := recordProposal(env, prop, steps, true, reportInput(steps, parent, out.Warnings, &in))
		if err != nil {
			return nil, err
		}
		out.Stored = p
		sig, bkt, _ := store.WeightsJSON(&p.Candidate)
		out.Proposal = &EvolveProposal{ID: p.ID, File: path, Decision: p.Decision, Created: created,
			Weights: EvolveProposalWeights{Signals: sig, Buckets: bkt}}
		out.ReportInput = &in
	}
	if out.Escalated() {
		path, err := writeStateDump(env.ReportsDir, out)
		if err != nil {
			return nil, err
		}
		out.StateDump = &path
	}
	if opts.Apply && out.Stored != nil && out.Stored.Applicable() {
		s, err := env.OpenStore()
		if err != nil {
			return nil, err
		}
		s.FixturesDir = env.FixturesDir
		applied, err := s.Apply(out.Stored)
		if err != nil && !errors.Is(err, store.ErrNothingToDo) {
			return nil, fmt.Errorf("apply %s: %w", out.Stored.ID, err)
		}
		if err == nil {
			v := weights.VersionName(applied.Weights.Version)
			out.Applied = &v
		}
	}
	return out, nil
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
	Steps    []EvolveStep      `json:"steps"`
	Proposal *store.Proposal   `json:"proposal"`
	Warnings []evolve.Warning  `json:"warnings"`
	// Drift is the change the drift bound stopped; Refused why kept steps were dropped.
	Drift   *evolve.Drift `json:"drift,omitempty"`
	Refused string        `json:"refused,omitempty"`
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
func writeStateDump(dir string, out *EvolveResult) (string, error) {
	res := out.Loop
	d := stateDump{Outcome: out.Outcome, Reason: out.Reason, Playbook: EscalationDoc, Config: out.Config,
		Versions: stateVersions{Parent: out.Parent, Candidate: "pending proposal"},
		Window:   res.Detection.Window, Flagged: res.Detection.Flagged, Resolved: res.Resolved,
		Steps: out.Steps, Proposal: out.Stored, Warnings: out.Warnings, Drift: res.Drift, Refused: res.Refused}
	if out.Stored != nil {
		d.Versions.Candidate = out.Stored.ID
	}
	for _, s := range res.Steps {
		d.Screens = append(d.Screens, stateScreen{Step: s.N, Screen: s.Screen})
	}
	name := "evolve-state.json"
	if out.Stored != nil {
		name = "evolve-state-" + out.Stored.ID + ".json"
	}
	if err := regular.RealDirs(dir); err != nil {
		return "", err // a link would take the state dump outside the project
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	return path, atomicfile.Write(path, buf.Bytes(), atomicfile.Public)
}

// Explain is what the screen compared and left out, the accumulated evidence per signal and what the
// loss rule weighed, for every command that reports a detection (docs/decisions.md#explained).
type Explain struct {
	Population string `json:"population"`
	Correction string `json:"correction"`
	// Eligible counts the window's eligible tasks; ResolvedByActive those the active weights already
	// lift; Used the tasks the evidence ledger leaves out.
	Eligible         int               `json:"eligible"`
	ResolvedByActive int               `json:"resolved_by_active"`
	Used             []evolve.UsedTask `json:"ledger_used"`
	// Accumulated is the population of the accumulated evidence; Signals each signal's table, e-value
	// against the threshold and the regressions it still needs; Gains the changes the loss rule weighed
	// (best first, the chosen one first), Beyond those the drift bound forbids.
	Accumulated evolve.Accumulated `json:"accumulated"`
	Signals     []SignalEvidence   `json:"signals"`
	Gains       []evolve.Gain      `json:"loss_rule"`
	Beyond      []evolve.Gain      `json:"beyond_drift,omitempty"`
	// Unpaid: for each signal that passes the test but has no change that pays, its step nearest to
	// paying.
	Unpaid []evolve.Gain `json:"loss_rule_unpaid,omitempty"`
}

// SignalEvidence is one signal's accumulated evidence as the explanations show it.
type SignalEvidence struct {
	Signal     string     `json:"signal"`
	A          int        `json:"a"`
	B          int        `json:"b"`
	C          int        `json:"c"`
	D          int        `json:"d"`
	EValue     evolve.Num `json:"e_value"`
	Threshold  evolve.Num `json:"threshold"`
	MoreNeeded int        `json:"more_needed"`
	Excess     evolve.Num `json:"excess"`
	Verdict    string     `json:"verdict"`
}

func explain(d *evolve.Detection) Explain {
	e := Explain{Population: d.Population, Correction: d.Correction,
		Eligible: d.Window.Eligible, ResolvedByActive: d.Window.ResolvedByActive, Used: d.Used,
		Accumulated: d.Accumulated, Signals: []SignalEvidence{}, Gains: d.Gains, Beyond: d.Beyond, Unpaid: d.Unpaid}
	for _, r := range d.Screen {
		e.Signals = append(e.Signals, SignalEvidence{Signal: r.Signal, A: r.A, B: r.B, C: r.C, D: r.D, EValue: r.EValue,
			Threshold: r.Threshold, MoreNeeded: r.MoreNeeded, Excess: r.Excess, Verdict: r.Verdict})
	}
	if e.Gains == nil {
		e.Gains = []evolve.Gain{}
	}
	return e
}
