package traceout

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/ldd-tools/tune/internal/traceparse"
)

// TaskWriter takes the tasks of one or more trace logs in order, one at a time, then the read's line
// counts, warnings and tail offsets.
type TaskWriter interface {
	Task(t *traceparse.Task) error
	Close(lines traceparse.LineCounts, warnings []traceparse.Warning, tails []traceparse.Tail) error
}

// KeepsNoTask reports whether w keeps nothing of a task once its Task method returns (it writes the task
// out at once), so that a read may reuse the task's memory for the next ones (traceparse.Transient).
func KeepsNoTask(w TaskWriter) bool {
	_, ok := w.(interface{ keepsNoTask() })
	return ok
}

func (*TaskJSONL) keepsNoTask() {}
func (*TaskJSON) keepsNoTask()  {}

// TaskJSONL writes one JSON object per task and line, with the fields of `tune trace --json`'s tasks.
type TaskJSONL struct {
	w   *bufio.Writer
	buf []byte
}

// NewTaskJSONL returns a TaskJSONL writing to w.
func NewTaskJSONL(w io.Writer) *TaskJSONL {
	return &TaskJSONL{w: bufio.NewWriterSize(w, 64<<10)}
}

// Task implements TaskWriter: the line encoding/json's Encoder writes for t (see AppendTask).
func (j *TaskJSONL) Task(t *traceparse.Task) error {
	j.buf = append(AppendTask(j.buf[:0], t), '\n')
	_, err := j.w.Write(j.buf)
	return err
}

// Close implements TaskWriter: JSON Lines carry the tasks only (warnings go to stderr).
func (j *TaskJSONL) Close(traceparse.LineCounts, []traceparse.Warning, []traceparse.Tail) error {
	return j.w.Flush()
}

// TaskJSON writes the document `tune trace --json` prints, {"tasks": [...], "lines": …, "warnings": […],
// "tails": […]}, byte for byte as encoding/json indents a traceparse.Result, but one task at a time, so
// that the parsed log is never held whole next to its encoding.
type TaskJSON struct {
	w                 *bufio.Writer
	buf               bytes.Buffer
	compact, indented []byte
	tasks             int
}

// NewTaskJSON returns a TaskJSON writing to w.
func NewTaskJSON(w io.Writer) *TaskJSON {
	return &TaskJSON{w: bufio.NewWriterSize(w, 64<<10)}
}

// Task implements TaskWriter: the task indented as encoding/json's Encoder with SetIndent("    ", "  ")
// indents it (it indents its compact encoding with the same json.Indent).
func (j *TaskJSON) Task(t *traceparse.Task) error {
	j.compact = AppendTask(j.compact[:0], t)
	j.indented = appendIndent(j.indented[:0], j.compact, "    ", "  ")
	sep := ",\n    "
	if j.tasks == 0 {
		sep = "{\n  \"tasks\": [\n    "
	}
	j.tasks++
	j.w.WriteString(sep)
	_, err := j.w.Write(j.indented)
	return err
}

// appendIndent appends the compact JSON src indented as json.Indent (and so an Encoder with SetIndent)
// indents it: a line per element and member, prefix then depth times indent before each, ": " after
// keys, empty arrays and objects kept as [] and {}. Hand-written for the speed of --json: src is
// AppendTask's output, valid and compact, so it only tracks strings, where json.Indent runs its
// validating scanner on every byte; TaskJSON's test compares the documents with encoding/json's.
func appendIndent(dst, src []byte, prefix, indent string) []byte {
	depth := 0
	open := false // after '[' or '{': the next byte says whether it is empty
	newline := func() {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, indent...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if open {
			open = false
			if c == ']' || c == '}' {
				dst = append(dst, c)
				continue
			}
			depth++
			newline()
		}
		switch c {
		case '"':
			start := i
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
			dst = append(dst, src[start:i+1]...)
		case '{', '[':
			dst = append(dst, c)
			open = true
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// Close implements TaskWriter: the rest of the document.
func (j *TaskJSON) Close(lines traceparse.LineCounts, warnings []traceparse.Warning, tails []traceparse.Tail) error {
	if warnings == nil {
		warnings = []traceparse.Warning{}
	}
	j.buf.Reset()
	enc := json.NewEncoder(&j.buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(struct {
		Lines    traceparse.LineCounts `json:"lines"`
		Warnings []traceparse.Warning  `json:"warnings"`
		Tails    []traceparse.Tail     `json:"tails,omitempty"`
	}{lines, warnings, tails}); err != nil {
		return err
	}
	if j.tasks == 0 {
		j.w.WriteString("{\n  \"tasks\": [],\n")
	} else {
		j.w.WriteString("\n  ],\n")
	}
	j.w.Write(bytes.TrimPrefix(j.buf.Bytes(), []byte("{\n")))
	return j.w.Flush()
}
