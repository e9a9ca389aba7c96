package traceparse

import (
	"bytes"
	"fmt"
	"io"

	"github.com/ldd-tools/tune/internal/regular"
)

// Block sizes for reading a log backwards: small first, since the last tasks are usually a few KB,
// then doubling so that a long tail costs O(its size) in total.
const (
	firstTailBlock = 64 << 10
	maxTailBlock   = 8 << 20
)

// ReadLast reads the last n tasks of the log at path (n <= 0: the whole log). It reads backwards from
// the end in blocks and stops at the n-th meta line from the end, so the cost grows with n, not with
// the file. The log is never written. Only the bytes present when the read starts are read: a line a
// writer is still appending is reported as an incomplete last line. When the read starts after the
// beginning of the file, Result.Tails records the offset and line numbers count from there.
//
// Only a regular file is read: a FIFO, device or socket is refused by name (regular.Open), never
// blocked on or read forever (docs/decisions.md#store-integrity-and-hostile-inputs-issue-18).
func ReadLast(path string, n int, opts ...Option) (*Result, error) {
	f, err := regular.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if n <= 0 {
		return Parse(io.NewSectionReader(f, 0, size), path, opts...)
	}
	p := newParser(path, 0, opts...)
	start, first, err := tailStart(f, size, n, p.maxLine)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if first {
		// Only skipped lines come before the tail's first meta line: in a whole read they are that task's
		// departures (FuzzParse found a tail read leaving them out), so the whole log is read; it holds no
		// other task (the check keeps the tail read when it would).
		res, err := Parse(io.NewSectionReader(f, 0, size), path, opts...)
		if err != nil || len(res.Tasks) <= n {
			return res, err
		}
	}
	// The tail is read forwards like any log, in bounded batches when it is large (a legacy log
	// without meta lines is all tail), so its memory follows the tasks it keeps, not its bytes
	// (docs/decisions.md#bounded-memory-per-task).
	p.offset, p.start = start, start
	if size-start <= inPlaceBytes {
		data := make([]byte, size-start)
		if m, err := f.ReadAt(data, start); m < len(data) {
			return nil, fmt.Errorf("%s: %w", path, shrank(err))
		}
		if err := p.readBytes(data); err != nil {
			return nil, err
		}
	} else if err := p.read(io.NewSectionReader(f, start, size-start)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	res := p.result()
	if start > 0 {
		res.Tails = []Tail{{File: path, Offset: start}}
	}
	return res, nil
}

func shrank(err error) error {
	if err == nil || err == io.EOF {
		return fmt.Errorf("the file shrank while it was read (truncated or rotated?)")
	}
	return err
}

// tailStart finds the start of the n-th meta line counted from the end of the first size bytes of r,
// or 0 when there are fewer; first reports that only skipped lines come before it (it looks back to the
// first kept line to know), when those lines are its task's and must be read too. Lines are classified exactly as the forward parser does (a line longer
// than maxLine is not read, so it is never a meta line), so the forward parse from the returned offset
// yields the same tasks as the end of a whole-file parse. It holds the line being examined and one
// block, never the tail: a line over maxLine is passed over block by block without being held.
func tailStart(r io.ReaderAt, size int64, n, maxLine int) (int64, bool, error) {
	var (
		data  []byte // bytes [pos, end) of the file: the end of the unexamined part
		pos   = size
		end   = size // the unexamined part is [0, end); a line end (or the end of the file) is at end
		block = int64(firstTailBlock)
		metas = 0
		found int64 // where the n-th meta line from the end starts, once seen
		cls   classifier
		lc    lineClass
		e     Entry
	)
	for {
		i := lastLineEnd(data)
		if i < 0 && pos > 0 {
			if len(data) > maxLine { // too long to be read forwards: find its start, keep nothing
				j, err := prevLineEnd(r, pos, maxTailBlock)
				if err != nil || j < 0 {
					return 0, false, err
				}
				if end, err = lineEndBefore(r, j); err != nil {
					return 0, false, err
				}
				data, pos = nil, end
				continue
			}
			nb := min(block, pos)
			pos -= nb
			grown := make([]byte, int(nb)+len(data))
			if m, err := r.ReadAt(grown[:nb], pos); m < int(nb) {
				return 0, false, shrank(err)
			}
			copy(grown[nb:], data)
			data = grown
			block = min(2*block, maxTailBlock)
			continue
		}
		start := i + 1
		// A line counts only when a line end follows it: the bytes after the last line end are an
		// incomplete line, never a meta.
		// Once the n-th meta line is found, every earlier line is classified until one is kept: another
		// meta line or a legacy task's entry owns the lines between, and the tail is right. Reaching the
		// start of the file first means only skipped lines come before it: they are its task's.
		if line := data[start:]; end < size && len(line) <= maxLine && (metas == n || bytes.Contains(line, metaWord)) {
			e = Entry{}
			if cls.classify(line, &lc, &e); lc.skip == keep {
				switch {
				case metas == n:
					return found, false, nil
				case e.Kind == KindMeta:
					if metas++; metas == n {
						found = pos + int64(start)
					}
				}
			}
		}
		if i < 0 {
			return found, metas == n && found > 0, nil
		}
		k := i
		if data[i] == '\n' && i > 0 && data[i-1] == '\r' {
			k = i - 1
		}
		data, end = data[:k], pos+int64(k)
	}
}

// prevLineEnd returns the offset of the last line end ("\n" or "\r") before pos, or -1, reading
// backwards in blocks of the given size.
func prevLineEnd(r io.ReaderAt, pos int64, block int64) (int64, error) {
	buf := make([]byte, block)
	for pos > 0 {
		nb := min(block, pos)
		pos -= nb
		if m, err := r.ReadAt(buf[:nb], pos); m < int(nb) {
			return 0, shrank(err)
		}
		if i := lastLineEnd(buf[:nb]); i >= 0 {
			return pos + int64(i), nil
		}
	}
	return -1, nil
}

// lineEndBefore returns where the line that ends with the line end at j ends: j, or j-1 for the
// "\r" of a "\r\n".
func lineEndBefore(r io.ReaderAt, j int64) (int64, error) {
	if j == 0 {
		return j, nil
	}
	var two [2]byte
	if m, err := r.ReadAt(two[:], j-1); m < 2 {
		return 0, shrank(err)
	}
	if two[1] == '\n' && two[0] == '\r' {
		return j - 1, nil
	}
	return j, nil
}

var metaWord = []byte("meta")

// lastLineEnd returns the index of the last "\n" or "\r" in b, or -1. A plain loop: it stops at the
// nearest line end, so it costs one line, whereas bytes.LastIndexByte for "\n" would rescan the whole
// tail on every line of a CR-only log.
func lastLineEnd(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' || b[i] == '\r' {
			return i
		}
	}
	return -1
}
