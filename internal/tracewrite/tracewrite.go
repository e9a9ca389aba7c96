// Package tracewrite writes .ldd/trace.log entries in the reference's v0.13 format, quoted so that the
// reference reader (shlex.split, POSIX mode) reads every value back unchanged.
//
// FormatMeta and Quote are pure; Append is the only function that touches the file system.
package tracewrite

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/gofrs/flock"

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
// represented in a one-line entry, so CR and LF become spaces.
func Quote(value string) string {
	if strings.ContainsAny(value, "\r\n") {
		value = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(value)
	}
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

// Append adds one entry to the trace log at path: it creates the parent directory and the file when
// missing, takes an exclusive lock (a sidecar path+".lock", so the lock works the same on every OS), and
// writes the line and its newline in one write. If the file does not end with a newline (a writer died
// mid-line), a newline is written first so the new entry starts on its own line.
func Append(path string, line string) error {
	if strings.ContainsAny(line, "\r\n") {
		return fmt.Errorf("%s: an entry must be one line", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	lock := flock.New(path + ".lock")
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("%s: lock: %w", path, err)
	}
	defer lock.Unlock()
	// only a regular file (a link to one is fine): the trace review's --log to a FIFO exited 0 and the
	// entry went nowhere
	f, err := regular.OpenAppend(path, 0o644)
	if err != nil {
		return err
	}
	buf := make([]byte, 0, len(line)+2)
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err != nil && err != io.EOF {
			f.Close()
			return fmt.Errorf("%s: %w", path, err)
		}
		if last[0] != '\n' {
			buf = append(buf, '\n')
		}
	}
	buf = append(append(buf, line...), '\n')
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
