package traceparse

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync"

	"github.com/ldd-tools/tune/internal/regular"
)

// batchSize is how much of a log one batch holds. Classifying a line (tokens, its text, its fields
// and entry) is most of the work and depends on the line alone, so batches of lines are classified
// on all CPUs while the task segmentation, which must see lines in order, consumes them. 256 KB
// rather than more: the batches in flight (each with ~300 bytes of verdict per line) are allocated
// per parse, and 1 MB batches made them a sixth of a parse's memory.
const batchSize = 256 << 10

// batch is a run of complete lines with their classification.
type batch struct {
	data    []byte // owned: the lines' bytes
	lines   []lineSpan
	offset  int64 // absolute offset of data[0]
	classes []lineClass
	// entries are the entries of its kept lines, built in place by the worker; tasks slice them, so
	// each batch gets a new array.
	entries []Entry
	done    chan struct{} // closed when classes and entries are filled
}

type lineSpan struct {
	start, end int
	terminated bool
	// tooLong marks a line longer than the cap, skipped without being held: it has no bytes in the
	// batch, and abs is the absolute offset where it started.
	tooLong bool
	abs     int64
}

// DefaultMaxLineBytes is the default line-length cap of a streamed read: far beyond any line a trace
// writer produces, low enough that a log of garbage (a device, a file without line ends) cannot make
// a read hold gigabytes (docs/decisions.md#line-length-cap).
const DefaultMaxLineBytes = 64 << 20

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
	if _, ok := r.(interface{ Len() int }); ok && p.size <= batchSize {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		return p.readBytes(data)
	}
	workers := runtime.GOMAXPROCS(0)
	var err error
	if workers == 1 {
		err = p.readSequential(r)
	} else {
		err = p.readParallel(r, workers)
	}
	p.finishTask()
	return err
}

// readBytes parses data already in memory: in place when it is one batch or less (a tail read, a
// small log), where goroutines and batch buffers would cost more than they save.
func (p *parser) readBytes(data []byte) error {
	p.size = int64(len(data))
	if len(data) > batchSize && runtime.GOMAXPROCS(0) > 1 {
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

// nextBuffer returns a buffer that starts with carry and has room for at least batchSize more
// bytes, reusing old when it is big enough (carry may lie inside old: append copies like memmove).
func nextBuffer(old, carry []byte) []byte {
	need := len(carry) + batchSize
	if cap(old) < need {
		old = make([]byte, 0, max(need, 2*len(carry)))
	}
	return append(old[:0], carry...)
}

func (p *parser) readSequential(r io.Reader) error {
	var buf []byte
	var used int
	skipFrom := int64(-1) // where a line over the cap started, while its bytes are skipped
	for {
		buf = nextBuffer(buf, buf[used:])
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
// goroutine accounts for their lines in order. Buffers go back to the reader once consumed.
func (p *parser) readParallel(r io.Reader, workers int) error {
	// One batch queued per worker, and as many spare: twice that held a tenth more memory (peak RSS
	// 55-59 MB against 47-49 MB streaming a 256 MB log) for no measurable speed
	// (docs/decisions.md#streaming-reads).
	work := make(chan *batch, workers)
	ordered := make(chan *batch, workers)
	free := make(chan *batch, workers+2)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var cls classifier
			for b := range work {
				b.entries = make([]Entry, 0, len(b.lines))
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
				close(b.done)
			}
		})
	}
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for b := range ordered {
			<-b.done
			for i, l := range b.lines {
				off := b.offset + int64(l.start)
				if l.tooLong {
					off = l.abs
				}
				p.account(&b.classes[i], l.terminated, off, b.entries, b.classes[i].entry)
			}
			// The entries are the result's now. The classes hold strings into the arena blocks of
			// their lines: cleared, so that a spare batch does not keep old blocks alive
			// (docs/decisions.md#streaming-reads).
			b.entries = nil
			clear(b.classes[:cap(b.classes)])
			select {
			case free <- b:
			default: // enough spare batches already
			}
		}
	}()

	var carry []byte
	var err error
	skipFrom := int64(-1) // where a line over the cap started, while its bytes are skipped
	for atEOF := false; !atEOF && err == nil && !p.stopped.Load(); {
		var b *batch
		select {
		case b = <-free:
		default:
			b = &batch{}
		}
		b.data = nextBuffer(b.data, carry)
		if b.data, atEOF, err = fill(r, b.data); err != nil {
			break
		}
		b.lines, b.offset, b.done = b.lines[:0], p.offset, make(chan struct{})
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
			carry = append([]byte(nil), b.data[used:]...)
		}
		if cap(b.classes) < len(b.lines) {
			b.classes = make([]lineClass, len(b.lines))
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
