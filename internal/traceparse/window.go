package traceparse

import (
	"bytes"
	"io"

	"github.com/ldd-tools/tune/internal/regular"
)

// DefaultLog is where agents write their trace, relative to the project directory; the commands read
// it when no log is named.
const DefaultLog = ".ldd/trace.log"

// MaxLineCountPrefix bounds the part of a log before a tail read that is scanned to turn the tail's
// line numbers into the file's. Counting newlines costs time in proportion to that prefix; up to a few
// MB it is negligible, beyond it the tail read's promise (cost in proportion to the tasks read) wins
// and the lines stay counted from the tail, which the output then says.
const MaxLineCountPrefix = 16 << 20

// AbsoluteLines makes the line numbers of a tail read of one log count from the start of the file
// (warnings, tasks and their lines), when the part before the tail is at most MaxLineCountPrefix
// bytes; it then clears res.Tails. Errors, messages and proposals then name the line an editor shows.
func AbsoluteLines(path string, res *Result) error {
	if len(res.Tails) != 1 || res.Tails[0].Offset > MaxLineCountPrefix {
		return nil
	}
	before, err := countLines(path, res.Tails[0].Offset)
	if err != nil {
		return err
	}
	for i := range res.Warnings {
		res.Warnings[i].Line += before
	}
	for i := range res.Tasks {
		t := &res.Tasks[i]
		t.Line += before
		if t.Meta.Line > 0 {
			t.Meta.Line += before
		}
		for j := range t.Entries {
			t.Entries[j].Line += before
		}
		if t.Omitted != nil {
			t.Omitted.Line += before
		}
	}
	res.Tails = nil
	return nil
}

// countLines counts the lines that end in the first n bytes of the file, with the reader's line
// terminators: \n, \r\n and a lone \r.
func countLines(path string, n int64) (int, error) {
	f, err := regular.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := io.LimitReader(f, n)
	buf := make([]byte, 1<<20)
	lines, prevCR := 0, false
	for {
		k, err := r.Read(buf)
		chunk := buf[:k]
		if bytes.IndexByte(chunk, '\r') < 0 {
			lines += bytes.Count(chunk, []byte{'\n'}) // the usual case: no CR anywhere
			if prevCR && k > 0 && chunk[0] == '\n' {
				lines-- // the \n of a \r\n split across reads, counted at the \r
			}
			prevCR = false
		} else {
			for _, b := range chunk {
				if b == '\r' || b == '\n' && !prevCR {
					lines++
				}
				prevCR = b == '\r'
			}
		}
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			return 0, err
		}
	}
}
