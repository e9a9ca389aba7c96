package traceparse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/ldd-tools/tune/internal/regular"
)

// batchSize is how much of a log one batch holds. Classifying a line (tokens, its text, its fields
// and entry) is most of the work and depends on the line alone, so batches of lines are classified
// on all CPUs while the task segmentation, which must see lines in order, consumes them. A read has a
// fixed set of batches, each a dozen times its bytes in memory (bytes, verdicts, entries, text), and
// every page of them is a page fault the first time, which costs several µs on a VM: 64 KB batches
// took a fifth less CPU than 256 KB ones on an 8 MB log, and 32 KB ones with two fewer spares about
// a seventh less again (docs/decisions.md#streaming-reads).
const batchSize = 32 << 10

// inPlaceBytes is the most a read holds in memory and parses in place (a tail read, a small log),
// where goroutines and batches would cost more than they save.
const inPlaceBytes = 256 << 10

// batch is a run of complete lines with their classification.
type batch struct {
	seq     int64  // its place in the read, from 0
	buf     []byte // owned: data and room to read more
	data    []byte // the lines' bytes: the start of buf
	lines   []lineSpan
	offset  int64 // absolute offset of data[0]
	classes []lineClass
	// entries are the entries of its kept lines, built in place by the worker; tasks slice them, so
	// each batch gets a new array unless the read is Transient.
	entries []Entry
	mem     entryMemory   // the text and small values of its entries
	done    chan struct{} // receives once classes and entries are filled
}

type lineSpan struct {
	start, end int
	terminated bool
	// tooLong marks a line longer than the cap, skipped without being held: it has no bytes in the
	// batch, and abs is the absolute offset where it started.
	tooLong bool
	abs     int64
}

// DefaultMaxLineBytes is the default line-length cap of a streamed read: 1 MiB, four thousand times
// the longest line of the 25 real logs (267 bytes), low enough that a line a pull request appends (a
// device, a file without line ends, 100 MB of one line) costs a read a few megabytes: a line up to the
// cap is carried from batch to batch, in every batch buffer in flight (docs/decisions.md#line-length-cap).
const DefaultMaxLineBytes = 1 << 20

// Option configures a read.
type Option func(*parser)

// MaxLineBytes sets the line-length cap (n <= 0: the default; at most 1 GiB). A longer line is
// skipped while it is read, without being held, and reported as a skipped line.
func MaxLineBytes(n int) Option {
	return func(p *parser) {
		if n <= 0 {
			n = DefaultMaxLineBytes
		}
		p.maxLine = min(n, maxLineBytes)
	}
}

// Transient says that emit keeps nothing of a task once it returns: not the Task, nor a slice or a
// string of it (an encoder that writes the task out at once). A parallel read then hands a batch's
// memory (its bytes, entries, text arena and slabs) to a later batch as soon as no open task points into
// it, instead of leaving every batch to the garbage collector: the heap of a stream stays a few batches
// big, and the process pays for far fewer fresh pages (docs/decisions.md#streaming-reads). It has no
// effect on Parse.
func Transient() Option {
	return func(p *parser) { p.transient = true }
}

// firstLineEnd returns where the line after the first line end of data starts, and whether data has a
// line end (a "\r" as its last byte counts as one: a "\n" after it then reads as a blank line).
func firstLineEnd(data []byte) (int, bool) {
	for i, c := range data {
		if c == '\n' {
			return i + 1, true
		}
		if c == '\r' {
			if i+1 < len(data) && data[i+1] == '\n' {
				return i + 2, true
			}
			return i + 1, true
		}
	}
	return len(data), false
}

// accountTooLong accounts for a line over the cap that started at abs.
func (p *parser) accountTooLong(abs int64, terminated bool) {
	lc := lineClass{skip: skipTooLong}
	p.account(&lc, terminated, abs, nil, 0)
}

// read parses everything r yields into p, then closes the last task.
func (p *parser) read(r io.Reader) error {
	switch sized := r.(type) {
	case interface{ Len() int }: // bytes or strings.Reader: what is left to read
		p.size = int64(sized.Len())
	case interface{ Size() int64 }: // io.SectionReader
		p.size = sized.Size()
	}
	if _, ok := r.(interface{ Len() int }); ok && p.size <= inPlaceBytes {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		return p.readBytes(data)
	}
	// At most maxWorkers classify: each worker has two batches in flight, and each batch may carry a
	// line up to the cap, so memory grows with the workers (a log of lines just under 1 MB took 386 MB
	// at GOMAXPROCS=64 against 46 MB at 2, the tenth review; capped at eight, 131 MB at 64 and 140 MB
	// at 8, 71 MB at 2 on the same run). Eight, not two: the speed past two workers could not be
	// measured on the 2-core machine this was built on.
	workers := min(runtime.GOMAXPROCS(0), maxWorkers)
	var err error
	if workers == 1 {
		err = p.readSequential(r)
	} else {
		err = p.readParallel(r, workers)
	}
	p.finishTask()
	return err
}

// readBytes parses data already in memory: in place when it is inPlaceBytes or less.
func (p *parser) readBytes(data []byte) error {
	p.size = int64(len(data))
	if len(data) > inPlaceBytes && runtime.GOMAXPROCS(0) > 1 {
		return p.read(bytes.NewReader(data))
	}
	p.feedSequential(data, true)
	p.finishTask()
	return nil
}

// fill reads from r until buf is full or r ends; it reports whether r ended.
func fill(r io.Reader, buf []byte) ([]byte, bool, error) {
	for len(buf) < cap(buf) {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, true, nil
		}
		if err != nil {
			return buf, false, err
		}
	}
	return buf, false, nil
}

// maxWorkers bounds the classifying goroutines of a parallel read (see read).
const maxWorkers = 8

// readSize is how many bytes a batch reads after carry: batchSize, or as many as carry holds when a
// line is longer than a batch, so that a long line is copied from batch to batch a logarithmic number
// of times, not once per batchSize bytes of it.
func readSize(carry []byte) int { return max(batchSize, len(carry)) }

// nextBuffer returns a buffer that starts with carry and has room for at least readSize(carry) more
// bytes (a new one has room for slack more), reusing old when it is big enough (carry may lie inside
// old: append copies like memmove).
func nextBuffer(old, carry []byte, slack int) []byte {
	need := len(carry) + readSize(carry)
	// A buffer grown for a long line is let go once the line is behind: the read's batches would keep
	// it for the rest of the log otherwise.
	if cap(old) < need || cap(old) > max(8*batchSize, 4*(need+slack)) {
		old = make([]byte, 0, max(need+slack, 2*len(carry)))
	}
	return append(old[:0], carry...)
}

func (p *parser) readSequential(r io.Reader) error {
	var buf []byte
	var used int
	skipFrom := int64(-1) // where a line over the cap started, while its bytes are skipped
	for {
		buf = nextBuffer(buf, buf[used:], 0)
		var atEOF bool
		var err error
		if buf, atEOF, err = fill(r, buf); err != nil {
			return err
		}
		start := 0
		if skipFrom >= 0 {
			var found bool
			if start, found = firstLineEnd(buf); found || atEOF {
				p.accountTooLong(skipFrom, found)
				skipFrom = -1
			}
			p.offset += int64(start)
		}
		if used = start + p.feedSequential(buf[start:], atEOF); atEOF || p.stopped.Load() {
			return nil
		}
		if rest := len(buf) - used; rest > p.maxLine {
			skipFrom, p.offset, used = p.offset, p.offset+int64(rest), len(buf)
		}
	}
}

// feedSequential classifies and accounts for the complete lines of buf (and at EOF the incomplete
// one after them), and returns how many bytes it used.
func (p *parser) feedSequential(buf []byte, atEOF bool) int {
	base := p.offset
	line := func(start, end int, terminated bool) {
		// The entry is built in the next free place of the chunk, which it keeps when the line is
		// kept and is not a meta line (the task copies that into Task.Meta).
		if len(p.seq) == cap(p.seq) {
			p.seq = make([]Entry, 0, min(max(2*cap(p.seq), 64), 4096)) // small logs, small chunks
		}
		n := len(p.seq)
		p.seq = p.seq[:n+1]
		if end-start > p.maxLine {
			p.lc, p.seq = lineClass{skip: skipTooLong}, p.seq[:n]
		} else if p.cls.classify(buf[start:end], &p.lc, &p.seq[n]); p.lc.skip != keep {
			p.seq = p.seq[:n]
		}
		p.account(&p.lc, terminated, base+int64(start), p.seq, n)
		if len(p.seq) > n && p.seq[n].Kind == KindMeta {
			p.seq[n], p.seq = Entry{}, p.seq[:n]
		}
	}
	used := splitLines(buf, atEOF, func(start, end int) { line(start, end, true) })
	if atEOF && used < len(buf) {
		line(used, len(buf), false)
		used = len(buf)
	}
	p.offset += int64(used)
	return used
}

// readParallel: this goroutine reads and cuts batches, workers classify them, and a consumer
// goroutine accounts for their lines in order. A read has a fixed number of batches, passed round as
// tokens on free: a batch to fill again, or nil for one to make.
func (p *parser) readParallel(r io.Reader, workers int) error {
	// One batch queued per worker: twice that held a tenth more memory (peak RSS 55-59 MB against
	// 47-49 MB streaming a 256 MB log) for no measurable speed. Past the batches in flight (the one
	// being read, those queued, the one being consumed), the two spare ones are those a Transient read
	// holds for its open task and those ready to be filled again: four spares faulted in a fifth more
	// pages (1,336 against 1,099 per 8 MB run) for no speed, and with one a task over two batches goes
	// to the GC (docs/decisions.md#streaming-reads).
	if p.transient && p.emit != nil { // a Parse keeps its tasks whatever the options
		p.recycle = true
		p.cls.entryMemory.recycling()
	}
	batches := 2*workers + 2
	maxHeld := batches - workers - 2
	work := make(chan *batch, workers)
	ordered := make(chan *batch, workers)
	free := make(chan *batch, batches)
	for range batches {
		free <- nil
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var cls classifier
			for b := range work {
				if cap(b.entries) < len(b.lines) {
					b.entries = make([]Entry, 0, withRoom(len(b.lines)))
				}
				cls.entryMemory = b.mem
				for i, l := range b.lines {
					n := len(b.entries)
					lc := &b.classes[i]
					if l.tooLong || l.end-l.start > p.maxLine {
						*lc = lineClass{skip: skipTooLong}
						continue
					}
					if cls.classify(b.data[l.start:l.end], lc, &b.entries[:n+1][n]); lc.skip == keep {
						lc.entry, b.entries = n, b.entries[:n+1]
					}
				}
				b.mem, cls.entryMemory = cls.entryMemory, entryMemory{}
				b.done <- struct{}{}
			}
		})
	}
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		// held are the consumed batches the open task may still point into (Transient reads): the
		// batch it opened in and every one after it, at most maxHeld.
		var held []*batch
		for b := range ordered {
			<-b.done
			p.batchSeq = b.seq
			for i, l := range b.lines {
				off := b.offset + int64(l.start)
				if l.tooLong {
					off = l.abs
				}
				p.account(&b.classes[i], l.terminated, off, b.entries, b.classes[i].entry)
			}
			// The classes hold strings into the arena of their lines: cleared, so that a spare batch
			// does not keep old arenas alive (docs/decisions.md#streaming-reads).
			clear(b.classes[:cap(b.classes)])
			if !p.recycle { // the entries and their memory are the result's now
				b.entries, b.mem = nil, entryMemory{}
				b.mem.sizeFor(batchSize)
				free <- b
				continue
			}
			held = append(held, b)
			firstHeld := b.seq + 1 // no task open: none of them
			if p.open {
				firstHeld = p.openSeq
			}
			n := 0
			for ; n < len(held) && (held[n].seq < firstHeld || len(held)-n > maxHeld); n++ {
				h := held[n]
				if h.seq >= firstHeld { // a huge open task: left to the GC, which frees it with the task
					free <- nil
					continue
				}
				// Nothing points into it any more: filled again.
				clear(h.entries[:min(len(h.entries)+1, cap(h.entries))])
				h.entries = h.entries[:0]
				h.mem.reset()
				free <- h
			}
			held = append(held[:0], held[n:]...)
		}
	}()

	var carry []byte
	var err error
	var seq int64
	skipFrom := int64(-1) // where a line over the cap started, while its bytes are skipped
	for atEOF := false; !atEOF && err == nil && !p.stopped.Load(); {
		b := <-free
		if b == nil {
			b = &batch{done: make(chan struct{}, 1)}
			b.mem.sizeFor(batchSize)
			if p.recycle {
				b.mem.recycling()
			}
		}
		// carry lies in the previous batch's bytes, past its lines: no worker reads them, and the
		// previous batch can be back here only after it was consumed (append copies like memmove).
		// The buffer keeps room for the carries of later batches, so that a reused batch need not
		// grow it: the bytes past what a batch reads are never touched (nor faulted in).
		b.buf = nextBuffer(b.buf, carry, batchSize+batchSize/2)
		b.data = b.buf[: len(carry) : len(carry)+readSize(carry)]
		if b.data, atEOF, err = fill(r, b.data); err != nil {
			break
		}
		b.lines, b.offset, b.seq = b.lines[:0], p.offset, seq
		seq++
		start := 0
		if skipFrom >= 0 {
			var found bool
			if start, found = firstLineEnd(b.data); found || atEOF {
				b.lines = append(b.lines, lineSpan{terminated: found, tooLong: true, abs: skipFrom})
				skipFrom = -1
			}
		}
		used := start + splitLines(b.data[start:], atEOF, func(s, e int) {
			b.lines = append(b.lines, lineSpan{start: start + s, end: start + e, terminated: true})
		})
		if atEOF && used < len(b.data) {
			b.lines = append(b.lines, lineSpan{start: used, end: len(b.data)})
			used = len(b.data)
		}
		p.offset += int64(used)
		// The bytes after the last line end are copied into the next batch's buffer, since this
		// one is shared with a worker from now on; past the cap they are dropped instead, and so
		// are the line's bytes up to its end.
		if rest := len(b.data) - used; rest > p.maxLine {
			skipFrom, p.offset, carry = p.offset, p.offset+int64(rest), nil
		} else {
			carry = b.data[used:]
		}
		if cap(b.classes) < len(b.lines) {
			b.classes = make([]lineClass, len(b.lines), withRoom(len(b.lines)))
		}
		b.classes = b.classes[:len(b.lines)]
		work <- b
		ordered <- b
	}
	close(work)
	close(ordered)
	wg.Wait()
	<-consumed
	return err
}

// withRoom is the capacity given to a batch's per-line arrays for n lines: a quarter more, since the
// next fill of a reused batch may hold a few more lines, and each growth is a new array to fault in.
func withRoom(n int) int { return n + n/4 }

// StreamLog streams the log at path (see Stream): the bytes present when it is opened, so that a line
// a writer is still appending reads as an incomplete last line, as in ReadLast. Only a regular file is
// read: a FIFO, device or socket is refused by name (regular.Open), so no caller hangs on one.
func StreamLog(path string, emit func(*Task) error, warn func(Warning), opts ...Option) (LineCounts, error) {
	f, err := regular.Open(path)
	if err != nil {
		return LineCounts{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return LineCounts{}, err
	}
	return Stream(io.NewSectionReader(f, 0, fi.Size()), path, emit, warn, opts...)
}

// StreamLogFrom streams the log at path from byte offset on, as StreamLog does, numbering lines from
// line (the number of the line that starts at offset), up to end (end <= 0: the size when opened, as
// StreamLog); it returns where the read ended. offset must start a line that a read from the start would begin a task with (a meta
// line): the tasks and warnings are then those of a read from the start that come from offset on
// (docs/decisions.md#nightly-state). The caller checks that the bytes before offset are those it read.
func StreamLogFrom(path string, offset, end int64, line int, emit func(*Task) error, warn func(Warning), opts ...Option) (LineCounts, int64, error) {
	f, err := regular.Open(path)
	if err != nil {
		return LineCounts{}, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return LineCounts{}, 0, err
	}
	size := fi.Size()
	if end > 0 && end <= size {
		size = end
	} else if end > 0 {
		return LineCounts{}, size, fmt.Errorf("%s: %w", path, shrank(nil))
	}
	if offset < 0 || offset > size || line < 1 {
		return LineCounts{}, size, fmt.Errorf("%s: %w", path, shrank(nil))
	}
	p := newParser(path, offset, opts...)
	p.line = line - 1
	lines, err := p.stream(io.NewSectionReader(f, offset, size-offset), emit, warn)
	return lines, size, err
}
