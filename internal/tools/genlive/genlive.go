// Package genlive generates the trace logs of a live project, night by night, for the live harness of
// issue 28 (docs/live-harness.md). It is independent of internal/tools/genhistory on purpose: it is
// modelled on what a project's logs hold (the populations), not on what the decision rules need.
//
// Every task is a prompt text composed from real-shaped parts and scored by the real scorer
// (scorer.Detect with the log's recent files as history, then Score under the weights active that
// night), so its level, dispatch source and signals= are what an agent would have written. Whether it
// regresses is drawn from the regime's model of the world, which looks at the task's signals and the
// level it actually ran at — never at what the tuner will conclude. A regression is recorded the way the
// trace records it: regression_followed=true on its close, a later task's regression_of=<its meta
// timestamp>, or a later task in the same files that failed (same-area, the weak kind).
//
// Deterministic: a Sequence is a function of its seed, its regime and the weights it is handed each night.
package genlive

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/scorer"
	"github.com/ldd-tools/tune/internal/tracewrite"
	"github.com/ldd-tools/tune/internal/weights"
)

// Regime is a model of the world: how likely a task is to regress, from what it carries and the level it
// ran at.
type Regime struct {
	Name string
	// Base is the regression probability of a task no effect concerns.
	Base float64
	// LowBase, when > 0, replaces Base for tasks that ran at L0/L1, whatever their signals (level-only noise).
	LowBase float64
	// Planted names the effect's signal set: each sequence plants one of them (seeded); empty = no effect.
	Planted []weights.Signal
	// Effects is how many distinct signals of Planted a sequence plants (0 or 1: one), each with the same
	// Carrier rate: a project with two real effects at once.
	Effects int
	// Carrier is the regression probability of an effect carrier: an eligible-cue task carrying the
	// planted signal that ran at L0/L1 (or at any level when LevelInsensitive).
	Carrier float64
	// LevelInsensitive: carriers regress at Carrier whatever level they ran at, so raising the signal
	// cannot help.
	LevelInsensitive bool
	// Start is the first night the effect acts (0 or 1: from the first night).
	Start int
	// Busy plays the busy two-module project: every task touches a few shared files.
	Busy bool
	// Failures is the share of ordinary failures (terminal=failed, high loss): not regressions.
	Failures float64
	// Logs is the number of pooled logs (0 = 1).
	Logs int
}

// The population (see docs/live-harness.md for where each number comes from).
const (
	// MinNight, MaxNight bound the tasks a log gains per night.
	MinNight, MaxNight = 5, 20
	// Eligible cue share per sequence: tasks whose prompt carries a bug-fix or single-file cue.
	minCueShare, maxCueShare = 0.30, 0.65
	// Of the cue tasks: a bug-fix cue (the rest are single-file known-solution edits, which name a path).
	bugfixShare = 0.78
	// A bug fix names its one file (single-file fires) this often.
	bugfixPathShare = 0.45
	// A non-cue task names a file this often (no signal without a cue; it feeds unknown-file-territory).
	plainPathShare = 0.3
	// A cue task carries each positive clause with these probabilities; the planted signal with
	// plantedClause instead. A non-cue task gets 0–3 clauses.
	plantedClause = 0.30
	// Overrides written by users in the prompt: a bump ("LDD+:") and an explicit level ("LDD[level=L1]:",
	// an override-down when the scorer says more).
	bumpShare, explicitShare = 0.03, 0.02
	// historyTasks is how many earlier tasks' files the scorer sees as history.
	historyTasks = 15
	// Evidence kinds of a regression (the rest: same-area).
	followedShare, regressionOfShare = 0.4, 0.4
	// ordinaryFailures is the background share of failed tasks in every regime but Busy.
	ordinaryFailures = 0.03
)

// cueClause is the probability that a cue task carries a (non-planted) positive signal's clause; the
// real eligible prompts carry one in a few (parity.jsonl: 2 of 45 eligible prompts; the real logs'
// bug fixes often name a layer crossing or an ambiguity).
var cueClause = map[weights.Signal]float64{
	weights.Ambiguous: 0.12, weights.ContractRuleHit: 0.08, weights.LayerCrossings: 0.08,
	weights.CrossLayer: 0.06, weights.Greenfield: 0.01, weights.Components: 0.01,
}

// The positive signals of a non-cue task follow the 210 non-eligible prompts of parity.jsonl: 52 % carry
// none, 33 % one, 9 % two, 6 % three or more; a signal is drawn in proportion to how often the 255
// prompts carry it (greenfield 34, contract-rule-hit 32, cross-layer 32, layer-crossings 20, ambiguous
// 19, components>=3 11). (Until 13:34 on 3 December non-cue tasks drew 0–3 clauses uniformly, so each
// signal sat on ~25 % of them, three times the real rate; docs/live-harness.md gives both measurements.)
var (
	plainCounts       = []float64{0.52, 0.33, 0.09, 0.06}
	plainSignalWeight = map[weights.Signal]float64{weights.Greenfield: 34, weights.ContractRuleHit: 32,
		weights.CrossLayer: 32, weights.LayerCrossings: 20, weights.Ambiguous: 19, weights.Components: 11}
)

// plainSignals draws the distinct positive signals of a non-cue task.
func plainSignals(rng *rand.Rand) []weights.Signal {
	k, u := 0, rng.Float64()
	for acc := plainCounts[0]; u >= acc && k < len(plainCounts)-1; acc += plainCounts[k] {
		k++
	}
	var out []weights.Signal
	for len(out) < k {
		total := 0.0
		for _, sig := range positiveSignals {
			if !slices.Contains(out, sig) {
				total += plainSignalWeight[sig]
			}
		}
		x := rng.Float64() * total
		for _, sig := range positiveSignals {
			if slices.Contains(out, sig) {
				continue
			}
			if x -= plainSignalWeight[sig]; x < 0 {
				out = append(out, sig)
				break
			}
		}
	}
	return out
}

// Task is one generated task with its ground truth.
type Task struct {
	Log    int
	Night  int
	Time   time.Time
	Prompt string
	Files  []string
	Result scorer.Result
	// Detection is what the scorer detected, so a task can be scored again under other weights.
	Detection scorer.Detection
	// Cue: the prompt carries an eligibility cue (bug fix or single file).
	Cue bool
	// Carrier: a cue task carrying the planted signal.
	Carrier bool
	// Regressed is the truth; Evidence how the trace records it ("followed", "regression-of", "same-area").
	Regressed bool
	Evidence  string
	Failed    bool
	LossFinal float64
	// RegressionOf is the meta timestamp this task names; SameAreaOf says it is the failed same-area
	// follower of an earlier regression.
	RegressionOf string
	SameAreaOf   bool
}

// Sequence is one live project: its logs, their recent files and the evidence still to be written.
type Sequence struct {
	regime   Regime
	rng      *rand.Rand
	cueShare float64
	// Signal is the planted signal of this sequence (-1 without an effect); Also the others it plants
	// (Regime.Effects > 1).
	Signal weights.Signal
	Also   []weights.Signal
	start  time.Time
	logs   []*logState
}

type logState struct {
	history [][]string // files of the last tasks, oldest first
	// pending evidence for the next task of this log: a regression_of target or a same-area follower.
	pending []pendingEvidence
}

type pendingEvidence struct {
	metaTS string
	files  []string // non-nil: a same-area follower
}

// Start is the first night's date of every sequence.
var Start = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// NewSequence starts a sequence of regime r from seed.
func NewSequence(seed uint64, r Regime) *Sequence {
	rng := rand.New(rand.NewPCG(seed, 0x6c697665)) // "live"
	s := &Sequence{regime: r, rng: rng, Signal: -1, start: Start}
	s.cueShare = minCueShare + rng.Float64()*(maxCueShare-minCueShare)
	if len(r.Planted) > 0 {
		s.Signal = pick(rng, r.Planted)
		// Drawn only for more than one effect, so that one-effect sequences keep their random stream.
		for len(s.Also)+1 < min(r.Effects, len(r.Planted)) {
			if sig := pick(rng, r.Planted); sig != s.Signal && !slices.Contains(s.Also, sig) {
				s.Also = append(s.Also, sig)
			}
		}
	}
	n := max(r.Logs, 1)
	for range n {
		s.logs = append(s.logs, &logState{})
	}
	return s
}

// planted says whether sig is one of the sequence's planted signals.
func (s *Sequence) planted(sig weights.Signal) bool {
	return s.Signal >= 0 && (sig == s.Signal || slices.Contains(s.Also, sig))
}

// Logs is the number of logs the sequence writes.
func (s *Sequence) Logs() int { return len(s.logs) }

// NightEnd is when night n's tasks are all written: the nightly run after it may start then.
func NightEnd(n int) time.Time { return Start.Add(time.Duration(n-1)*24*time.Hour + 20*time.Hour) }

// Night generates night n (1-based) under the active weights: for each log, its tasks and their
// trace text to append.
func (s *Sequence) Night(n int, active *weights.Weights) (tasks [][]Task, text [][]byte) {
	tasks, text = make([][]Task, len(s.logs)), make([][]byte, len(s.logs))
	for li, ls := range s.logs {
		count := MinNight + s.rng.IntN(MaxNight-MinNight+1)
		var b strings.Builder
		for i := range count {
			// Tasks from 08:00, 30 minutes apart; logs a few seconds apart so every meta timestamp differs.
			at := s.start.Add(time.Duration(n-1)*24*time.Hour + 8*time.Hour + time.Duration(i)*30*time.Minute +
				time.Duration(li)*7*time.Second)
			t := s.task(li, ls, n, at, active)
			render(&b, &t)
			tasks[li] = append(tasks[li], t)
		}
		text[li] = []byte(b.String())
	}
	return tasks, text
}

func (s *Sequence) task(li int, ls *logState, night int, at time.Time, active *weights.Weights) Task {
	r, rng := s.regime, s.rng
	t := Task{Log: li, Night: night, Time: at}
	areas := spreadAreas
	if r.Busy {
		areas = busyAreas
	}
	a := pick(rng, areas)
	file := pick(rng, a.files)
	t.Files = []string{file}
	var base string
	var extra []string
	t.Cue = rng.Float64() < s.cueShare
	switch {
	case t.Cue && rng.Float64() < bugfixShare:
		subject := a.name
		if rng.Float64() < bugfixPathShare {
			subject = a.name + " in " + file
		}
		base = fmt.Sprintf(pick(rng, bugfixBases), subject)
	case t.Cue:
		base = fmt.Sprintf(pick(rng, knownEditBases), file)
	default:
		subject := a.name
		if rng.Float64() < plainPathShare {
			subject = a.name + " (" + file + ")"
		}
		base = fmt.Sprintf(pick(rng, plainBases), subject)
	}
	if t.Cue {
		for _, sig := range positiveSignals {
			p := cueClause[sig]
			if s.planted(sig) {
				p = plantedClause
			}
			if rng.Float64() < p {
				extra = append(extra, pick(rng, clauses[sig]))
			}
		}
	} else {
		for _, sig := range plainSignals(rng) {
			extra = append(extra, pick(rng, clauses[sig]))
		}
	}
	prompt := compose(base, extra)
	switch u := rng.Float64(); {
	case u < bumpShare:
		prompt = "LDD+: " + prompt
	case u < bumpShare+explicitShare:
		prompt = "LDD[level=L1]: " + prompt
	}
	t.Prompt = prompt

	// The scorer sees the files of the log's recent tasks (unknown-file-territory), as an agent's does.
	var hist []string
	for _, h := range ls.history {
		hist = append(hist, h...)
	}
	t.Detection = scorer.Detect(prompt, hist)
	t.Result = t.Detection.Score(active)

	// Evidence owed to an earlier task is written on this one.
	if len(ls.pending) > 0 {
		p := ls.pending[0]
		ls.pending = ls.pending[1:]
		if p.files != nil {
			t.Files, t.SameAreaOf, t.Failed = p.files, true, true
		} else {
			t.RegressionOf = p.metaTS
		}
	}

	carries := false
	for _, sw := range t.Result.Signals {
		if sig, ok := weights.SignalByName(sw.Name); ok && s.planted(sig) {
			carries = true
		}
	}
	t.Carrier = t.Cue && carries
	low := t.Result.FinalLevel <= weights.L1
	p := r.Base
	if low && r.LowBase > 0 {
		p = r.LowBase
	}
	if t.Carrier && night >= r.Start && (low || r.LevelInsensitive) {
		p = r.Carrier
	}
	t.Regressed = rng.Float64() < p
	failures := ordinaryFailures
	if r.Busy {
		failures = r.Failures
	}
	if !t.Failed && rng.Float64() < failures {
		t.Failed = true
	}
	t.LossFinal = float64(rng.IntN(4)) * 0.05 // 0–0.15
	if t.Failed {
		t.LossFinal = 0.5 + float64(rng.IntN(5))*0.1
	}
	if t.Regressed {
		metaTS := at.UTC().Format(tracewrite.TimestampLayout)
		switch u := rng.Float64(); {
		case u < followedShare:
			t.Evidence = "followed"
		case u < followedShare+regressionOfShare:
			t.Evidence = "regression-of"
			ls.pending = append(ls.pending, pendingEvidence{metaTS: metaTS})
		default:
			t.Evidence = "same-area"
			ls.pending = append(ls.pending, pendingEvidence{files: slices.Clone(t.Files)})
		}
	}
	ls.history = append(ls.history, t.Files)
	if len(ls.history) > historyTasks {
		ls.history = ls.history[1:]
	}
	return t
}

// Sample draws n tasks of the sequence's population under the given weights from a random stream of its
// own (seed), leaving the sequence untouched: the same cue share and planted signals, one log, a night's
// worth of tasks at a time. It is the population's truth in bulk — what a change of weights would raise
// on tasks like the project's — for an oracle that does not depend on one sequence's few tasks.
func (s *Sequence) Sample(seed uint64, n int, active *weights.Weights) []Task {
	c := &Sequence{regime: s.regime, rng: rand.New(rand.NewPCG(seed, 0x73616d70)), // "samp"
		cueShare: s.cueShare, Signal: s.Signal, Also: s.Also, start: s.start}
	ls := &logState{}
	out := make([]Task, 0, n)
	for i := range n {
		night := 1 + i/MaxNight
		at := c.start.Add(time.Duration(night-1)*24*time.Hour + 8*time.Hour + time.Duration(i%MaxNight)*30*time.Minute)
		out = append(out, c.task(0, ls, night, at, active))
	}
	return out
}

// render writes a task in the v0.13 writer's format (tracewrite.FormatMeta for the meta line).
func render(b *strings.Builder, t *Task) {
	extra := map[string]string{}
	if t.RegressionOf != "" {
		extra["regression_of"] = t.RegressionOf
	}
	title := tracewrite.Title(t.Prompt, 160)
	b.WriteString(tracewrite.FormatMeta(t.Time, t.Result, title, []string{"inner"}, extra))
	b.WriteByte('\n')
	ts := func(sec int) string {
		return t.Time.Add(time.Duration(sec) * time.Second).UTC().Format(tracewrite.TimestampLayout)
	}
	fmt.Fprintf(b, "%s  inner  k=1  skill=e2e-driven-iteration  action=%s  loss=%.3f  files=%s\n",
		ts(60), tracewrite.Quote("work on "+title), t.LossFinal, strings.Join(t.Files, ","))
	terminal := "complete"
	if t.Failed {
		terminal = "failed"
	}
	fmt.Fprintf(b, "%s  inner  close  terminal=%s  docs=synced  loss_final=%.3f", ts(120), terminal, t.LossFinal)
	if t.Evidence == "followed" {
		b.WriteString("  regression_followed=true")
	}
	b.WriteByte('\n')
}
