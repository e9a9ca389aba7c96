package app

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/watch"
	"github.com/ldd-tools/tune/internal/weights"
)

// WatchOptions say which version to watch and over which logs.
type WatchOptions struct {
	Logs []string
	// Version is the applied version to watch ("v0002"); "" watches the active one.
	Version string
	// ConfigPath is the config file with the [watch] bounds ("" = TUNE_CONFIG, else tune.toml).
	ConfigPath string
	// nightState: the watch starts from the state the last night left and leaves its own
	// (docs/decisions.md#watch-state); only tune nightly, which holds the nightly lock, sets it.
	nightState bool
}

// WatchResult is what tune watch reports (and its --json shape): the verdict and, for "not helping"
// and "harmful", the rollback proposal it wrote (or why it wrote none).
type WatchResult struct {
	*watch.Result
	Active bool `json:"active"`
	// Proposal is the id of the rollback proposal (new or already pending); "" when none.
	Proposal     string `json:"proposal,omitempty"`
	ProposalPath string `json:"proposal_path,omitempty"`
	// ProposalNew is false when the same rollback was already proposed.
	ProposalNew bool `json:"proposal_new,omitempty"`
	// ProposalNote says why no proposal was written although the verdict calls for one.
	ProposalNote string   `json:"proposal_note,omitempty"`
	Logs         []string `json:"logs"`
	// Warnings are the trace reader's on the logs the watch read alone (tune watch); a night's are in
	// its own warnings, once.
	Warnings []evolve.Warning `json:"warnings"`
}

// NothingToWatchError says there is no applied version to judge (the store has only its first version,
// or the version named was never made active). It wraps store.ErrNothingToDo (exit 0).
type NothingToWatchError struct{ Reason string }

func (e *NothingToWatchError) Error() string { return "nothing to watch: " + e.Reason }

// Unwrap makes it a store.ErrNothingToDo.
func (e *NothingToWatchError) Unwrap() error { return store.ErrNothingToDo }

// Watch judges an applied version on the tasks dispatched under it whose level it moved, against rates
// fixed from the tasks under its parent (internal/watch). For "not helping" and "harmful" on the active version it writes a rollback
// proposal to the parent's content through the store's proposal path and logs its decision, so that
// `tune apply` reviews and applies it like any other; it writes nothing else (docs/decisions.md#watch).
func Watch(env Env, opts WatchOptions) (*WatchResult, error) {
	run, err := startWatch(env, opts)
	if err != nil {
		return nil, err
	}
	err = run.judgeAlone(env)
	return run.result, err
}

// watchRun is a watch under way: what it judges with, its Builder and, for a night, the key of its
// state and the states it took up. Its logs are read either alone (readAlone) or, on a night, by the
// detection's read of the same logs (tapDetection); judge judges.
type watchRun struct {
	*watchSetup
	b          *watch.Builder
	nightState bool
	key        string
	resume     []watchLogRef
	// reads is what each log's read gave, for the next state.
	reads []watchRead
	// tapped: the detection's read feeds the Builder (feed), and tapEnded says it read every log to its end.
	tapped, tapEnded bool
	feed             *watchFeed
	// result is the verdict, once judged.
	result *WatchResult
	// warnings are the trace reader's, when the watch read the logs alone (a night's detection reports
	// its own read's).
	warnings []evolve.Warning
	// repeated says a log gave a task an earlier log gave (repeatedTasks): no state is left then.
	repeated bool
}

// judgeAlone reads the logs for the watch alone and judges.
func (run *watchRun) judgeAlone(env Env) error {
	if run.tapped {
		// A read of the detection's that fed it in part: the watch starts over (a tapped watch took no
		// state up).
		run.b, run.tapped = watch.NewBuilder(*run.in), false
	}
	if err := run.readAlone(); err != nil {
		return err
	}
	return run.judge(env)
}

// judge judges the tasks read, keeps the result, leaves the night's state and, for "not helping" or
// "harmful" on the active version, writes the rollback proposal.
func (run *watchRun) judge(env Env) error {
	if run.nightState {
		reads := run.reads
		if run.repeated {
			reads = nil // as the detection's (saveDetectState): the next night reads whole
		}
		saveWatchState(env.WeightsDir, run.key, reads)
	}
	out := &WatchResult{Result: run.b.Result(), Active: run.target == run.active, Logs: run.logs, Warnings: []evolve.Warning{}}
	if !run.nightState {
		out.Warnings = evolve.UniqueWarnings(run.warnings)
	}
	run.result = out
	if !out.Proposes() {
		return nil
	}
	if !out.Active {
		out.ProposalNote = fmt.Sprintf("%s is no longer active (%s is): no rollback proposal; `tune rollback` restores an earlier version", out.Version, weights.VersionName(run.active))
		return nil
	}
	return proposeRollback(env, run.s, out, run.vw, run.pw)
}

// stops says the verdict stops the night's evolve: harmful (docs/decisions.md#watch).
func (run *watchRun) stops() bool { return run.result != nil && run.result.Verdict == watch.Harmful }

// startWatch sets a watch up: the versions it judges and, for a night, the states it takes up
// (docs/decisions.md#watch-state); no log is read yet.
func startWatch(env Env, opts WatchOptions) (*watchRun, error) {
	w, err := watchInput(env, opts)
	if err != nil {
		return nil, err
	}
	// Streamed into the judgement, which keeps counts and only the tasks a verdict can still depend
	// on (docs/decisions.md#watch-memory); a night takes each log up from the last night's state.
	run := &watchRun{watchSetup: w, b: watch.NewBuilder(*w.in), nightState: opts.nightState}
	if opts.nightState {
		run.key = watchStateKey(w.in, w.logs, w.in.Logs)
		if run.resume = loadWatchState(env.WeightsDir, run.key, w.logs, w.in.Logs); run.resume != nil {
			for _, r := range run.resume {
				if run.b.Restore(r.State) != nil {
					run.b, run.resume = watch.NewBuilder(*w.in), nil
					break
				}
			}
		}
	}
	return run, nil
}

// forgetState drops the state the watch took up: it reads every log whole.
func (run *watchRun) forgetState() {
	if run.resume != nil {
		run.b, run.resume = watch.NewBuilder(*run.in), nil
	}
}

// readAlone reads the logs for the watch alone, each from its state when one was taken up.
func (run *watchRun) readAlone() error {
	run.warnings = run.warnings[:0]
	reads, repeated, err := streamWatch(run.b, run.logs, run.in.Logs, run.resume, func(w evolve.Warning) { run.warnings = append(run.warnings, w) })
	run.reads, run.repeated = reads, repeated
	return err
}

// watchSetup is what the watch judges with: its input (the logs' names in Logs, no task), the store, the
// active and the watched version's numbers, the watched version's and its parent's weights, and the
// logs to read.
type watchSetup struct {
	in             *watch.Input
	s              *store.Store
	active, target int
	vw, pw         *weights.Weights
	logs           []string
}

// watchInput finds the version to watch, its parent and their times in the store.
func watchInput(env Env, opts WatchOptions) (*watchSetup, error) {
	cfg, err := readConfig(env, opts.ConfigPath)
	if err != nil {
		return nil, err
	}
	s, err := env.OpenStore()
	if err != nil {
		return nil, err
	}
	acts, err := s.Activations()
	if err != nil {
		return nil, err
	}
	active, err := s.ActiveVersion()
	if err != nil {
		return nil, err
	}
	target := active
	if opts.Version != "" {
		if target, err = weights.ParseVersionName(opts.Version); err != nil {
			return nil, err
		}
	}
	// The version's last activation, the one before it (its parent's) and the next (its end).
	i := -1
	for j := range acts {
		if acts[j].Version == target {
			i = j
		}
	}
	first := &NothingToWatchError{fmt.Sprintf("no version applied yet (%s is the store's first)", weights.VersionName(target))}
	if i < 0 {
		if target == active && (len(acts) == 0 || acts[0].Action == store.ActionInit && acts[0].Version == target) {
			return nil, first
		}
		if _, err := s.Version(target); err != nil {
			return nil, err // a version that does not exist is a mistake, not "nothing to watch"
		}
		return nil, &NothingToWatchError{fmt.Sprintf("the evolution log never made %s active", weights.VersionName(target))}
	}
	act := acts[i]
	if act.Parent == 0 || act.Action == store.ActionInit {
		return nil, first
	}
	in := watch.Input{Config: cfg.Watch}
	for j := i - 1; j >= 0; j-- {
		if acts[j].Version == act.Parent {
			// The init entry records when the store's log began, not when its first version took
			// over: every earlier task ran under it.
			if acts[j].Action != store.ActionInit {
				in.Parent.From = acts[j].Time
			}
			break
		}
	}
	in.Version.From = act.Time
	if i+1 < len(acts) {
		in.Until = acts[i+1].Time
	}
	vw, err := s.Version(target)
	if err != nil {
		return nil, err
	}
	pw, err := s.Version(act.Parent)
	if err != nil {
		return nil, err
	}
	in.Version.Weights, in.Parent.Weights = &vw, &pw
	for _, c := range store.Changes(&pw, &vw) {
		in.Changes = append(in.Changes, c.String())
	}
	// The logs as the detection opens them: the default log when none is named, each path once, a FIFO
	// or device refused before anything is read.
	tl, err := openTraceLogs(env, opts.Logs)
	if err != nil {
		return nil, err
	}
	in.Logs = tl.names
	return &watchSetup{in: &in, s: s, active: active, target: target, vw: &vw, pw: &pw, logs: tl.paths}, nil
}

// proposeRollback writes (once) the proposal that brings the parent's content back as a new version,
// and logs its decision like any accepted proposal.
func proposeRollback(env Env, s *store.Store, out *WatchResult, vw, pw *weights.Weights) error {
	pending, err := s.PendingProposals()
	if err != nil {
		return err
	}
	for _, p := range pending {
		if p.Parent == vw.Version && len(store.Changes(&p.Candidate, pw)) == 0 {
			out.Proposal, out.ProposalPath = p.ID, filepath.Join(s.ProposalsPath(), p.ID+".json")
			return nil
		}
	}
	// One logged decision per change, in the evolution step's change vocabulary, so that apply can
	// rebuild the candidate from the log (docs/decisions.md#watch). A cost change has no such form:
	// that rollback is left to tune rollback.
	back := store.Changes(vw, pw)
	p := &store.Proposal{
		Created: env.Now().UTC(), Parent: vw.Version, Decision: weights.DecisionAccept, Candidate: *pw,
		Reason: fmt.Sprintf("roll %s back to the content of %s: tune watch found it %s: %s", out.Version, out.Parent, out.Verdict, out.Reason),
	}
	var changes []evolve.Change
	for _, c := range back {
		ch := evolve.Change{Kind: c.Kind, Delta: c.Delta()}
		step := store.ProposalStep{Kind: c.Kind, Delta: c.Delta(), Decision: weights.DecisionAccept}
		switch c.Kind {
		case weights.ChangeSignal:
			ch.Signal, _ = weights.SignalByName(c.Name)
			step.Signal = c.Name
		case weights.ChangeBucket:
			lvl, err := weights.ParseLevel(c.Name)
			if err != nil {
				return err
			}
			ch.Edge, step.Edge = lvl, c.Name
		default:
			out.ProposalNote = fmt.Sprintf("%s changed %s, which a proposal cannot carry: restore %s with tune rollback", out.Version, c, out.Parent)
			return nil
		}
		changes = append(changes, ch)
		p.Steps = append(p.Steps, step)
	}
	// The fixture suite replayed under the watched version and after each step back, as a proposal of
	// tune propose carries it, so the reviewer sees what the rollback does to the suite; without a
	// suite the losses stay 0 and the reason says why.
	var losses [][2]float64
	if suite, err := env.LoadSuite(); err != nil {
		p.Reason += fmt.Sprintf(" (fixture suite not replayed: %v)", err)
	} else {
		s := evolve.PrepareSuite(suite.Scenarios)
		cur := *vw
		before := float64(s.Score(&cur).Loss)
		p.SuiteLossBefore = before
		for i, ch := range changes {
			cur = ch.Apply(cur)
			after := float64(s.Score(&cur).Loss)
			p.Steps[i].SuiteLossBefore, p.Steps[i].SuiteLossAfter = before, after
			losses = append(losses, [2]float64{before, after})
			before = after
		}
		p.SuiteLossAfter = before
	}
	var evidence []string
	for _, t := range out.Evidence {
		title, _ := report.TaskTitle(t.Task)
		p.Evidence = append(p.Evidence, store.FlaggedTask{MetaTimestamp: t.MetaTimestamp, Title: title, Level: t.Level, Source: t.Log, Evidence: []string{t.Note}})
		evidence = append(evidence, fmt.Sprintf("%s %s %q: %s", t.MetaTimestamp, t.Level, title, t.Note))
	}
	path, created, err := store.WriteProposal(s.ProposalsPath(), p)
	if err != nil {
		return err
	}
	out.Proposal, out.ProposalPath, out.ProposalNew = p.ID, path, created
	entries, err := s.Entries()
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Proposal == p.ID && e.Action == store.ActionAccept {
			return nil
		}
	}
	for i, ch := range changes {
		e := store.LogEntry{Action: store.ActionAccept, Parent: vw.Version, Proposal: p.ID, ProposalSHA256: p.ContentSHA256(),
			Change: ch.String(), Decision: weights.DecisionAccept, Evidence: evidence, Reason: watchReason(out.Verdict) + out.Reason}
		if losses != nil {
			e.SuiteLossBefore, e.SuiteLossAfter = &losses[i][0], &losses[i][1]
		}
		err := s.Log(e)
		if err != nil && !errors.Is(err, store.ErrNothingToDo) {
			return err
		}
	}
	return nil
}

// watchReason starts the reason of the decisions the watch logs for its rollback proposal: "tune watch:
// not helping: …". refutedRaises reads it back.
func watchReason(verdict string) string { return "tune watch: " + verdict + ": " }

// refutedRaises are the signals the active version lowered when it is the watch's rollback of a raise
// found not helping: the evolve does not raise them again while that rollback is active; the way back
// up is the rollback's own watch, whose "harmful: regressions" test fires when the lowered tasks regress
// more than they did when high (docs/decisions.md#a-refuted-raise-waits-for-the-watch).
func refutedRaises(s *store.Store, active *weights.Weights) ([]evolve.Change, error) {
	acts, err := s.Activations()
	if err != nil || len(acts) == 0 {
		return nil, err
	}
	act := acts[len(acts)-1]
	if act.Version != active.Version || act.Action != store.ActionApply || act.Proposal == "" {
		return nil, nil
	}
	entries, err := s.Entries()
	if err != nil {
		return nil, err
	}
	var out []evolve.Change
	for _, e := range entries {
		if e.Action != store.ActionAccept || e.Proposal != act.Proposal || !strings.HasPrefix(e.Reason, watchReason(watch.NotHelping)) {
			continue
		}
		kind, name, delta, err := weights.ParseChangeLabel(e.Change)
		if err != nil || kind != weights.ChangeSignal || delta >= 0 {
			continue
		}
		if sig, ok := weights.SignalByName(name); ok {
			out = append(out, evolve.Change{Kind: weights.ChangeSignal, Signal: sig, Delta: -delta})
		}
	}
	return out, nil
}
