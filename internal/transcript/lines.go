package transcript

import (
	"bytes"
	"errors"
	"io"
)

// DefaultMaxLineBytes is the default cap on one physical line (LineReader.MaxLine, Options.MaxLineBytes):
// generous for base64 images and large tool results, small enough that a hostile file cannot make the
// reader hold gigabytes (docs/decisions.md#store-integrity-and-hostile-inputs-issue-18).
const DefaultMaxLineBytes = 64 << 20

// maxRecordBytes bounds a pretty-printed record reassembled from several lines, so that a file whose
// first line opens an object that never closes cannot make the reader hold the whole file.
const maxRecordBytes = 64 << 20

// LineReader splits a JSONL transcript into records: normally one per line, or one per pretty-printed
// object spread over several lines. It never fails on content: lines that are not objects, and objects
// cut off by the end of the file or by the next record, are counted by reason (OnSkip) and skipped.
//
// bufio.Scanner is not used because its token limit must be fixed in advance and transcript lines have
// no upper bound (base64 images, large tool results); this reader grows its buffer to the longest line
// instead, and reuses it across files (Reset).
type LineReader struct {
	// NoMultiLine makes every line a record on its own, as ccusage reads files: a line that opens an
	// object without closing it is counted as truncated.
	NoMultiLine bool
	// OnSkip is told about every skipped line or partial record: its first line, its number of physical
	// lines, and the reason (ReasonNotObject, ReasonTruncated, ReasonMalformed, ReasonTooLong).
	OnSkip func(line, lines int, reason string)
	// MaxLine caps a physical line's length (0: DefaultMaxLineBytes); a longer line is discarded while it
	// is read and skipped as ReasonTooLong.
	MaxLine int

	r     io.Reader
	buf   []byte
	start int // first unread byte in buf
	end   int // end of the data in buf
	eof   bool
	err   error
	line  int // physical lines consumed
	// discarding: the current line passed MaxLine; its bytes are dropped up to its newline.
	discarding bool
	tooLong    bool // the line readLine just returned was discarded

	counts LineCounts

	// A pretty-printed record being reassembled.
	pending     []byte
	pendingLine int // its first line
	pendingN    int // its physical lines
	depth       depthState
}

// NewLineReader returns a reader of r with an initial buffer of size bytes (it grows as needed).
func NewLineReader(r io.Reader, size int) *LineReader {
	if size < 4096 {
		size = 4096
	}
	return &LineReader{r: r, buf: make([]byte, size)}
}

// Reset starts reading r, keeping the buffer and the options.
func (lr *LineReader) Reset(r io.Reader) {
	*lr = LineReader{NoMultiLine: lr.NoMultiLine, OnSkip: lr.OnSkip, MaxLine: lr.MaxLine, r: r, buf: lr.buf, pending: lr.pending[:0]}
}

// Counts returns the line counts so far. Records are counted when returned by Next; UsageLines and
// Skipped of records are the caller's to add.
func (lr *LineReader) Counts() LineCounts { return lr.counts }

// Err returns the first read error other than io.EOF.
func (lr *LineReader) Err() error { return lr.err }

// Next returns the next record and the number of its first line. The bytes are valid until the next
// call. ok is false at the end of the input or on a read error (see Err).
func (lr *LineReader) Next() (record []byte, line int, ok bool) {
	for {
		raw, n, got := lr.readLine()
		if !got {
			if lr.pending != nil && lr.pendingN > 0 {
				lr.skip(lr.pendingLine, lr.pendingN, ReasonTruncated)
				lr.clearPending()
			}
			return nil, 0, false
		}
		if lr.tooLong {
			if lr.pendingN > 0 {
				lr.skip(lr.pendingLine, lr.pendingN, ReasonTruncated)
				lr.clearPending()
			}
			lr.skip(n, 1, ReasonTooLong)
			continue
		}
		trimmed := bytes.TrimSpace(raw)
		if lr.pendingN > 0 {
			if len(raw) > 0 && raw[0] == '{' {
				// A record starting in column 0 ends the one being reassembled: that one was cut off.
				lr.skip(lr.pendingLine, lr.pendingN, ReasonTruncated)
				lr.clearPending()
			} else {
				rec, done := lr.continuePending(raw, trimmed)
				if done && rec != nil {
					return rec, lr.pendingLine, true
				}
				continue
			}
		}
		if len(trimmed) == 0 {
			lr.counts.Blank++
			continue
		}
		if trimmed[0] != '{' {
			lr.skip(n, 1, ReasonNotObject)
			continue
		}
		if trimmed[len(trimmed)-1] == '}' {
			// The common case. Whether the object is valid is decided by the decoder, and only for the
			// records whose content matters (those with usage or a turn duration).
			lr.counts.Records++
			return trimmed, n, true
		}
		if lr.NoMultiLine {
			lr.skip(n, 1, ReasonTruncated)
			continue
		}
		lr.depth = depthState{}
		end := lr.depth.feed(trimmed)
		switch {
		case lr.depth.bad || end >= 0:
			// Closed before the end of the line with something after it, or unbalanced.
			lr.skip(n, 1, ReasonMalformed)
		case lr.depth.inString:
			// Cut off inside a string: pretty-printed JSON never breaks a line there.
			lr.skip(n, 1, ReasonTruncated)
		default:
			lr.pending = append(lr.pending[:0], trimmed...)
			lr.pendingLine, lr.pendingN = n, 1
		}
	}
}

// continuePending adds one physical line to the record being reassembled. It returns the record when
// the object closes on this line.
func (lr *LineReader) continuePending(raw, trimmed []byte) (record []byte, done bool) {
	lr.pendingN++
	end := lr.depth.feed(raw)
	lr.pending = append(lr.pending, '\n')
	switch {
	case lr.depth.bad || (end >= 0 && len(bytes.TrimSpace(raw[end:])) > 0):
		lr.skip(lr.pendingLine, lr.pendingN, ReasonMalformed)
		lr.clearPending()
		return nil, true
	case end >= 0:
		lr.pending = append(lr.pending, raw[:end]...)
		lr.counts.Records++
		lr.counts.MultiLine++
		lr.counts.MultiLineLines += lr.pendingN
		rec := lr.pending
		lr.pendingN = 0
		return rec, true
	case lr.depth.inString:
		lr.skip(lr.pendingLine, lr.pendingN, ReasonTruncated)
		lr.clearPending()
		return nil, true
	case len(lr.pending)+len(trimmed) > maxRecordBytes:
		lr.skip(lr.pendingLine, lr.pendingN, ReasonMalformed)
		lr.clearPending()
		return nil, true
	}
	lr.pending = append(lr.pending, raw...)
	return nil, false
}

func (lr *LineReader) clearPending() {
	lr.pending = lr.pending[:0]
	lr.pendingN = 0
}

func (lr *LineReader) skip(line, lines int, reason string) {
	lr.counts.Skipped++
	if lr.OnSkip != nil {
		lr.OnSkip(line, lines, reason)
	}
}

// readLine returns the next physical line without its line ending, and its number.
func (lr *LineReader) readLine() ([]byte, int, bool) {
	scanned := lr.start
	max := lr.MaxLine
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	for {
		if i := bytes.IndexByte(lr.buf[scanned:lr.end], '\n'); i >= 0 {
			stop := scanned + i
			line := lr.buf[lr.start:stop]
			lr.start = stop + 1
			lr.line++
			lr.counts.Lines++
			lr.tooLong, lr.discarding = lr.discarding || len(line) > max, false
			return trimCR(line), lr.line, true
		}
		if lr.eof {
			if lr.start < lr.end || lr.discarding {
				line := lr.buf[lr.start:lr.end]
				lr.start = lr.end
				lr.line++
				lr.counts.Lines++
				lr.tooLong, lr.discarding = lr.discarding || len(line) > max, false
				return trimCR(line), lr.line, true
			}
			return nil, 0, false
		}
		if lr.end-lr.start >= max {
			// Past the cap without a newline: drop what was read of this line and keep reading to its end.
			lr.discarding = true
			lr.start, lr.end = 0, 0
		}
		// Need more data: keep the partial line, growing the buffer when it fills it.
		partial := lr.end - lr.start
		if lr.start > 0 {
			copy(lr.buf, lr.buf[lr.start:lr.end])
			lr.start, lr.end = 0, partial
		}
		if lr.end == len(lr.buf) {
			grown := make([]byte, 2*len(lr.buf))
			copy(grown, lr.buf[:lr.end])
			lr.buf = grown
		}
		scanned = lr.end
		n, err := lr.r.Read(lr.buf[lr.end:])
		lr.end += n
		if err != nil {
			lr.eof = true
			if !errors.Is(err, io.EOF) {
				lr.err = err
			}
		}
	}
}

func trimCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}

// depthState follows the nesting of a JSON text across lines, without validating it.
type depthState struct {
	depth    int
	inString bool
	escaped  bool
	started  bool
	bad      bool
}

// feed advances over b. It returns the index just after the byte that closes the outermost object,
// or -1 when the object is still open at the end of b.
func (d *depthState) feed(b []byte) int {
	for i, c := range b {
		if d.inString {
			switch {
			case d.escaped:
				d.escaped = false
			case c == '\\':
				d.escaped = true
			case c == '"':
				d.inString = false
			}
			continue
		}
		switch c {
		case '"':
			d.inString = true
		case '{', '[':
			d.depth++
			d.started = true
		case '}', ']':
			d.depth--
			if d.depth < 0 {
				d.bad = true
				return -1
			}
			if d.depth == 0 && d.started {
				if c != '}' {
					d.bad = true
					return -1
				}
				return i + 1
			}
		}
	}
	if d.inString && d.escaped {
		d.escaped = false
	}
	return -1
}
