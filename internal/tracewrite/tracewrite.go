// Package tracewrite writes .ldd/trace.log entries in the reference's v0.13 format, quoted so that the
// reference reader (shlex.split, POSIX mode) reads every value back unchanged.
//
// FormatMeta and Quote are pure; AppendAt is the only function that touches the file system.
package tracewrite

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ldd-tools/tune/internal/redact"
	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/scorer"
	"github.com/ldd-tools/tune/internal/weights"
)

// TimestampLayout is the v0.11+ writer's timestamp: UTC with microseconds.
const TimestampLayout = "2006-01-02T15:04:05.000000Z"

// fieldSep separates the tokens of an entry, as the reference writer does.
const fieldSep = "  "

// canonicalKeys are the meta fields FormatMeta writes itself; extra fields may not replace them (the
// reader keeps the last duplicate, so an extra would silently win).
var canonicalKeys = map[string]bool{"creativity": true, "dispatch": true, "signals": true, "weights": true, "task": true, "loops": true}

// ShortDispatch maps the scorer's long dispatch source to the meta line's short form. Unknown values pass
// through, as in the reference.
func ShortDispatch(source string) string {
	switch source {
	case scorer.SourceAuto:
		return "auto"
	case scorer.SourceExplicit:
		return "explicit"
	case scorer.SourceBump:
		return "bump"
	case scorer.SourceOverrideDown:
		return "override-down"
	}
	return source
}

// SignalsField formats the fired signals as the v0.13 signals= value: name:±w joined by commas, in the
// scorer's order ("explicit-bugfix:-5,single-file:-3"). A half weight prints as "+2.5"; the reference
// aggregator reads only integers, tune's reader reads both.
func SignalsField(signals []weights.SignalWeight) string {
	parts := make([]string, len(signals))
	for i, s := range signals {
		parts[i] = s.Name + ":" + s.Weight.String()
	}
	return strings.Join(parts, ",")
}

// FormatMeta renders the meta line that records a scorer decision, in the canonical v0.13 order:
//
//	<ts>  meta  L<n>/<name>  [creativity=…]  dispatch=…  signals=…  weights=v000N  task=…  loops=…  [extra…]
//
// creativity appears only at L3/L4 and weights only for a stored version (> 0). Extra fields follow in
// key order; a key that is empty, holds whitespace, '=', a quote or a backslash, or names a canonical
// field is left out, because the reader could not give it back as written.
func FormatMeta(ts time.Time, r scorer.Result, task string, loops []string, extra map[string]string) string {
	parts := []string{ts.UTC().Format(TimestampLayout), "meta", r.FinalLevel.Label()}
	if r.FinalLevel >= weights.L3 {
		parts = append(parts, "creativity="+Quote(r.Creativity))
	}
	parts = append(parts, "dispatch="+Quote(ShortDispatch(r.DispatchSource)), "signals="+Quote(SignalsField(r.Signals)))
	if r.WeightsVersion > 0 {
		parts = append(parts, "weights="+weights.VersionName(r.WeightsVersion))
	}
	parts = append(parts, "task="+Quote(task), "loops="+Quote(strings.Join(loops, ",")))
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if validKey(k) && !canonicalKeys[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+Quote(extra[k]))
	}
	return strings.Join(parts, fieldSep)
}

func validKey(k string) bool {
	return k != "" && !strings.ContainsFunc(k, func(r rune) bool {
		return r == '=' || r == '"' || r == '\'' || r == '\\' || pySpace(r)
	})
}

// Quote writes a value the way the v0.11+ reference writer (TraceStore._kv) does:
//   - no space, tab or quote: bare (the empty string too: "key=");
//   - spaces, tabs or an apostrophe but no double quote: in double quotes;
//   - a double quote: shell-quoted (shlex.quote: single quotes, an embedded ' written as '"'"').
//
// Two cases the reference writer gets wrong are made safe, so the value always reads back unchanged: a
// backslash (shlex would eat it outside single quotes) is shell-quoted, and any other Unicode whitespace
// (which Python's line.strip() would cut at the end of a line) is double-quoted. A line break cannot be
// represented in a one-line entry, so CR and LF become spaces; so do the other control characters, and
// bytes that are not UTF-8 become U+FFFD (Clean): a reader warns on either, and an ESC would reach the
// terminal of whoever reads the log.
func Quote(value string) string {
	value = Clean(value)
	switch {
	case strings.ContainsAny(value, `"\`):
		return "'" + strings.ReplaceAll(value, "'", `'"'"'`) + "'"
	case strings.ContainsFunc(value, func(r rune) bool { return r == '\'' || pySpace(r) }):
		return `"` + value + `"`
	}
	return value
}

// pySpace is Python's str.isspace (what strip() removes), which includes the shlex separators.
func pySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// Clean is value as an entry can hold it: CR LF, and each other C0 control character or DEL, become one
// space, and bytes that are not UTF-8 become U+FFFD. A tab stays (Quote quotes it). The bidi embedding,
// override and isolate controls become a space too: a log is read with cat and less, where U+202E turns
// the rest of the line around (tune's own views escape them, a terminal does not). The marks that only
// set a direction (U+200E, U+200F) stay: they reorder nothing on their own.
func Clean(value string) string {
	if !strings.ContainsFunc(value, isControl) && utf8.ValidString(value) {
		return value
	}
	value = strings.ReplaceAll(strings.ToValidUTF8(value, "\uFFFD"), "\r\n", " ")
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return ' '
		}
		return r
	}, value)
}

func isControl(r rune) bool {
	return (r < 0x20 && r != '\t') || r == 0x7f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// TitleInput is the start of prompt that Title(…, max) reads, with the redaction's margin
// (redact.Head): what a caller redacts before making the title. Redacting a pasted transcript whole cost seconds a megabyte (the
// review of the writing side: 13.6 s for 6 MB), for a title of max runes.
func TitleInput(prompt string, max int) string {
	n, gap := 0, false
	for i, r := range prompt {
		if pySpace(r) {
			gap = n > 0
			continue
		}
		if gap {
			n++ // the one space Title joins with
			gap = false
		}
		if n++; n > max {
			return redact.Head(prompt, i)
		}
	}
	return prompt
}

// Title makes a one-line task title from a prompt: whitespace runs become one space, and a title longer
// than max runes is cut at a word boundary (if one is near) and ends with "…".
func Title(prompt string, max int) string {
	t := strings.Join(strings.FieldsFunc(prompt, pySpace), " ")
	r := []rune(t)
	if max <= 1 || len(r) <= max {
		return t
	}
	cut := string(r[:max-1])
	if r[max-1] != ' ' {
		// back up to the last word end, unless that throws away more than a third
		if i := strings.LastIndexByte(cut, ' '); i >= len(cut)*2/3 {
			cut = cut[:i]
		}
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}

// NoteAhead is how far ahead of the clock a writer follows the previous writer's stamp: a clock
// stepped back by a correction keeps the stamps going up; a note further ahead is not one a writer
// left.
const NoteAhead = time.Minute

// LockWait is how long AppendAt waits for another writer of the same log (a tune score holds the lock for
// one write) before it gives up.
const LockWait = 30 * time.Second

// AppendAt adds one entry to the trace log at path: it creates the parent directory and the file when
// missing, takes an exclusive lock (a sidecar path+".lock", so the lock works the same on every OS), and
// writes the line and its newline in one write. If the file does not end with a newline (a writer died
// mid-line, or an edit left it), a newline is written first so the new entry starts on its own line,
// and Appended.Ended says which line it ended: the reader skips an unended last line as a write in
// progress, but reads it once it is ended, and the writer cannot tell a torn line from a whole one, so
// the person who runs it is told (docs/decisions.md#a-torn-last-line-is-named).
//
// The entry is stamped under the lock: entry gets the stamp and returns the line. The
// stamp is now(), read once the lock is held, to the microsecond; when that is not after the stamp the
// previous writer left in the lock file (its note), it is one microsecond past the note instead. A
// meta line's stamp is its task's identity (regression_of= names it), so two agents scoring in the same
// microsecond must not share one (the review of the writing side: 1 in 300 of 8 parallel writers did,
// and one regression_of= then flagged both tasks), nor may a clock stepped back a few seconds repeat
// one. A note more than NoteAhead ahead of the clock is not followed, and is replaced: the lock file
// is the project's, and one planted far in the future would otherwise date every task after it. A nil
// now stamps nothing.
func AppendAt(path string, now func() time.Time, entry func(stamp time.Time) (string, error)) (Appended, error) {
	// A directory is refused before anything is made: "--log dir/" created dir/ and dir/.lock, then
	// failed (the review of the writing side).
	if fi, err := os.Stat(path); strings.HasSuffix(path, "/") || (err == nil && fi.IsDir()) {
		return Appended{}, fmt.Errorf("%s is a directory: name the trace log file in it (e.g. %s)", path, filepath.Join(path, "trace.log"))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return Appended{}, err
	}
	// regular.TryLock, not a plain open: a link committed at .ldd/trace.log.lock to ../.git/index.lock
	// made every score create git's lock, and a FIFO there hung it (the review of the writing side).
	lock, err := regular.TryLock(path+".lock", LockWait)
	if err != nil {
		return Appended{}, fmt.Errorf("%s: lock: %w", path, err)
	}
	if lock == nil {
		return Appended{}, fmt.Errorf("%s: another writer has held %s.lock for %s: is a tune score hung? nothing was written", path, filepath.Base(path), LockWait)
	}
	defer lock.Unlock()
	stamp := time.Time{}
	if now != nil {
		stamp = now().UTC().Truncate(time.Microsecond) // after the lock: a writer that waited stamps when it writes
		if last, err := time.Parse(TimestampLayout, string(lock.Note())); err == nil && last.Sub(stamp) <= NoteAhead && !stamp.After(last) {
			stamp = last.Add(time.Microsecond)
		}
	}
	line, err := entry(stamp)
	if err != nil {
		return Appended{}, err
	}
	if strings.ContainsAny(line, "\r\n") {
		return Appended{}, fmt.Errorf("%s: an entry must be one line", path)
	}
	// only a regular file (a link to one is fine): the trace review's --log to a FIFO exited 0 and the
	// entry went nowhere
	f, err := regular.OpenAppend(path, 0o644)
	if err != nil {
		return Appended{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Appended{}, err
	}
	buf := make([]byte, 0, len(line)+2)
	ended := ""
	if st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err != nil && err != io.EOF {
			return Appended{}, err
		}
		if last[0] != '\n' {
			buf = append(buf, '\n')
			ended = unendedLine(f, st.Size())
		}
	}
	buf = append(append(buf, line...), '\n')
	if err := writeOrCut(f, st.Size(), buf); err != nil {
		return Appended{}, err
	}
	if err := f.Close(); err != nil {
		return Appended{}, err
	}
	if !stamp.IsZero() {
		lock.SetNote([]byte(stamp.Format(TimestampLayout))) // a hint for the next writer, not a record
	}
	return Appended{Stamp: stamp, Ended: ended}, nil
}

// Appended is what AppendAt wrote.
type Appended struct {
	Stamp time.Time // the entry's stamp (zero when AppendAt had no clock)
	// Ended is the unended last line the write ended, quoted and cut to its start (or, when its start is
	// further back than unendedLook, to its end after "…"); empty when the log ended with a newline.
	Ended string
}

// unendedLook bounds how far back AppendAt looks for an unended line's start, so a write stays one
// small read whatever the log holds.
const unendedLook = 4096

// unendedLine is the unended last line of f, which holds size bytes, as Appended.Ended shows it; ""
// for a line the reader skips anyway (blank, or a comment), which ending changes nothing.
func unendedLine(f io.ReaderAt, size int64) string {
	from := max(size-unendedLook-1, 0) // one byte more: the line end before a line that starts at the window
	tail := make([]byte, size-from)
	n, err := f.ReadAt(tail, from)
	if err != nil && err != io.EOF {
		return "(unreadable)"
	}
	tail = tail[:n]
	const show = 60
	if i := bytes.LastIndexByte(tail, '\n'); i >= 0 || from == 0 {
		if line := strings.TrimSpace(string(tail[i+1:])); line == "" || strings.HasPrefix(line, "#") {
			return ""
		}
		runes := []rune(strings.ToValidUTF8(string(tail[i+1:]), "\uFFFD"))
		if len(runes) > show {
			return strconv.Quote(string(runes[:show])) + "…"
		}
		return strconv.Quote(string(runes))
	}
	runes := []rune(strings.ToValidUTF8(string(tail), "\uFFFD"))
	return "…" + strconv.Quote(string(runes[max(len(runes)-show, 0):]))
}

// writeOrCut writes buf at the end of f, which held size bytes. When the write fails, a part of the line
// may be there (a full disk): the next append would end it, and it would read as a task with cut
// fields (the review of the writing side), so f is cut back to size.
func writeOrCut(f interface {
	Write([]byte) (int, error)
	Truncate(int64) error
}, size int64, buf []byte) error {
	_, err := f.Write(buf)
	if err == nil {
		return nil
	}
	if terr := f.Truncate(size); terr != nil {
		return fmt.Errorf("%w (and cutting the part written back failed: %v)", err, terr)
	}
	return err
}
