package traceparse

import (
	"fmt"
	"slices"
	"strings"
)

// Bounds on what one task keeps, so that the memory of a read follows the number of tasks it keeps,
// never the size of one task: a legacy log without meta lines is one task, and a hostile or runaway
// writer can put a gigabyte of lines into the last one (docs/decisions.md#bounded-memory-per-task).
// Past a bound the task is summarised (Task.Omitted): its later lines are still read — their close,
// terminal, loss, files and regression fields count for the task as before — but not kept as entries.
const (
	// DefaultMaxTaskEntries is far above any task an agent writes (tens of iterations), and
	// 10,000 entries cost about 1.5 MB.
	DefaultMaxTaskEntries = 10_000
	// DefaultMaxTaskBytes bounds the text of the kept entries (their lines' bytes), for tasks of few
	// but long lines.
	DefaultMaxTaskBytes = 4 << 20
	// maxTaskDepartures bounds a task's Departures (one per skipped line at worst); later ones are
	// counted in Omitted.Departures.
	maxTaskDepartures = 1_000
	// maxTaskFiles and maxTaskFileBytes bound the distinct files= names of a task.
	maxTaskFiles     = 10_000
	maxTaskFileBytes = 1 << 20
	// maxOmittedLoops bounds the loop names seen only past the entry bound.
	maxOmittedLoops = 64
	// maxWarnings bounds the warnings a Result keeps (Parse, ReadLast); the last one kept says how many
	// more there were. Stream hands every warning to its caller instead.
	maxWarnings = 10_000
)

// Omitted summarises what a task did not keep because it reached a bound. Line and Offset locate the
// first line that was not kept; the counts are of what was dropped.
type Omitted struct {
	Line   int   `json:"line"`
	Offset int64 `json:"offset"`
	// Entries counts the entries not kept; Iterations the iteration lines among them, and Baselines
	// the baseline iterations among those.
	Entries    int `json:"entries"`
	Iterations int `json:"iterations"`
	Baselines  int `json:"baselines"`
	// Departures counts the departures past maxTaskDepartures; Files the files= names past the bound.
	Departures int `json:"departures"`
	Files      int `json:"files"`
}

// taskBound is the parser's state of the bounds for the open task.
type taskBound struct {
	maxEntries, maxBytes int
	keptBytes            int  // line bytes of the kept entries
	omitting             bool // the open task reached a bound: later entries are counted, not kept
	tailClose            bool // its last entry is a close past the bound, which a later close replaces
	fileBytes            int  // bytes of the names in parser.files
	filesFull            bool // parser.files is sorted and full: new names are counted, not kept
	loops                []string
}

// MaxTaskEntries sets how many entries, and how many bytes of their lines, one task keeps before it is
// summarised (n <= 0: the defaults, DefaultMaxTaskEntries and DefaultMaxTaskBytes).
func MaxTaskEntries(entries, bytes int) Option {
	return func(p *parser) {
		p.bound.maxEntries, p.bound.maxBytes = entries, bytes
		if entries <= 0 {
			p.bound.maxEntries = DefaultMaxTaskEntries
		}
		if bytes <= 0 {
			p.bound.maxBytes = DefaultMaxTaskBytes
		}
	}
}

// resetBound starts the bounds of a task opened at e.
func (p *parser) resetBound(e *Entry) {
	b := &p.bound
	b.keptBytes, b.omitting, b.tailClose, b.fileBytes, b.filesFull, b.loops = 0, false, false, 0, false, b.loops[:0]
	if p.pendingOmitted > 0 {
		p.omitted(e.Line, e.Offset).Departures += p.pendingOmitted
		p.pendingOmitted = 0
	}
}

// omitted returns the open task's summary, started at line when it has none yet.
func (p *parser) omitted(line int, offset int64) *Omitted {
	if p.cur.Omitted == nil {
		p.cur.Omitted = &Omitted{Line: line, Offset: offset}
	}
	return p.cur.Omitted
}

// keepEntry says whether the entry e of the open task is kept; past the task's bounds it is counted
// instead, and the line where that starts gets a warning naming the task.
func (p *parser) keepEntry(lc *lineClass, e *Entry) bool {
	b := &p.bound
	if !b.omitting {
		if len(p.cur.Entries) < b.maxEntries && b.keptBytes+lc.size <= b.maxBytes {
			b.keptBytes += lc.size
			return true
		}
		b.omitting = true
		what := fmt.Sprintf("%d entries", b.maxEntries)
		if len(p.cur.Entries) < b.maxEntries {
			what = fmt.Sprintf("%d MB of lines", b.maxBytes>>20)
		}
		p.warn(e.Line, e.Offset, fmt.Sprintf("the task of line %d holds more than %s: its entries from this line on are counted, not kept (its close, loss and files still count)",
			p.cur.Line, what), false)
	}
	o := p.omitted(e.Line, e.Offset)
	o.Entries++
	if e.Kind == KindIter {
		o.Iterations++
		if e.Baseline {
			o.Baselines++
		}
		if !slices.Contains(b.loops, e.Loop) && len(b.loops) < maxOmittedLoops {
			b.loops = append(b.loops, strings.Clone(e.Loop))
		}
	}
	return false
}

// keepLastClose keeps the last close of a task past its bound as its last entry, so that the entries
// still end with the line that closed the task; it is not counted as omitted then.
func (p *parser) keepLastClose(e *Entry) {
	t, b := &p.cur, &p.bound
	t.Omitted.Entries--
	if b.tailClose {
		t.Omitted.Entries++ // the close it replaces
		t.Entries[len(t.Entries)-1] = *e
		return
	}
	b.tailClose = true
	n := len(t.Entries)
	t.Entries, p.ownEntries = append(t.Entries[:n:n], *e), true
}

// appendOmittedLoops adds to used the loops of the task's iterations past its bound, in order of
// appearance.
func (p *parser) appendOmittedLoops(used []string) []string {
	for _, l := range p.bound.loops {
		if !slices.Contains(used, l) {
			used = append(used, l)
		}
	}
	return used
}

// addFile adds a files= name of the open task. The names are deduplicated when they pile up; past
// maxTaskFiles distinct names (or maxTaskFileBytes of them) new names are counted, not kept. Past the
// entry bound a name is copied, so that it does not pin the arena block of its line.
func (p *parser) addFile(e *Entry, f string) {
	b := &p.bound
	if !b.filesFull && (len(p.files) >= 2*maxTaskFiles || b.fileBytes > 2*maxTaskFileBytes) {
		slices.Sort(p.files)
		p.files = slices.Compact(p.files)
		b.fileBytes = 0
		for _, f := range p.files {
			b.fileBytes += len(f)
		}
		b.filesFull = len(p.files) >= maxTaskFiles || b.fileBytes >= maxTaskFileBytes
	}
	if b.filesFull {
		if _, found := slices.BinarySearch(p.files, f); !found {
			p.omitted(e.Line, e.Offset).Files++
		}
		return
	}
	if b.omitting {
		f = strings.Clone(f)
	}
	p.files = append(p.files, f)
	b.fileBytes += len(f)
}

// keepWarning adds w to the result (see WarningList).
func (p *parser) keepWarning(w Warning) { p.warns.Add(w) }

// WarningList keeps the first MaxWarnings warnings of a read and counts the rest, so that a log of
// garbage (a warning per line) cannot make a reader hold a warning per line: Parse, ReadLast and
// `tune trace --json` keep their warnings in one (docs/decisions.md#bounded-memory-per-task).
type WarningList struct {
	kept             []Warning
	omitted, skipped int
}

// MaxWarnings is how many warnings a WarningList keeps.
const MaxWarnings = maxWarnings

// Add keeps w, or counts it once MaxWarnings are kept.
func (l *WarningList) Add(w Warning) {
	if len(l.kept) < maxWarnings {
		l.kept = append(l.kept, w)
		return
	}
	l.omitted++
	if w.Skipped {
		l.skipped++
	}
}

// List returns the warnings kept (never nil); when some were not, the last one says how many more
// there were, and how many of them were for skipped lines.
func (l *WarningList) List() []Warning {
	if l.kept == nil {
		l.kept = []Warning{}
	}
	if l.omitted > 0 {
		last := &l.kept[len(l.kept)-1]
		last.Reason += fmt.Sprintf(" (then %d more warnings, %d of them for skipped lines, not kept: a read keeps at most %d; the line counts count every line)",
			l.omitted, l.skipped, maxWarnings)
		l.omitted, l.skipped = 0, 0
	}
	return l.kept
}
