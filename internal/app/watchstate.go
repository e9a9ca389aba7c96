package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sync/atomic"
	"time"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/watch"
)

// The watch's nightly state (docs/decisions.md#watch-state): each log's part of the watch's Builder
// before the last task read of it, and where that task's meta line is, so that the next night reads
// each log only from there (the last task may still grow). Like the detection's state it is a cache:
// used only when made under the same inputs (the key) from the same bytes (each log's check), and
// anything wrong with it just means a full read of every log.

// watchStateFormat changes whenever what a state holds or means changes (2: a log's Last, the quiet
// week that ends the open horizons, docs/decisions.md#settling; 3: a moved auto task without weights=
// at the parent's level counts before the version,
// docs/decisions.md#the-watch-dates-a-task-by-its-level-when-the-log-does-not-say; 4: levels clamped as the
// scorer runs them, docs/decisions.md#the-clamp-in-the-loss-rule).
const watchStateFormat = 4

// watchState is the cached state of the logs a nightly watch read, in the order read.
type watchState struct {
	Format int `json:"format"`
	// Key fingerprints the inputs the state was made under (watchStateKey).
	Key  string        `json:"key"`
	Logs []watchLogRef `json:"logs"`
}

// watchLogRef is one log's state: its Builder part before the task whose meta line is at Offset (line
// Line), and the check of the bytes up to the end of that line (checkBytes). Offset 0: the log gave no
// task after its first one's meta line at its start, and is read from there (State is then empty).
type watchLogRef struct {
	Path   string          `json:"path"`
	Offset int64           `json:"offset"`
	Line   int             `json:"line"`
	Check  string          `json:"check,omitempty"`
	State  *watch.LogState `json:"state"`
}

// watchStateKey fingerprints what the watch's result depends on besides the logs' bytes: the program,
// the two versions' weights, when each became active and when the version stopped, the changes, the
// [watch] bounds, and the logs and their names in order.
func watchStateKey(in *watch.Input, paths, names []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "watch format %d\n", watchStateFormat)
	programIdentity(h)
	for _, v := range []watch.Version{in.Version, in.Parent} {
		data, _ := json.Marshal(v.Weights)
		fmt.Fprintf(h, "version %s from %s\n", data, v.From.UTC().Format(time.RFC3339Nano))
	}
	fmt.Fprintf(h, "until %s\n", in.Until.UTC().Format(time.RFC3339Nano))
	changes, _ := json.Marshal(in.Changes)
	cfg, _ := json.Marshal(in.Config)
	fmt.Fprintf(h, "changes %s\nconfig %s\n", changes, cfg)
	for i := range paths {
		fmt.Fprintf(h, "log %q %q\n", paths[i], names[i])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// watchRead is what one log's read gave the watch: where it ended, the last task read (not yet added
// to the Builder when the part was taken) and the part.
type watchRead struct {
	path     string
	modified time.Time
	size     int64
	last     *traceparse.Task
	ref      watchLogRef
}

// loadWatchState returns, in the order of paths, each log's state to take up, when the cached state was
// made under key and every log's bytes up to its offset pass the check; nil otherwise (all or nothing).
func loadWatchState(weightsDir, key string, paths, names []string) []watchLogRef {
	data := store.ReadWatchState(weightsDir)
	if data == nil || !stateMadeUnder(data, watchStateFormat, key) {
		return nil
	}
	st, err := decodeState[watchState](data)
	if err != nil || st.Format != watchStateFormat || st.Key != key || len(st.Logs) != len(paths) {
		return nil
	}
	for i, l := range st.Logs {
		if l.State == nil || l.Path != paths[i] || l.State.Source != names[i] || l.State.Check() != nil || l.Line < 1 {
			return nil
		}
		if l.Offset == 0 {
			if l.Line != 1 || l.State.Labelled != 0 || len(l.State.Kept) != 0 || l.State.Before+l.State.After != 0 || len(l.State.NotCounted) != 0 {
				return nil
			}
			continue
		}
		// Each task before the one at Offset began on a line of its own before Line, and each line holds
		// at least its newline: a state's counts and rows stay within the bytes it was made from.
		if int64(l.Line-1) > l.Offset || l.State.Labelled > l.Line-1 || !keptBefore(l.State, l.Line) {
			return nil
		}
		if check, err := checkBytes(l.Path, l.Offset, 0); err != nil || check != l.Check {
			return nil
		}
	}
	return st.Logs
}

// saveWatchState writes the state of the logs just read under key. Nothing is written unless every log's
// split is sound: the log was not modified while read, and a read from the last task's meta line to
// where the night's read ended gives that one task exactly as the night's read gave it. A failure to
// write is no error: the state is a cache, and the next night reads in full.
func saveWatchState(weightsDir, key string, reads []watchRead) {
	out := watchState{Format: watchStateFormat, Key: key, Logs: make([]watchLogRef, 0, len(reads))}
	for _, r := range reads {
		ref := r.ref
		if ref.State == nil {
			return
		}
		if r.last != nil && ref.Offset > 0 {
			n, same := 0, false
			_, ok := rereadTail(r.path, r.modified, r.size, ref.Offset, ref.Line, func(t *traceparse.Task) error {
				n++
				t.Source = r.last.Source
				same = n == 1 && reflect.DeepEqual(t, r.last)
				return nil
			}, nil)
			if !ok || n != 1 || !same {
				return
			}
			check, err := checkBytes(r.path, ref.Offset, 0)
			if err != nil {
				return
			}
			ref.Check = check
		}
		out.Logs = append(out.Logs, ref)
	}
	data, err := encodeState(&out)
	if err != nil {
		return
	}
	_ = store.WriteWatchState(weightsDir, data)
}

// keptBefore says whether every kept row of st lies before line, in order.
func keptBefore(st *watch.LogState, line int) bool {
	prev := 0
	for _, k := range st.Kept {
		if k.Line <= prev || k.Line >= line {
			return false
		}
		prev = k.Line
	}
	return true
}

// watchFeed adds a night's tasks to the watch's Builder, holding back each log's last task: the log's
// part for the next state is taken before it, since the task may still grow (a resumed read starts at
// its meta line). The tasks of a log must come in file order, and each log be ended (end) once read.
type watchFeed struct {
	b    *watch.Builder
	last map[string]*traceparse.Task
}

func newWatchFeed(b *watch.Builder) *watchFeed {
	return &watchFeed{b: b, last: map[string]*traceparse.Task{}}
}

// add takes the next task of its log (t.Source), which nothing changes afterwards.
func (f *watchFeed) add(t *traceparse.Task) {
	if prev := f.last[t.Source]; prev != nil {
		f.b.Add(prev)
	}
	f.last[t.Source] = t
}

// end ends the read of the log at path, named name, that began at offset, was modified last at
// modified and ended at size: what it gave for the next state, its last task then added.
func (f *watchFeed) end(path, name string, offset int64, modified time.Time, size int64) watchRead {
	prev := f.last[name]
	delete(f.last, name)
	r := watchRead{path: path, modified: modified, size: size, last: prev,
		ref: watchLogRef{Path: path, Line: 1, State: f.b.State(name)}}
	if prev == nil && offset > 0 {
		r.ref.State = nil // a resumed read that gave no task: no state to leave
	}
	if prev != nil {
		r.ref.Offset, r.ref.Line = prev.Offset, prev.Line
		f.b.Add(prev)
	}
	return r
}

// streamWatch feeds the logs to b, each from its state when resume holds one (b has taken the states
// up), and returns what each read gave for the next state.
func streamWatch(b *watch.Builder, paths, names []string, resume []watchLogRef, warn func(evolve.Warning)) (reads []watchRead, repeated bool, err error) {
	f := newWatchFeed(b)
	reads = make([]watchRead, len(paths))
	repeats := newRepeatedTasks(len(paths))
	for i, path := range paths {
		tasks := 0
		var modified time.Time
		if fi, err := os.Stat(path); err == nil {
			modified = fi.ModTime()
		}
		offset, line := int64(0), 1
		if resume != nil {
			offset, line = resume[i].Offset, resume[i].Line
		}
		_, size, rerr := traceparse.StreamLogFrom(path, offset, 0, line, func(t *traceparse.Task) error {
			t.Source = names[i]
			tasks++
			if repeats != nil { // two or more logs
				p, ok := taskPrint(t)
				dup, w := repeats.repeated(i, t, p, ok, names)
				if w != nil {
					warn(evolve.Warning{Source: w.File, Line: w.Line, Reason: w.Reason})
				}
				if dup {
					repeated = true
					return nil
				}
			}
			f.add(t)
			return nil
		}, func(w traceparse.Warning) {
			warn(evolve.Warning{Source: names[i], Line: w.Line, Reason: w.Reason})
		})
		if rerr != nil {
			return nil, false, rerr
		}
		if tasks == 0 && offset == 0 {
			// a log read whole that holds no task: a wrong path would otherwise read as "too early"
			warn(evolve.Warning{Source: names[i], Reason: "no task in this log (empty, or no line is a trace line): the watch has nothing from it"})
		}
		reads[i] = f.end(path, names[i], offset, modified, size)
	}
	return reads, repeated, nil
}

// tapDetection returns the detection's read of the logs with every task fed to the watch as well,
// when that one read gives the watch exactly what its own would: the watch reads every log in full (it
// took no state up) and so does the detection (it took none up either), over the same paths under the
// same names, each named once, so that the detection's read yields every task of every log in file
// order (docs/decisions.md#one-read-for-the-watch-and-the-detection). ok is false when it cannot serve:
// the watch then reads alone. endTap ends it once the detection is done.
func (run *watchRun) tapDetection(l *traceLogs) (stream func(yield func(*traceparse.Task) bool), ok bool) {
	if run.resume != nil || len(l.resume) != 0 || !slices.Equal(l.paths, run.logs) || !slices.Equal(l.names, run.in.Logs) {
		return nil, false
	}
	run.tapped, run.feed = true, newWatchFeed(run.b)
	return func(yield func(*traceparse.Task) bool) {
		for t := range l.stream {
			run.feed.add(t)
			if !yield(t) {
				return
			}
		}
		run.tapEnded = true
	}, true
}

// endTap ends the logs the detection read for the watch. A read cut short (an error, or a detection
// that stopped early) leaves the watch to read alone, from the start.
func (run *watchRun) endTap(l *traceLogs) error {
	if !run.tapped {
		return nil
	}
	run.tapped = false
	// A read that ran to its end without an error read every path of run.logs once, in order
	// (tapDetection's condition): l.read is theirs.
	if !run.tapEnded || l.err != nil {
		run.b = watch.NewBuilder(*run.in)
		return run.readAlone()
	}
	run.repeated = l.repeated
	run.reads = make([]watchRead, len(run.logs))
	for i, r := range l.read {
		run.reads[i] = run.feed.end(r.path, r.name, 0, r.modified, r.size)
	}
	sharedReads.Add(1)
	return nil
}

// sharedReads counts the watches the detection's read fed: what the tests check the shared read is
// taken by.
var sharedReads atomic.Int64
