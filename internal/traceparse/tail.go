package traceparse

import (
	"bytes"
	"fmt"
	"io"
	"os"
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
func ReadLast(path string, n int, opts ...Option) (*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() { // a pipe cannot be read backwards: read it all, keep the last n
		res, err := Parse(f, path, opts...)
		if err == nil && n > 0 && len(res.Tasks) > n {
			res.Tasks = res.Tasks[len(res.Tasks)-n:]
		}
		return res, err
	}
	size := fi.Size()
	if n <= 0 {
		return Parse(io.NewSectionReader(f, 0, size), path, opts...)
	}
	data, start, err := tailStart(f, size, n)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p := newParser(path, start, opts...)
	if err := p.readBytes(data); err != nil {
		return nil, err
	}
	res := p.result()
	if start > 0 {
		res.Tails = []Tail{{File: path, Offset: start}}
	}
	return res, nil
}

// tailStart finds the start of the n-th meta line counted from the end of the first size bytes of r,
// or 0 when there are fewer. It returns the bytes from that start to size and the start offset. Lines
// are classified exactly as the forward parser does, so the forward parse of the returned bytes
// yields the same tasks as the end of a whole-file parse.
func tailStart(r io.ReaderAt, size int64, n int) ([]byte, int64, error) {
	var (
		data    []byte // bytes [pos, size) of the file
		pos     = size
		block   = int64(firstTailBlock)
		lineEnd = 0 // end (exclusive, index into data) of the line to examine next
		metas   = 0
		cls     classifier
		lc      lineClass
		e       Entry
	)
	for {
		i := lastLineEnd(data[:lineEnd])
		if i < 0 && pos > 0 {
			nb := min(block, pos)
			pos -= nb
			grown := make([]byte, int(nb)+len(data))
			if m, err := r.ReadAt(grown[:nb], pos); m < int(nb) {
				if err == nil || err == io.EOF {
					err = fmt.Errorf("the file shrank while it was read (truncated or rotated?)")
				}
				return nil, 0, err
			}
			copy(grown[nb:], data)
			data, lineEnd = grown, lineEnd+int(nb)
			block = min(2*block, maxTailBlock)
			continue
		}
		start := i + 1
		// A line counts only when a line end follows it: the bytes after the last line end are an
		// incomplete line, never a meta.
		if line := data[start:lineEnd]; lineEnd < len(data) && bytes.Contains(line, metaWord) {
			e = Entry{}
			if cls.classify(line, &lc, &e); lc.skip == keep && e.Kind == KindMeta {
				if metas++; metas == n {
					return data[start:], pos + int64(start), nil
				}
			}
		}
		if i < 0 {
			return data, 0, nil
		}
		lineEnd = i
		if data[i] == '\n' && i > 0 && data[i-1] == '\r' {
			lineEnd = i - 1
		}
	}
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

// ReadLogs reads the last n tasks (n <= 0: all) of each log and concatenates the results in the
// order given. Each task keeps its Source.
func ReadLogs(paths []string, n int, opts ...Option) (*Result, error) {
	all := &Result{Tasks: []Task{}, Warnings: []Warning{}}
	for _, path := range paths {
		res, err := ReadLast(path, n, opts...)
		if err != nil {
			return nil, err
		}
		all.Tasks = append(all.Tasks, res.Tasks...)
		all.Lines.Add(res.Lines)
		all.Warnings = append(all.Warnings, res.Warnings...)
		all.Tails = append(all.Tails, res.Tails...)
	}
	return all, nil
}
