package traceparse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/weights"
)

// Parse reads a whole log from r. source names it in tasks and warnings. The error is a read error;
// problems with the content are warnings in the result.
func Parse(r io.Reader, source string) (*Result, error) {
	p := newParser(source, 0)
	buf := make([]byte, 0, 1<<20)
	for {
		if len(buf) == cap(buf) { // a line longer than the buffer
			buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		atEOF := errors.Is(err, io.EOF)
		if err != nil && !atEOF {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		used := p.feed(buf, atEOF)
		buf = buf[:copy(buf, buf[used:])]
		if atEOF {
			p.end(buf)
			return p.res, nil
		}
	}
}

// parser turns physical lines into entries, and entries into tasks.
type parser struct {
	source string
	res    *Result
	cls    classifier
	line   int   // number of the last line handled
	offset int64 // absolute offset of the next byte to be fed
	// openQuoteLine is the last line whose quotes did not balance, while the lines after it may
	// still be continuations of its value; 0 when there is none.
	openQuoteLine int

	cur       Task // the open task, when open
	open      bool
	epoch     int         // current epoch of the open task (from its epoch lines)
	groups    []lossGroup // Δloss state of the open task, per loop and epoch
	lastIter  int         // index in cur.Entries of its last iteration, -1 none
	lastClose int         // index in cur.Entries of its last close, -1 none
}

type lossGroup struct {
	loop  string
	epoch int
	prev  float64
	known bool
}

func newParser(source string, offset int64) *parser {
	return &parser{source: source, res: &Result{Tasks: []Task{}, Warnings: []Warning{}}, offset: offset}
}

// feed handles every complete line at the start of data and returns how many bytes it used. A line
// ends at "\n", "\r\n" or a lone "\r"; a "\r" as the last byte waits for more data unless atEOF.
func (p *parser) feed(data []byte, atEOF bool) int {
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
		p.handle(data[pos:end], true)
		p.offset += int64(next - pos)
		pos = next
	}
	return pos
}

// end handles the bytes after the last line end (an incomplete line) and closes the last task.
func (p *parser) end(rest []byte) {
	if len(rest) > 0 {
		p.handle(rest, false)
		p.offset += int64(len(rest))
	}
	p.finishTask()
}

func (p *parser) warn(line int, offset int64, reason string, skipped bool) {
	p.res.Warnings = append(p.res.Warnings, Warning{File: p.source, Line: line, Offset: offset, Reason: reason, Skipped: skipped})
}

// handle accounts for one physical line: it becomes an entry or is skipped with a reason.
func (p *parser) handle(raw []byte, terminated bool) {
	p.line++
	p.res.Lines.Read++
	lc := p.cls.classify(raw)
	if !terminated && lc.skip != skipBlank {
		lc.skip = skipIncomplete
	}
	if lc.skip != keep {
		p.res.Lines.Skipped++
		switch lc.skip {
		case skipBlank:
			p.res.Lines.Blank++
		case skipComment:
			p.res.Lines.Comment++
		default:
			p.warn(p.line, p.offset, p.skipReason(lc), true)
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
	e := lc.entry
	e.Line, e.Offset = p.line, p.offset
	for _, n := range lc.notes {
		p.warn(e.Line, e.Offset, n, false)
	}
	p.add(e, lc.epochSet)
}

func (p *parser) skipReason(lc lineClass) string {
	switch lc.skip {
	case skipNoTimestamp:
		if p.openQuoteLine > 0 {
			return fmt.Sprintf("continuation of line %d: a quoted value there holds a newline", p.openQuoteLine)
		}
		return "does not start with a timestamp (YYYY-MM-DD…): a continuation of a value that held a newline, or not a trace line"
	case skipNoLoop:
		return "a timestamp with no loop name"
	case skipEmptyMagic:
		return "magic prefix " + MagicPrefix + " with no entry after it"
	case skipIncomplete:
		return "incomplete last line (no line end): a write in progress or a cut file"
	}
	return "skipped"
}

// add attaches an entry to the task segmentation: a meta line opens a task; any other line joins
// the open task, or opens the legacy task when no meta line came before.
func (p *parser) add(e Entry, epochSet bool) {
	if e.Kind == KindMeta {
		p.finishTask()
		p.openTask(e, false)
	} else if !p.open {
		p.openTask(e, true)
	}
	t := &p.cur
	switch e.Kind {
	case KindEpoch:
		if epochSet {
			p.epoch = e.Epoch
		} else {
			e.Epoch = p.epoch
			p.warn(e.Line, e.Offset, "epoch line without epoch=N: the epoch is unchanged", false)
		}
	case KindIter:
		if !epochSet {
			e.Epoch = p.epoch
		}
		p.delta(&e)
		p.lastIter = len(t.Entries)
	case KindClose:
		t.Closed = true
		t.Terminal = e.Fields["terminal"]
		p.lastClose = len(t.Entries)
	}
	if e.Kind != KindMeta {
		t.Entries = append(t.Entries, e)
	}
	p.taskFields(e)
}

// taskFields takes the task-level fields that may sit on any of its lines.
func (p *parser) taskFields(e Entry) {
	t := &p.cur
	if v, ok := e.Fields["files"]; ok {
		for _, f := range strings.Split(v, ",") {
			if f = trimPy(f); f != "" {
				t.Files = append(t.Files, f)
			}
		}
	}
	if v, ok := e.Fields["regression_followed"]; ok {
		switch {
		case strings.EqualFold(v, "true"):
			t.RegressionFollowed = true
		case strings.EqualFold(v, "false"):
			t.RegressionFollowed = false
		default:
			p.warn(e.Line, e.Offset, fmt.Sprintf("regression_followed=%q is neither true nor false: ignored", v), false)
		}
	}
	if v := e.Fields["regression_of"]; v != "" {
		t.RegressionOf = v
	}
}

func (p *parser) openTask(e Entry, legacy bool) {
	p.cur = Task{Source: p.source, Line: e.Line, Offset: e.Offset, MetaTimestamp: e.Timestamp, Legacy: legacy}
	p.open, p.epoch, p.groups, p.lastIter, p.lastClose = true, 0, p.groups[:0], -1, -1
	t := &p.cur
	if ts, err := time.Parse(time.RFC3339Nano, e.Timestamp); err == nil {
		t.MetaTime = ts
	} else {
		p.warn(e.Line, e.Offset, fmt.Sprintf("timestamp %q is not RFC 3339: the task is left out of time windows", e.Timestamp), false)
	}
	if legacy {
		t.Title = LegacyTitle
		return
	}
	f := e.Fields
	t.Meta = e
	if lvl := f["level"]; validLevel(lvl) {
		t.Level = lvl
	}
	t.Dispatch = ShortDispatch(f["dispatch"])
	t.Creativity = f["creativity"]
	t.Title = f["task"]
	for _, l := range strings.Split(f["loops"], ",") {
		if l = trimPy(l); l != "" {
			t.Loops = append(t.Loops, l)
		}
	}
	if raw, ok := f["signals"]; ok {
		var problems []string
		t.HasSignals = true
		t.Signals, problems = ParseSignals(raw)
		for _, pr := range problems {
			p.warn(e.Line, e.Offset, pr, false)
		}
	}
	if v, ok := f["weights"]; ok {
		t.WeightsVersion = v
		if _, err := weights.ParseVersionName(v); err != nil {
			p.warn(e.Line, e.Offset, "weights="+err.Error(), false)
		}
	}
}

// delta recomputes Δloss within the task, loop and epoch (Decision 1.10.14). A baseline resets the
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
		d := math.Round((*e.Loss-g.prev)*1e6) / 1e6
		e.DeltaLoss = &d
	}
	g.prev, g.known = *e.Loss, true
}

// finishTask completes the open task and appends it to the result.
func (p *parser) finishTask() {
	if !p.open {
		return
	}
	t := &p.cur
	if p.lastClose >= 0 {
		if v, ok := t.Entries[p.lastClose].Fields["loss_final"]; ok {
			if f, ok := parseFinite(v); ok {
				t.LossFinal, t.LossFinalFrom = &f, "close"
			} else {
				c := t.Entries[p.lastClose]
				p.warn(c.Line, c.Offset, fmt.Sprintf("loss_final=%q is not a number: ignored", v), false)
			}
		}
	}
	if t.LossFinal == nil && p.lastIter >= 0 {
		if l := t.Entries[p.lastIter].Loss; l != nil {
			f := *l
			t.LossFinal, t.LossFinalFrom = &f, "iteration"
		}
	}
	t.LoopsUsed = []string{}
	for _, e := range t.Entries {
		if e.Kind == KindIter && !slices.Contains(t.LoopsUsed, e.Loop) {
			t.LoopsUsed = append(t.LoopsUsed, e.Loop)
		}
	}
	slices.Sort(t.Files)
	t.Files = slices.Compact(t.Files)
	if t.Files == nil {
		t.Files = []string{}
	}
	if t.Loops == nil {
		t.Loops = []string{}
	}
	if t.Entries == nil {
		t.Entries = []Entry{}
	}
	p.res.Tasks = append(p.res.Tasks, *t)
	p.cur, p.open = Task{}, false
}
