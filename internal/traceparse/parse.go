package traceparse

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/ldd-tools/tune/internal/redact"
)

// Parse reads a whole log from r. source names it in tasks and warnings. The error is a read error;
// problems with the content are warnings in the result.
func Parse(r io.Reader, source string, opts ...Option) (*Result, error) {
	p := newParser(source, 0, opts...)
	if err := p.read(r); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return p.result(), nil
}

// Stream reads a whole log from r and calls emit with each task as soon as it is complete (at the next
// meta line, or at the end), in file order, and warn (when not nil) with each warning as it is found.
// It keeps no reference to a task once emit returns, so its memory follows the tasks in flight, not the
// log (docs/decisions.md#streaming-reads). The tasks and warnings are those Parse returns, in the same
// order. An error from emit stops the read and is returned; the line counts then cover what was read.
func Stream(r io.Reader, source string, emit func(*Task) error, warn func(Warning), opts ...Option) (LineCounts, error) {
	return newParser(source, 0, opts...).stream(r, emit, warn)
}

func (p *parser) stream(r io.Reader, emit func(*Task) error, warn func(Warning)) (LineCounts, error) {
	source := p.source
	p.emit, p.emitWarn = emit, warn
	if warn == nil {
		p.emitWarn = func(Warning) {}
	}
	err := p.read(r)
	if err != nil {
		err = fmt.Errorf("%s: %w", source, err)
	} else {
		err = p.stopErr
	}
	return p.res.Lines, err
}

// parser turns physical lines into entries, and entries into tasks.
type parser struct {
	source string
	res    *Result
	cls    classifier
	lc     lineClass // the line being classified, on the sequential path
	line   int       // number of the last line handled
	offset int64     // absolute offset of the next byte to read
	start  int64     // absolute offset where the read started
	at     int64     // absolute offset of the line being accounted for
	size   int64     // bytes the read will cover when known (for sizing the task list), else 0
	// openQuoteLine is the last line whose quotes did not balance, while the lines after it may
	// still be continuations of its value; 0 when there is none.
	openQuoteLine int

	cur  Task // the open task, when open
	open bool
	// seq is the chunk the sequential read builds entries in; tasks slice it.
	seq []Entry
	// ownEntries says the open task's entries moved to a slice of their own (they crossed from one
	// array of entries to the next); otherwise they are a slice of the array they were built in.
	ownEntries bool
	// spareEntries is the array of the last emitted task's own entries, reused for the next task's
	// when the read is Transient (emit kept nothing of it); nil otherwise.
	spareEntries []Entry
	epoch        int         // current epoch of the open task (from its epoch lines)
	groups       []lossGroup // Δloss state of the open task, per loop and epoch
	// lastIterLoss is the loss of the open task's last iteration (hasIter: it has one); lastCloseLine
	// and lastCloseOffset locate its last close (hasClose). Kept by value, since the entries past the
	// task bound are not kept (docs/decisions.md#bounded-memory-per-task).
	lastIterLoss      *float64
	hasIter, hasClose bool
	lastCloseLine     int
	lastCloseOffset   int64
	// lastCloseLossFinal is the loss_final= of the last close, when it has one.
	lastCloseLossFinal    string
	lastCloseHasLossFinal bool
	files                 []string // files= of the open task, in order of appearance
	// pendingDepartures are departures noted before the first task opened.
	pendingDepartures []Departure
	loopsUsed         []string // scratch for finishTask
	bound             taskBound
	// pendingOmitted counts the departures past the bound before the first task opened;
	pendingOmitted int
	warns          WarningList // the result's warnings

	// emit, when set, receives each task as it completes instead of the result's task list
	// (Stream); emitWarn likewise receives each warning. stopErr is the first error emit returned:
	// the read stops at the next batch and emits nothing more.
	maxLine int // the line-length cap (MaxLineBytes)
	// transient: emit keeps nothing of a task (Transient). A parallel read then reuses batches:
	// batchSeq is the batch being accounted for, openSeq the one the open task opened in, and the
	// consumer's own store (Δloss, final losses, loops used, files) is reused from task to task. out
	// is the task handed to emit.
	transient         bool
	recycle           bool
	batchSeq, openSeq int64
	out               Task
	emit              func(*Task) error
	emitWarn          func(Warning)
	stopErr           error
	stopped           atomic.Bool
}

type lossGroup struct {
	loop  string
	epoch int
	prev  float64
	known bool
}

func newParser(source string, offset int64, opts ...Option) *parser {
	p := &parser{source: source, res: &Result{Tasks: []Task{}, Warnings: []Warning{}}, offset: offset, start: offset,
		maxLine: DefaultMaxLineBytes}
	// The default task bound is MaxTaskEntries(0, 0): one place says what a bound of 0 is, and the
	// tests that summarise tasks from a few lines set theirs the same way.
	MaxTaskEntries(0, 0)(p)
	for _, o := range opts {
		o(p)
	}
	return p
}

// splitLines calls fn with the bounds of every complete line at the start of data (line end
// excluded) and returns how many bytes it used. A line ends at "\n",
// "\r\n" or a lone "\r"; a "\r" as the last byte waits for more data unless atEOF.
func splitLines(data []byte, atEOF bool, fn func(start, end int)) int {
	pos, nl := 0, -1
	for pos < len(data) {
		if nl < pos {
			if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
				nl = pos + i
			} else {
				nl = len(data)
			}
		}
		end, next := nl, nl+1
		if cr := bytes.IndexByte(data[pos:nl], '\r'); cr >= 0 {
			end = pos + cr
			switch {
			case end+1 == nl && nl < len(data): // \r\n
				next = nl + 1
			case end+1 == len(data) && !atEOF: // \r, maybe of a \r\n cut by the buffer
				return pos
			default: // lone \r
				next = end + 1
			}
		} else if nl == len(data) {
			return pos
		}
		fn(pos, end)
		pos = next
	}
	return pos
}

func (p *parser) warn(line int, offset int64, reason string, skipped bool) {
	w := Warning{File: p.source, Line: line, Offset: offset, Reason: redact.String(reason), Skipped: skipped} // reasons quote values
	if p.emitWarn != nil {
		p.emitWarn(w)
		return
	}
	p.keepWarning(w)
}

// account takes one classified physical line, at offset: it becomes an entry or is skipped with a
// reason. Lines must come in file order. A kept line's entry is ents[i].
func (p *parser) account(lc *lineClass, terminated bool, offset int64, ents []Entry, i int) {
	p.line++
	p.at = offset
	p.res.Lines.Read++
	closes := false // an incomplete last line that would have been its task's close
	if !terminated && lc.skip != skipBlank {
		closes = lc.skip == keep && i < len(ents) && ents[i].Kind == KindClose
		lc.skip = skipIncomplete
	}
	if lc.skip != keep {
		p.res.Lines.Skipped++
		switch lc.skip {
		case skipBlank:
			p.res.Lines.Blank++
		case skipComment:
			p.res.Lines.Comment++
			if lc.bom { // with its BOM kept, the reference does not see the '#'
				p.depart(p.line, offset, "a comment after a BOM: the reference keeps the BOM, misses the '#' and reads the line as an entry of this task")
			}
		default:
			p.warn(p.line, offset, p.skipReason(lc.skip), true)
			if lc.skip != skipNoLoop { // the reference drops a line without a loop too
				reason := skippedDeparture(lc.skip)
				if closes && p.open {
					reason += " and closes the task with it"
					p.cur.CloseSkipped = true
				}
				p.depart(p.line, offset, reason)
			}
		}
		if lc.skip == skipNoTimestamp && lc.openQuote {
			p.openQuoteLine = 0 // this continuation closed the quote it continued
		}
		return
	}
	p.res.Lines.Parsed++
	if lc.openQuote {
		p.openQuoteLine = p.line
	} else {
		p.openQuoteLine = 0
	}
	e := &ents[i]
	e.Line, e.Offset = p.line, offset
	for _, n := range lc.notes {
		p.warn(e.Line, e.Offset, n, false)
	}
	if lc.openQuote && e.Kind == KindMeta && p.open {
		// Noted before add finishes (and, when streaming, emits) the task this meta line ends.
		p.depart(e.Line, e.Offset, "the next task's meta line: its quotes do not balance, so the reference drops it and reads that task's lines into this one")
	}
	p.add(lc, ents, i)
	p.departures(lc, e)
}

// skippedDeparture says how the reference reads a line skipped here (without line numbers, which
// differ between whole and tail reads).
func skippedDeparture(skip skipCode) string {
	switch skip {
	case skipNoTimestamp:
		return "skipped here (no timestamp: a continuation of a value that held a newline, or not a trace line); the reference reads its first word as a timestamp and the line into this task"
	case skipIncomplete:
		return "skipped here (incomplete last line, no line end); the reference reads it"
	case skipTooLong:
		return "skipped here (longer than the line-length cap); the reference reads it"
	}
	return "skipped here; the reference reads it into this task"
}

// depart notes on the open task (or, before the first task, on the next one) a way in which this
// reading of it departs from the reference reader's.
func (p *parser) depart(line int, offset int64, reason string) {
	d := Departure{Line: line, Offset: offset, Reason: reason}
	if p.open {
		if len(p.cur.Departures) >= maxTaskDepartures {
			p.omitted(line, offset).Departures++
			return
		}
		p.cur.Departures = append(p.cur.Departures, d)
		return
	}
	if len(p.pendingDepartures) >= maxTaskDepartures {
		p.pendingOmitted++
		return
	}
	p.pendingDepartures = append(p.pendingDepartures, d)
}

// departures notes the departures of the kept line e, which add has just attached.
func (p *parser) departures(lc *lineClass, e *Entry) {
	opens := e.Kind == KindMeta || (len(p.cur.Entries) == 1 && p.cur.Legacy)
	if lc.openQuote {
		p.depart(e.Line, e.Offset, "its quotes do not balance: kept here by a whitespace split, dropped by the reference")
	}
	if lc.bom && opens {
		p.depart(e.Line, e.Offset, "starts with a BOM: stripped here; the reference keeps it and then cannot read the task's timestamp")
	}
	if lc.magic {
		p.depart(e.Line, e.Offset, "read from after the "+MagicPrefix+" prefix; the reference reads the prefix as the timestamp")
	}
	if e.Kind == KindMeta && lc.head.levelFromChosen {
		p.depart(e.Line, e.Offset, "level from the v0.10.1 level_chosen=: the reference aggregator reads only the L<n>/<name> label")
	}
}

func (p *parser) skipReason(skip skipCode) string {
	switch skip {
	case skipNoTimestamp:
		if p.openQuoteLine > 0 {
			return fmt.Sprintf("continuation of line %d: a quoted value there holds a newline", p.openQuoteLine)
		}
		return "does not start with a timestamp (YYYY-MM-DD…): a continuation of a value that held a newline, or not a trace line"
	case skipNoLoop:
		return "a timestamp with no loop name"
	case skipEmptyMagic:
		return "magic prefix " + MagicPrefix + " with no entry after it"
	case skipTooLong:
		return fmt.Sprintf("line longer than %d MB, the line-length cap: not read (tune trace --max-line-mb raises it)", p.maxLine>>20)
	case skipIncomplete:
		return "incomplete last line (no line end): a write in progress or a cut file"
	}
	return "skipped"
}

// add attaches an entry to the task segmentation: a meta line opens a task; any other line joins
// the open task, or opens the legacy task when no meta line came before.
func (p *parser) add(lc *lineClass, ents []Entry, i int) {
	e := &ents[i]
	if e.Kind == KindMeta {
		p.finishTask()
		p.openTask(e, lc.head)
	} else if !p.open {
		p.openTask(e, nil)
	}
	t := &p.cur
	keep := e.Kind != KindMeta && p.keepEntry(lc, e)
	switch e.Kind {
	case KindEpoch:
		if lc.epochSet {
			p.epoch = e.Epoch
		} else {
			e.Epoch = p.epoch
			p.warn(e.Line, e.Offset, "epoch line without epoch=N: the epoch is unchanged", false)
		}
	case KindIter:
		if !lc.epochSet {
			e.Epoch = p.epoch
		}
		if keep { // Δloss is a field of a kept entry only
			p.delta(e)
		}
		p.lastIterLoss, p.hasIter = e.Loss, true
	case KindClose:
		t.Closed = true
		t.Terminal = redact.String(lc.task.terminal)
		p.lastCloseLine, p.lastCloseOffset, p.hasClose = e.Line, e.Offset, true
		p.lastCloseLossFinal, p.lastCloseHasLossFinal = lc.task.lossFinal, lc.task.hasLossFinal
	}
	switch {
	case keep:
		p.appendEntry(ents, i)
	case e.Kind == KindClose:
		p.keepLastClose(e)
	}
	if lc.task.any {
		p.taskFields(e, lc.task)
	}
}

// appendEntry adds ents[i] to the open task. Entries are built in place in large arrays (a chunk,
// or a batch's), and a task's entries are a slice of that array as long as they sit side by side
// there; a task that crosses from one array to the next moves to a slice of its own.
func (p *parser) appendEntry(ents []Entry, i int) {
	t := &p.cur
	n := len(t.Entries)
	switch {
	case n == 0:
		t.Entries, p.ownEntries = ents[i:i+1], false
	case p.ownEntries:
		t.Entries = append(t.Entries, ents[i])
	case n < cap(t.Entries) && &t.Entries[:n+1][n] == &ents[i]:
		t.Entries = t.Entries[:n+1]
	default:
		own := t.Entries[:n:n] // append copies it to an array of its own
		if p.spareEntries != nil {
			own = append(p.spareEntries[:0], t.Entries...)
		}
		t.Entries, p.ownEntries, p.spareEntries = append(own, ents[i]), true, nil
	}
}

// taskFields takes the task-level fields that may sit on any of its lines.
func (p *parser) taskFields(e *Entry, k *taskKeys) {
	t := &p.cur
	if k.hasFiles {
		for f := range strings.SplitSeq(k.files, ",") {
			if f = trimPy(f); f != "" {
				p.addFile(e, f)
			}
		}
	}
	if v := k.regressionFollowed; k.hasRegressionFollowed {
		switch {
		case strings.EqualFold(v, "true"):
			t.RegressionFollowed = true
		case strings.EqualFold(v, "false"):
			t.RegressionFollowed = false
		default:
			p.warn(e.Line, e.Offset, fmt.Sprintf("regression_followed=%q is neither true nor false: ignored", v), false)
		}
	}
	if v := k.regressionOf; v != "" {
		t.RegressionOf = redact.String(v)
	}
}

// openTask opens a task at e: a meta line with its head, or the first line of the legacy task.
func (p *parser) openTask(e *Entry, head *metaHead) {
	if p.recycle { // the tasks that pointed into it were emitted
		p.cls.entryMemory.reset()
	}
	p.openSeq = p.batchSeq
	p.cur = Task{Source: p.source, Line: e.Line, Offset: e.Offset, MetaTimestamp: e.Timestamp}
	clear(p.groups) // scratch reused from task to task: stale strings would pin old arena blocks
	p.open, p.epoch, p.groups, p.hasIter, p.hasClose, p.lastIterLoss = true, 0, p.groups[:0], false, false, nil
	p.lastCloseLossFinal, p.lastCloseHasLossFinal = "", false
	p.cur.Departures, p.pendingDepartures = p.pendingDepartures, nil
	p.resetBound(e)
	t := &p.cur
	if head == nil {
		var lc lineClass
		t.Legacy, t.Title, t.MetaTime = true, LegacyTitle, parseMetaTime(&lc, e.Timestamp)
		for _, n := range lc.notes {
			p.warn(e.Line, e.Offset, n, false)
		}
		return
	}
	t.Meta, t.MetaTime = *e, head.time
	// A title is redacted as it is read, so a pasted key never reaches a table, a JSON document, a
	// proposal or a state dump (docs/decisions.md#store-integrity-and-hostile-inputs-issue-18).
	// Every other string of the head too: any field may carry a pasted key (docs/decisions.md#hostile-files-issue-25).
	t.Level, t.Dispatch, t.Creativity, t.Title, t.WeightsVersion = redact.String(head.level), redact.String(head.dispatch), redact.String(head.creativity), redact.String(head.title), redact.String(head.weightsVersion)
	t.Loops, t.Signals, t.HasSignals = head.loops, head.signals, head.hasSignals
}

// delta recomputes Δloss within the task, loop and epoch (legacy deltas recomputed from losses,
// docs/decisions.md#trace-logs). A baseline resets the
// reference point; the first iteration of a group without one becomes the reference point.
func (p *parser) delta(e *Entry) {
	var g *lossGroup
	for i := range p.groups {
		if p.groups[i].loop == e.Loop && p.groups[i].epoch == e.Epoch {
			g = &p.groups[i]
			break
		}
	}
	if g == nil {
		p.groups = append(p.groups, lossGroup{loop: e.Loop, epoch: e.Epoch})
		g = &p.groups[len(p.groups)-1]
	}
	if e.Loss == nil {
		return
	}
	if !e.Baseline && g.known {
		e.DeltaLoss = p.cls.floats.new(math.Round((*e.Loss-g.prev)*1e6) / 1e6)
	}
	g.prev, g.known = *e.Loss, true
}

// finishTask completes the open task and appends it to the result.
func (p *parser) finishTask() {
	if !p.open {
		return
	}
	t := &p.cur
	if v, ok := t.Meta.Fields.Get("explore"); ok { // the meta line's own fields: three lookups a task at most
		t.Explore = redact.String(strings.Clone(v))
		t.ExploreLevel = redact.String(strings.Clone(t.Meta.Fields.Value("explore_level")))
		t.ExploreShare = redact.String(strings.Clone(t.Meta.Fields.Value("explore_share")))
	}
	if p.hasClose {
		if v, ok := p.lastCloseLossFinal, p.lastCloseHasLossFinal; ok {
			if f, ok := parseFinite(v); ok {
				t.LossFinal, t.LossFinalFrom = p.cls.floats.new(f), "close"
			} else {
				p.warn(p.lastCloseLine, p.lastCloseOffset, fmt.Sprintf("loss_final=%q is not a number: ignored", v), false)
			}
		}
	}
	if t.LossFinal == nil && p.hasIter {
		if l := p.lastIterLoss; l != nil {
			t.LossFinal, t.LossFinalFrom = p.cls.floats.new(*l), "iteration"
		}
	}
	clear(p.loopsUsed)
	p.loopsUsed = p.loopsUsed[:0]
	for i := range t.Entries {
		if e := &t.Entries[i]; e.Kind == KindIter && !slices.Contains(p.loopsUsed, e.Loop) {
			p.loopsUsed = append(p.loopsUsed, e.Loop)
		}
	}
	p.loopsUsed = p.appendOmittedLoops(p.loopsUsed)
	// Empty lists stay non-nil so that JSON shows [] rather than null.
	if t.LoopsUsed = p.cls.strs.clone(p.loopsUsed); t.LoopsUsed == nil {
		t.LoopsUsed = []string{}
	}
	slices.Sort(p.files)
	if t.Files = p.cls.strs.clone(slices.Compact(p.files)); t.Files == nil {
		t.Files = []string{}
	}
	for i, f := range t.Files {
		t.Files[i] = redact.String(f) // files= is free text too (docs/decisions.md#hostile-files-issue-25)
	}
	clear(p.files)
	p.files = p.files[:0]
	if t.Loops == nil {
		t.Loops = []string{}
	}
	var spare []Entry
	if p.recycle && p.ownEntries { // emitted below and not kept: its array serves the next task
		spare = t.Entries
	}
	// Clipped, so that appending to one task's entries cannot overwrite the next task's.
	if t.Entries = t.Entries[:len(t.Entries):len(t.Entries)]; t.Entries == nil {
		t.Entries = []Entry{}
	}
	if p.emit != nil {
		if p.stopErr == nil {
			task := &p.out
			if !p.transient {
				task = new(Task)
			}
			*task = *t
			if err := p.emit(task); err != nil {
				p.stopErr = err
				p.stopped.Store(true)
			}
		}
		if spare != nil {
			// Cleared as far as this task filled it (the rest is still zero): its strings would pin
			// arena blocks.
			clear(spare)
			p.spareEntries = spare[:0]
		}
		p.cur, p.open = Task{}, false
		return
	}
	p.growTasks()
	p.res.Tasks = append(p.res.Tasks, *t)
	p.cur, p.open = Task{}, false
}

// growTasks makes room for one more task. Tasks are the largest values of a result, and each copy
// of them costs write barriers while the GC runs, so when the input's size is known the slice grows
// once to the estimated final count, from the bytes per task in the first eighth of the input;
// before that, and when the estimate falls short, it doubles.
func (p *parser) growTasks() {
	ts := p.res.Tasks
	if len(ts) < cap(ts) {
		return
	}
	n := max(2*cap(ts), 16)
	if read := p.at - p.start; p.size > 0 && read > 0 && read >= p.size/8 {
		n = max(n, int(float64(len(ts)+1)*float64(p.size)/float64(read)*1.1)+16)
	}
	grown := make([]Task, len(ts), n)
	copy(grown, ts)
	p.res.Tasks = grown
}

// result returns the result, its task list trimmed when the estimate was well above the count.
func (p *parser) result() *Result {
	p.res.Warnings = p.warns.List()
	if ts := p.res.Tasks; cap(ts) > len(ts)+len(ts)/4+16 {
		p.res.Tasks = slices.Clone(ts)
	}
	return p.res
}
