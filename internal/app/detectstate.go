package app

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/traceparse"
)

// The nightly state (docs/decisions.md#nightly-state): what a night's detection counted for good of each
// log, so that the next night reads only the tasks after it. It is a cache: it is used only when it was
// made under the same decision inputs (the key) from the same bytes (each log's check), and anything
// wrong with it — missing, unreadable, too large, malformed, another key, a log rewritten, truncated or
// rotated — just means a full read.

// detectStateFormat changes whenever what a state holds or means changes (5: a cell's day; 6: a state's
// Last is the latest meta time before its held tasks, docs/decisions.md#settling; 7: a cell's unclamped
// flag, docs/decisions.md#the-clamp-in-the-loss-rule; 8: a cell's block is floored before the origin
// and evolve.NoBlock without a time, docs/decisions.md#onsets-at-30-day-blocks; 9: a cell's ran-high and
// regressed-high flags, docs/decisions.md#the-carriers-at-l2; 10: a state holds WindowSize − 1 counted
// tasks before its first uncounted one, docs/decisions.md#nightly-state; 11: the prints of every task of
// each log when a night reads two or more, docs/decisions.md#a-task-in-two-logs).
const detectStateFormat = 11

// detectState is the cached state of the logs a night read.
type detectState struct {
	Format int `json:"format"`
	// Key fingerprints the decision inputs the state was made under (stateKey).
	Key  string      `json:"key"`
	Logs []cachedLog `json:"logs"`
}

// cachedLog is one log's state: what the detection counted for good (State) and what the reader gave
// before the state's offset (line counts, warnings, tasks), with the check of the bytes it read there.
type cachedLog struct {
	Path     string                `json:"path"`
	State    *evolve.LogState      `json:"state"`
	Lines    traceparse.LineCounts `json:"lines"`
	Warnings []traceparse.Warning  `json:"warnings"`
	Tasks    int                   `json:"tasks"`
	// Check is the sha256 of samples of the bytes the night read, up to CheckedTo (checkBytes): the
	// held tasks a read from the state reads again must all still be there, or the window of a log
	// cut and written on would reach before them (docs/decisions.md#nightly-state).
	Check     string `json:"check"`
	CheckedTo int64  `json:"checked_to"`
	// Prints are, when the night read two or more logs, the prints of every task the log gave
	// (encodePrints): a night from the state checks its new tasks against them (checkRepeats).
	// Absent when the night read one log: a night of two or more then reads that log whole.
	Prints *string `json:"prints,omitempty"`
}

// encodeState is a nightly state file (the detection's or the watch's): the state as one JSON line. A
// detection state's size does not grow with the tasks (counts per distinct screen task, a few task
// warnings of each kind, the flagged tasks), so plain JSON is cheap to decode.
func encodeState(st any) ([]byte, error) {
	data, err := json.Marshal(st)
	return append(data, '\n'), err
}

// stateMadeUnder says whether a cached state's bytes hold format and key, reading those two fields
// only: a state file is written by a pull request as easily as by tune, and tiny JSON values that each
// decode into a large struct (an empty kept row, an empty warning) would make the 64 MiB a state may
// hold cost gigabytes to decode; a state of another key costs a look at its key
// (docs/decisions.md#fourth-review-the-watch-state-and-explore). The key cannot be made without the
// program's identity and the decision inputs, so a state that passes was written by tune.
//
// Only the state's first tokens are read: tune writes the format and the key first (a state that puts
// them elsewhere is refused), and a look at a valid state must not scan all of it before its decode does.
func stateMadeUnder(data []byte, format int, key string) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	for _, want := range []json.Token{json.Delim('{'), "format", float64(format), "key", key} {
		if tok, err := dec.Token(); err != nil || tok != want {
			return false
		}
	}
	return true
}

// decodeState reads what encodeState wrote (after stateMadeUnder accepted its format and key).
func decodeState[T any](data []byte) (*T, error) {
	var st T
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// stateKey fingerprints what a detection's counted part depends on besides the log's bytes: the program
// (its executable's identity), the active weights, the versions a meta weights= may name, the evidence
// ledger, the watermark, and the logs in the order read (a log's index numbers its strata).
func (in *stepInputs) stateKey(env Env) string {
	h := sha256.New()
	fmt.Fprintf(h, "format %d\n", detectStateFormat)
	programIdentity(h)
	active, _ := json.Marshal(in.active)
	fmt.Fprintf(h, "active %s\n", active)
	for _, v := range store.VersionNames(env.WeightsDir) {
		w, ok := in.resolver(v)
		data, _ := json.Marshal(w)
		fmt.Fprintf(h, "version %s %t %s\n", v, ok, data)
	}
	keys := make([]string, 0, len(in.dec.Used))
	for k := range in.dec.Used {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "used %q %q\n", k, in.dec.Used[k])
	}
	fmt.Fprintf(h, "watermark %s\n", in.dec.EvidenceAfter.UTC().Format(time.RFC3339Nano))
	for i := range in.read.paths {
		fmt.Fprintf(h, "log %q %q\n", in.read.paths[i], in.read.names[i])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// programIdentity writes the running executable's path, size and modification time into a state's
// key: another build of tune never takes up a state.
func programIdentity(h io.Writer) {
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			fmt.Fprintf(h, "exe %s %d %d\n", exe, fi.Size(), fi.ModTime().UnixNano())
		}
	}
}

// resumeStates are the detection's states of the logs to take up, by name (nil: none).
func (l *traceLogs) resumeStates() map[string]*evolve.LogState {
	if len(l.resume) == 0 {
		return nil
	}
	out := make(map[string]*evolve.LogState, len(l.resume))
	for name, c := range l.resume {
		out[name] = c.State
	}
	return out
}

// loadDetectState sets the logs' resume states from the store's cached state when it was made under
// key and each log's bytes up to its state pass the check.
func (l *traceLogs) loadDetectState(weightsDir, key string) {
	data := store.ReadDetectState(weightsDir)
	if data == nil || !stateMadeUnder(data, detectStateFormat, key) {
		return
	}
	st, err := decodeState[detectState](data)
	if err != nil || st.Format != detectStateFormat || st.Key != key {
		return
	}
	paths := map[string]string{} // the path each name is read from
	for i, n := range l.names {
		paths[n] = l.paths[i]
	}
	for i := range st.Logs {
		c := &st.Logs[i]
		if c.State == nil {
			continue
		}
		if c.State.Check() != nil || c.Path == "" || paths[c.State.Source] != c.Path ||
			c.Tasks < c.State.Labelled || len(c.Warnings) > traceparse.MaxWarnings || c.CheckedTo <= c.State.CountedTo {
			continue
		}
		if check, err := checkBytes(c.Path, c.State.CountedTo, c.CheckedTo); err != nil || check != c.Check {
			continue
		}
		if l.resume == nil {
			l.resume = map[string]*cachedLog{}
		}
		l.resume[c.State.Source] = c
	}
	if !l.checkRepeats() {
		l.resume = nil
	}
}

// checkRepeats reports whether a night from the states decides as a whole read would although it reads
// only each log's new part: with two or more logs, none of the tasks it is about to read (a resumed log
// from its state's offset, any other log whole) may repeat a task another log gave, tonight or on an
// earlier night (the prints the states keep). A repeat found, a print missing or unreadable: false, and
// the night reads whole, which counts each repeated task once (docs/decisions.md#a-task-in-two-logs).
// It reads those parts once more before the night's read: new tasks only, on the nights that use states.
func (l *traceLogs) checkRepeats() bool {
	if len(l.names) < 2 || len(l.resume) == 0 {
		return true
	}
	owner := map[uint64]int{} // print → the log that gave it
	for i, name := range l.names {
		c := l.resume[name]
		if c == nil {
			continue
		}
		if c.Prints == nil {
			return false // kept by a night of one log: its tasks were never checked against the others'
		}
		ps, ok := decodePrints(*c.Prints)
		if !ok {
			return false
		}
		for _, p := range ps {
			if j, seen := owner[p]; seen && j != i {
				return false
			}
			owner[p] = i
		}
	}
	repeat := errors.New("repeat")
	for i, path := range l.paths {
		offset, line := int64(0), 1
		if c := l.resume[l.names[i]]; c != nil {
			offset, line = c.State.Offset, c.State.Line
		}
		_, _, err := traceparse.StreamLogFrom(path, offset, 0, line, func(t *traceparse.Task) error {
			p, ok := taskPrint(t)
			if !ok {
				return nil
			}
			if j, seen := owner[p]; seen && j != i {
				return repeat
			}
			owner[p] = i
			return nil
		}, nil)
		if err != nil {
			return false // a repeat, or a read the night's own read will report
		}
	}
	l.checked = true
	return true
}

// saveDetectState writes the state of the logs just read (states: the detection's, in order) under key.
// A log is left out when its read cannot be split where its state starts exactly as a read from there
// gives it (more warnings than a read keeps, the log modified since the read began, or a read from the
// state's offset that does not give the same tail), and is then read in full next time. A failure to write is no error:
// the state is a cache, and the next night reads in full.
func (l *traceLogs) saveDetectState(weightsDir, key string, states []*evolve.LogState) {
	out := detectState{Format: detectStateFormat, Key: key, Logs: []cachedLog{}}
	// Logs that repeat each other's tasks leave no log's state: a night from a state reads only new
	// tasks, and could not tell a new task from one an earlier night read in another log
	// (docs/decisions.md#a-task-in-two-logs).
	if l.repeated {
		states = nil
	}
	for _, st := range states {
		var r *logRead
		for i := range l.read {
			if l.read[i].name == st.Source {
				r = &l.read[i]
			}
		}
		if r == nil || r.overflow {
			continue
		}
		if c, ok := splitRead(r, st); ok {
			if l.prints != nil {
				ps := encodePrints(l.logPrints(st.Source))
				c.Prints = &ps
			}
			out.Logs = append(out.Logs, c)
		}
	}
	data, err := encodeState(&out)
	if err != nil {
		return
	}
	_ = store.WriteDetectState(weightsDir, data)
}

// splitRead is r's read split at st's offset: the part before it, as a cachedLog. It reads the log again
// from the offset up to where r ended, and the split is sound only when that read's warnings are the
// last of r's and the first task it gives starts at the offset, as in r.
func splitRead(r *logRead, st *evolve.LogState) (cachedLog, bool) {
	var tail []traceparse.Warning
	tasks, first := 0, 0
	lines, ok := rereadTail(r.path, r.modified, r.size, st.Offset, st.Line, func(t *traceparse.Task) error {
		if tasks == 0 {
			first = t.Line
		}
		tasks++
		return nil
	}, func(w traceparse.Warning) {
		w.File = r.name
		tail = append(tail, w)
	})
	if !ok || first != st.Line || tasks > r.tasks || len(tail) > len(r.warnings) ||
		!slices.Equal(tail, r.warnings[len(r.warnings)-len(tail):]) {
		return cachedLog{}, false
	}
	check, err := checkBytes(r.path, st.CountedTo, r.size)
	if err != nil {
		return cachedLog{}, false
	}
	c := cachedLog{Path: r.path, State: st, Warnings: r.warnings[:len(r.warnings)-len(tail)], Tasks: r.tasks - tasks, Check: check, CheckedTo: r.size}
	c.Lines = r.lines
	c.Lines.Read -= lines.Read
	c.Lines.Parsed -= lines.Parsed
	c.Lines.Skipped -= lines.Skipped
	c.Lines.Blank -= lines.Blank
	c.Lines.Comment -= lines.Comment
	if c.Warnings == nil {
		c.Warnings = []traceparse.Warning{}
	}
	return c, true
}

// rereadTail reads the log at path again from offset (the meta line of line) up to size, where a read
// that began when the log's modification time was modified ended, as the next night's read from the
// state will: a state is split there only when the tail reads as the night's read gave it, which the
// caller compares. ok is false when the log was modified since (or its time is unknown), or the read
// fails or ends elsewhere. A Transient read: emit keeps nothing of a task.
func rereadTail(path string, modified time.Time, size, offset int64, line int, emit func(*traceparse.Task) error, warn func(traceparse.Warning)) (traceparse.LineCounts, bool) {
	if fi, err := os.Stat(path); err != nil || !fi.ModTime().Equal(modified) || modified.IsZero() {
		return traceparse.LineCounts{}, false
	}
	lines, end, err := traceparse.StreamLogFrom(path, offset, size, line, emit, warn, traceparse.Transient())
	return lines, err == nil && end == size
}

// Sampling of checkBytes: the first and last checkEdge bytes and checkSamples blocks of checkBlock
// spread evenly between: a rewritten, truncated, rotated or replaced log changes some of them, and the
// check costs ~0.5 MB of reads however long the log (a hash of every byte would cost a read of it).
const (
	checkEdge    = 64 << 10
	checkSamples = 64
	checkBlock   = 4 << 10
)

// checkBytes is the sha256 of samples of the log's bytes before offset and of the line at offset (the
// meta line a resumed read starts with, so that it is still the line a whole read starts a task with),
// and of those up to to when it is further (0: none; beyond the log's end: an error).
func checkBytes(path string, offset, to int64) (string, error) {
	f, err := regular.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if offset <= 0 || offset >= fi.Size() {
		return "", fmt.Errorf("%s: offset %d outside the log's %d bytes", path, offset, fi.Size())
	}
	line := make([]byte, min(checkEdge, fi.Size()-offset))
	if _, err := f.ReadAt(line, offset); err != nil && err != io.EOF {
		return "", err
	}
	end := offset + int64(len(line))
	if i := bytes.IndexAny(line, "\r\n"); i >= 0 {
		end = offset + int64(i) + 1
	}
	if to > fi.Size() {
		return "", fmt.Errorf("%s: %d bytes, %d read before", path, fi.Size(), to)
	}
	end = max(end, to)
	h := sha256.New()
	fmt.Fprintf(h, "%d\n", end)
	// One buffer for every block (io.Copy would allocate one per block: ~2 MB a check).
	buf := make([]byte, checkEdge)
	block := func(at, n int64) error {
		at, n = max(0, at), min(n, end-max(0, at))
		if n <= 0 {
			return nil
		}
		k, err := f.ReadAt(buf[:n], at)
		h.Write(buf[:k])
		if err == io.EOF {
			err = nil
		}
		return err
	}
	if err := block(0, checkEdge); err != nil {
		return "", err
	}
	for i := int64(1); i <= checkSamples; i++ {
		if err := block(end*i/(checkSamples+1), checkBlock); err != nil {
			return "", err
		}
	}
	if err := block(end-checkEdge, checkEdge); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// logPrints are the prints of every task log name gave: those its state kept, and tonight's read.
func (l *traceLogs) logPrints(name string) []uint64 {
	var ps []uint64
	if c := l.resume[name]; c != nil && c.Prints != nil {
		ps, _ = decodePrints(*c.Prints) // checked by checkRepeats
	}
	if i := slices.Index(l.names, name); i >= 0 && i < len(l.prints) {
		ps = append(ps, l.prints[i]...)
	}
	return ps
}
