package traceout

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/traceparse"
)

// A single log smaller than this is read whole by default; anything bigger gives its last tasks.
const (
	smallTraceLog   = 1 << 20
	defaultLastTask = 20
)

// Options choose what tune trace reads.
type Options struct {
	Logs    []string
	Last    int  // tasks to read per log, 0 for all
	LastSet bool // Last was given; otherwise each log gets its default (LastTasks)
	MaxLine int  // skip lines longer than this many MB
	// KeepWarnings keeps the warnings of whole-log reads in the result (for the JSON document) instead
	// of handing each to the warn callback.
	KeepWarnings bool
}

// LastTasks is the number of tasks to read of one log (0: all): Last when given, else all of a log
// under 1 MB and the last 20 of a larger one. The rule looks at that log alone: `tune trace A B` reads
// A as `tune trace A` does (docs/decisions.md#trace-window).
func (o Options) LastTasks(log string) int {
	if o.LastSet {
		return o.Last
	}
	if fi, err := os.Stat(log); err == nil && fi.Size() < smallTraceLog {
		return 0
	}
	return defaultLastTask
}

// Result is what a trace read counted: every line, every warning, the tail reads.
type Result struct {
	Lines    traceparse.LineCounts
	Warnings []traceparse.Warning // of tail reads, and of whole-log reads with KeepWarnings
	Tails    []traceparse.Tail
	NWarn    int // warnings, also those handed to warn
	Skipped  int // warnings that skipped their line
}

// Read reads the logs into out, task by task, and hands each warning not kept in the result to warn
// (tailed: its line counts from a tail read). A whole log is streamed: a task is written as soon as it
// is read and nothing keeps it, so memory does not follow the log (docs/decisions.md#streaming-reads).
func Read(opts Options, out TaskWriter, warn func(w traceparse.Warning, tailed bool)) (*Result, error) {
	// A FIFO or a device (/dev/zero) would block the reader or never end: refused by name first
	// (docs/decisions.md#store-integrity-and-hostile-inputs-issue-18).
	for _, log := range opts.Logs {
		if err := regular.CheckPath(log); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	res := &Result{}
	var kept traceparse.WarningList // whole-log reads' warnings, for the JSON document: bounded
	count := func(w traceparse.Warning) {
		res.NWarn++
		if w.Skipped {
			res.Skipped++
		}
	}
	readOpts := []traceparse.Option{traceparse.MaxLineBytes(opts.MaxLine << 20)}
	if KeepsNoTask(out) {
		readOpts = append(readOpts, traceparse.Transient())
	}
	for _, log := range opts.Logs {
		last := opts.LastTasks(log)
		if last == 0 {
			l, err := traceparse.StreamLog(log, out.Task, func(w traceparse.Warning) {
				count(w)
				if opts.KeepWarnings {
					kept.Add(w)
				} else {
					warn(w, false)
				}
			}, readOpts...)
			if err != nil {
				return nil, traceReadError(opts.Logs, err)
			}
			res.Lines.Add(l)
			res.Warnings = append(res.Warnings, kept.List()...)
			kept = traceparse.WarningList{}
			continue
		}
		r, err := traceparse.ReadLast(log, last, readOpts...)
		if err != nil {
			return nil, traceReadError(opts.Logs, err)
		}
		// The lines an editor shows, when the part before the tail is small enough to count.
		if err := traceparse.AbsoluteLines(log, r); err != nil {
			return nil, err
		}
		for i := range r.Tasks {
			if err := out.Task(&r.Tasks[i]); err != nil {
				return nil, err
			}
		}
		tailed := map[string]bool{}
		for _, t := range r.Tails {
			tailed[t.File] = true
		}
		for _, w := range r.Warnings {
			count(w)
			if !opts.KeepWarnings {
				warn(w, tailed[w.File])
			}
		}
		res.Lines.Add(r.Lines)
		res.Warnings, res.Tails = append(res.Warnings, r.Warnings...), append(res.Tails, r.Tails...)
	}
	return res, out.Close(res.Lines, res.Warnings, res.Tails)
}

func traceReadError(logs []string, err error) error {
	if errors.Is(err, fs.ErrNotExist) && len(logs) == 1 && logs[0] == traceparse.DefaultLog {
		return fmt.Errorf("no trace log at %s: run tune trace in a project that has one, or name the LOG files", traceparse.DefaultLog)
	}
	return err
}

// WarningText is how a warning of a read is shown: where it is (file:line; for a tail read, whose line
// counts from the tail's start, the exact byte offset as well) and what it says.
func WarningText(warn traceparse.Warning, tailed bool) (where, what string) {
	where = fmt.Sprintf("%s:%d", warn.File, warn.Line)
	if tailed {
		where = fmt.Sprintf("%s: byte %d (line %d of the tail)", warn.File, warn.Offset, warn.Line)
	}
	what = warn.Reason
	if warn.Skipped {
		what = "skipped: " + what
	}
	return where, what
}
