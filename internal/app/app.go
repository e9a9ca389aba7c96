// Package app is tune's application layer: the use cases the commands run (Detect, Propose, Evolve,
// Nightly, Apply, Rollback, the reports), each as one function from an Env and its options to a result
// value. It reads the trace logs, the fixture suite and the weights store, calls the pure domain
// packages (evolve, report, …) and writes the store and the reports. It prints nothing: internal/cli
// parses flags, calls these functions and prints their results. See docs/decisions.md, "Architecture
// and output (issue 15)".
package app

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ldd-tools/tune"
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/fixtures"
	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// Env is what every use case works from: the clock, the environment and the three directories.
type Env struct {
	// Now is the clock (TUNE_NOW fixes it in the command layer).
	Now func() time.Time
	// Getenv reads the environment (TUNE_CONFIG); nil reads nothing.
	Getenv      func(string) string
	WeightsDir  string
	FixturesDir string
	ReportsDir  string
	// Builtin says the directories are defaults nobody chose (no flag, no environment variable, no
	// tune.toml above the working directory): when one is missing, the read-only use cases (detect,
	// replay) use the reference weights and the fixture suite the binary carries
	// (docs/decisions.md#project-discovery).
	Builtin bool
	// Config is the default config file (the project's tune.toml; "" means tune.toml here).
	Config string
	// Root is the project root ("" outside a project): a trace log inside it is named relative to it
	// in proposals, reports and log entries, so that they do not depend on the working directory
	// (LogName).
	Root string
	// reads, when set, is one read of the store shared by the Stores a run opens (a night:
	// store.SharedReads).
	reads *store.SharedReads
}

// LogName is how a trace log read at path is named in what tune writes: relative to the project root
// (slash-separated) when the log lies inside it, else by its absolute path (a relative path as given
// could name a log inside the root too, from a working directory outside it, and two logs would then
// be judged as one); outside a project, the path as given. A proposal's id hashes these names, so the
// same inputs give the same id from the root and from any subdirectory.
func (e Env) LogName(path string) string {
	if e.Root == "" {
		return path
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	rel, err := filepath.Rel(e.Root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return abs
	}
	return filepath.ToSlash(rel)
}

// BuiltinLabel names the weights and fixtures the binary carries in outputs and errors.
const BuiltinLabel = "built-in"

// LoadSuite reads the fixture suite: FixturesDir, or the built-in suite when Builtin and the
// directory does not exist.
func (e Env) LoadSuite() (fixtures.Suite, error) {
	if e.Builtin && missing(e.FixturesDir) {
		return fixtures.LoadSuiteFS(tune.Fixtures(), BuiltinLabel+" fixtures")
	}
	return fixtures.LoadSuite(e.FixturesDir)
}

// ReadWeights is activeWeights for the read-only use cases: without a store and with Builtin, the
// reference weights v0001 and a resolver that knows only them.
func (e Env) ReadWeights() (weights.Weights, func(string) (*weights.Weights, bool), error) {
	if !e.Builtin || !missing(e.WeightsDir) {
		return activeWeights(e.WeightsDir, e.reads)
	}
	w, err := weights.Parse(BuiltinLabel+" weights/v0001.toml", tune.ReferenceWeights)
	if err != nil {
		return w, nil, err
	}
	return w, func(name string) (*weights.Weights, bool) {
		if v, err := weights.ParseVersionName(name); err == nil && v == w.Version {
			return &w, true
		}
		return nil, false
	}, nil
}

func missing(dir string) bool {
	_, err := os.Stat(dir)
	return errors.Is(err, fs.ErrNotExist)
}

func (e Env) getenv(key string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(key)
}

// OpenStore opens the weights store with the clock and the fixtures and reports directories.
func (e Env) OpenStore() (*store.Store, error) {
	s, err := store.OpenSharing(e.WeightsDir, e.Now, e.reads)
	if err != nil {
		return nil, err
	}
	s.Reference = tune.ReferenceWeights
	s.FixturesDir, s.ReportsDir = e.FixturesDir, e.ReportsDir
	return s, nil
}

// activeWeights loads the store's active version and a resolver for the versions named by meta
// weights= fields, reading through a run's shared reads (nil: fresh).
func activeWeights(dir string, reads *store.SharedReads) (weights.Weights, func(string) (*weights.Weights, bool), error) {
	s, err := store.OpenSharing(dir, nil, reads)
	if err != nil {
		return weights.Weights{}, nil, err
	}
	active, err := s.Active()
	if err != nil {
		return weights.Weights{}, nil, err
	}
	resolve := func(name string) (*weights.Weights, bool) {
		v, err := weights.ParseVersionName(name)
		if err != nil {
			return nil, false
		}
		w, err := s.Version(v)
		if err != nil {
			return nil, false
		}
		return &w, true
	}
	return active, resolve, nil
}

// Decisions is what the issue-11 rules need besides the active weights (docs/decisions.md#decisions-evidence-screen-and-acceptance-issue-11):
// the evidence ledger, the first version (the drift bound's origin) and the parity prompts.
type Decisions struct {
	// Used is the evidence ledger: task key → the version whose apply used it.
	Used map[string]string
	// Origin is v0001 (nil when the store has no v0001: then no drift bound applies).
	Origin *weights.Weights
	Parity *evolve.Parity
	// EvidenceAfter is the evidence watermark: the evidence_through of the last applied proposal (zero
	// when none). Tasks at or before it supported an applied change and never count again
	// (docs/decisions.md#spent-evidence).
	EvidenceAfter time.Time
}

// loadDecisions reads the ledger from the store's log (through a run's shared reads; nil: fresh), the
// origin version and the built-in parity prompts. Without a store (the built-in weights outside a
// project) nothing was ever applied: the ledger is empty.
func loadDecisions(dir string, reads *store.SharedReads, resolve func(string) (*weights.Weights, bool)) (Decisions, error) {
	d := Decisions{Used: map[string]string{}}
	var err error
	if !missing(dir) {
		s, err := store.OpenSharing(dir, nil, reads)
		if err != nil {
			return d, err
		}
		if d.Used, err = s.Ledger(); err != nil {
			return d, err
		}
		if d.EvidenceAfter, err = s.EvidenceWatermark(); err != nil {
			return d, err
		}
	}
	if w, ok := resolve(weights.VersionName(1)); ok {
		d.Origin = w
	}
	d.Parity, err = BuiltinParity()
	return d, err
}

// BuiltinParity parses the parity prompts the binary carries (tune.ParityPrompts) once per process.
func BuiltinParity() (*evolve.Parity, error) {
	parityOnce.Do(func() {
		parity, parityErr = evolve.ReadParity(bytes.NewReader(tune.ParityPrompts), "built-in testdata/ldd/parity.jsonl")
	})
	return parity, parityErr
}

var (
	parityOnce sync.Once
	parity     *evolve.Parity
	parityErr  error
)

// traceLogs are the trace logs a detection reads (traceparse.DefaultLog when none is given), streamed:
// every task of every log, in file order, one log after the other, none held once the detection is
// done with it (docs/decisions.md#flat-memory-issue-28). Reading them fills the line counts, the
// reader's warnings (logs named by LogName), the count of tasks and the first read error.
type traceLogs struct {
	// paths are the logs to read, in order, without repeats; names how each is named (Env.LogName).
	paths, names []string
	lines        traceparse.LineCounts
	warnings     []traceparse.Warning
	// tasks counts every task of the logs; takenUp those of them the cached states gave, not read
	// tonight.
	tasks, takenUp int
	err            error
	// resume, by name, is the cached state a log is taken up from (docs/decisions.md#nightly-state);
	// read is what each path's read gave, for the next state.
	resume map[string]*cachedLog
	read   []logRead
	// repeated says a log gave a task an earlier log of the read gave (repeatedTasks): the night then
	// leaves no state to take up, so the next one reads whole and sees every repeat.
	repeated bool
	// prints are, with two or more logs, the prints of every task each log gave (by index of names),
	// which the next state keeps so that a night from it can check its new tasks against them
	// (checkRepeats); checked says that check ran and found none.
	prints  [][]uint64
	checked bool
}

// logRead is what one log's read gave: its size when read, every line count, warning (all of them,
// unless more than a read keeps) and task, counted from the start of the log even when the read
// resumed from a cached state.
type logRead struct {
	path, name string
	size       int64
	lines      traceparse.LineCounts
	warnings   []traceparse.Warning
	overflow   bool
	tasks      int
	// modified is the log's modification time before the read: a log changed since is not cached.
	modified time.Time
}

// openTraceLogs checks that every log can be read (a missing log, a FIFO or a device fails here, before
// anything is decided) and names them; the logs are read when the detection streams them.
func openTraceLogs(env Env, paths []string) (*traceLogs, error) {
	if len(paths) == 0 {
		if _, err := os.Stat(traceparse.DefaultLog); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no trace log: %s does not exist here (pass the LOG paths to read)", traceparse.DefaultLog)
		}
		paths = []string{traceparse.DefaultLog}
	}
	l := &traceLogs{}
	var files []os.FileInfo
	for _, p := range paths {
		// Each log is read by its absolute path: the nightly states are keyed by it, so a night run
		// from another directory, or with the log spelt another way, takes them up too; and since a
		// log's name is a function of that path, names are unique.
		read := p
		if abs, err := filepath.Abs(p); err == nil {
			read = abs
		}
		f, err := regular.Open(p)
		if err != nil {
			return nil, err
		}
		fi, err := f.Stat()
		f.Close()
		if err != nil {
			return nil, err
		}
		// A file named twice — a shell glob and an explicit path, a relative and an absolute path, a
		// linked directory or a hard link (a glob over project directories one of which links
		// another) — is one log; read twice, every task would count twice (the fifth review,
		// TestALogReachedTwiceIsReadOnce). The first path names it.
		if slices.ContainsFunc(files, func(o os.FileInfo) bool { return os.SameFile(o, fi) }) {
			continue
		}
		files = append(files, fi)
		l.paths, l.names = append(l.paths, read), append(l.names, env.LogName(p))
	}
	return l, nil
}

// stream yields the tasks of every log, relabelled by name. Each log is read once: openTraceLogs keeps
// one path per file, and a name is a function of that path. A log with a cached state is read from the
// state's offset, what the read before it gave taken from the state.
func (l *traceLogs) stream(yield func(*traceparse.Task) bool) {
	stop := errors.New("stopped")
	repeats := newRepeatedTasks(len(l.names))
	if repeats != nil {
		l.prints = make([][]uint64, len(l.names))
	}
	for i, name := range l.names {
		r := logRead{path: l.paths[i], name: name}
		if fi, err := os.Stat(r.path); err == nil {
			r.modified = fi.ModTime()
		}
		offset, line := int64(0), 1
		if c := l.resume[name]; c != nil {
			offset, line = c.State.Offset, c.State.Line
			r.lines, r.warnings, r.tasks = c.Lines, slices.Clone(c.Warnings), c.Tasks
			l.takenUp += c.Tasks
		}
		// Kept as a whole-log read keeps them: at most traceparse.MaxWarnings per log, the cached
		// ones first; r.warnings keeps them all for the next state, unless there are more.
		var warns traceparse.WarningList
		for _, w := range r.warnings {
			warns.Add(w)
		}
		warn := func(w traceparse.Warning) {
			w.File = name
			warns.Add(w)
			if r.overflow = r.overflow || len(r.warnings) >= traceparse.MaxWarnings; !r.overflow {
				r.warnings = append(r.warnings, w)
			}
		}
		var err error
		var lines traceparse.LineCounts
		lines, r.size, err = traceparse.StreamLogFrom(r.path, offset, 0, line, func(t *traceparse.Task) error {
			r.tasks++
			t.Source = name
			if repeats != nil { // two or more logs
				p, ok := taskPrint(t)
				if ok {
					l.prints[i] = append(l.prints[i], p)
				}
				if dup, w := repeats.repeated(i, t, p, ok, l.names); dup {
					l.repeated = true
					// warned where a whole read warns: at the first repeat, in line order with the
					// reader's warnings; a night from the state keeps the warning of the night that met it
					if w != nil && !repeatWarned(r.warnings, *w) {
						warn(*w)
					}
					return nil
				}
			}
			if !yield(t) {
				return stop
			}
			return nil
		}, warn)
		r.lines.Add(lines)
		l.lines.Add(r.lines)
		l.tasks += r.tasks
		l.read = append(l.read, r)
		if errors.Is(err, stop) {
			return
		}
		if err != nil {
			l.err = err
			return
		}
		l.warnings = append(l.warnings, warns.List()...)
	}
}

// parseWarnings turns the trace reader's warnings into the evolution's.
func parseWarnings(l *traceLogs) []evolve.Warning {
	out := make([]evolve.Warning, 0, len(l.warnings))
	for _, w := range l.warnings {
		out = append(out, evolve.Warning{Source: w.File, Line: w.Line, Reason: w.Reason})
	}
	return out
}

// DetectResult is tune detect's result (and its --json shape).
type DetectResult struct {
	*evolve.Detection
	Logs  []string              `json:"logs"`
	Lines traceparse.LineCounts `json:"lines"`
	// Tails lists the logs read from a byte offset whose line numbers count from there (see
	// traceparse.AbsoluteLines); empty for every log of ordinary size.
	Tails []traceparse.Tail `json:"tails,omitempty"`
}

// Detect reads the window of the logs and detects the low-side regressions in it; the trace reader's
// warnings come first in Warnings.
func Detect(env Env, logs []string) (*DetectResult, error) {
	inputs, err := readStepInputs(env, logs, false)
	if err != nil {
		return nil, err
	}
	det := evolve.Detect(evolve.DetectInput{Stream: inputs.read.stream, Now: env.Now(), EvidenceAfter: inputs.dec.EvidenceAfter,
		Origin: inputs.dec.Origin, Parity: inputs.dec.Parity,
		Resolver: evolve.Resolver{Active: &inputs.active, WeightsFor: inputs.resolver, Used: inputs.dec.Used}})
	if inputs.read.err != nil {
		return nil, inputs.read.err
	}
	det.Warnings = evolve.UniqueWarnings(append(parseWarnings(inputs.read), det.Warnings...))
	return &DetectResult{Detection: det, Logs: inputs.read.names, Lines: inputs.read.lines}, nil
}
