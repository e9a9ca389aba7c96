package textfmt

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Text a trace log, a transcript or a pull request carries (a task title, a model or project name, a
// file name in a warning) can hold terminal control sequences: `ESC]52;c;…BEL` writes the clipboard,
// `ESC[2J` clears the screen. tune never emits them: every control character is shown as a \xNN or \uXXXX escape
// instead, by one function per kind of output (docs/decisions.md#hostile-files-issue-25).
//
// What is kept: tab and newline everywhere (tune's own layout), carriage return on the terminal only
// (the progress bar redraws its line with it; it moves the cursor but sends no command). What is escaped:
// the other C0 controls (ESC, BEL, …), DEL, the C1 controls U+0080–U+009F (a terminal may read
// U+009B as CSI), and the bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E,
// U+2066–U+2069): a title or a log reason holding U+202E shows its text reversed in a report, a pull
// request body or `tune history`, so that what a reviewer reads is not what the file holds (the
// "Trojan Source" trick; the ninth review found them printed raw).

// OneLine shows a newline or a carriage return in s as \n or \r: for a value that stands inside one line
// of tune's own layout (a table cell, a file name in a warning or a header). The escapes above keep
// both, which tune's layout needs, so a log named "a\ntune: note: …" printed a line of its own making
// (the trace review).
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r") {
		return s
	}
	return oneLine.Replace(s)
}

var oneLine = strings.NewReplacer("\n", `\n`, "\r", `\r`)

// Terminal returns s with its control characters escaped, for text printed on a terminal.
func Terminal(s string) string { return escapeString(s, false) }

// Markdown returns s with its control characters escaped, carriage return too, for reports and pull
// request bodies (rendered by a forge, or printed with cat).
func Markdown(s string) string { return escapeString(s, true) }

func escapeString(s string, cr bool) string {
	if firstControl([]byte(s), cr) < 0 {
		return s
	}
	return string(appendEscaped(nil, []byte(s), cr))
}

// firstControl is the index of the first byte to escape in b, -1 when none. Every byte tune prints
// passes here (a streamed export is tens of MB), so it tests eight bytes at a time for a byte below
// 0x20, DEL or 0xC2 (the usual SWAR tests) and looks at single bytes only in a word that has one: a byte
// loop ran at ~200 MB/s, a fifth of a `tune trace --format jsonl`.
func firstControl(b []byte, cr bool) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		del, c2, e2, d8 := x^(0x7f*ones), x^(0xc2*ones), x^(0xe2*ones), x^(0xd8*ones)
		if (x-0x20*ones)&^x&highs == 0 && (del-ones)&^del&highs == 0 && (c2-ones)&^c2&highs == 0 &&
			(e2-ones)&^e2&highs == 0 && (d8-ones)&^d8&highs == 0 {
			continue
		}
		for j := i; j < i+8; j++ {
			if maybeControl[b[j]] && isControl(b, j, b[j], cr) {
				return j
			}
		}
	}
	for ; i < len(b); i++ {
		if maybeControl[b[i]] && isControl(b, i, b[i], cr) {
			return i
		}
	}
	return -1
}

// maybeControl marks the bytes isControl may report: the C0 range, DEL, 0xC2 (the lead byte of C1),
// 0xE2 and 0xD8 (the lead bytes of the bidirectional controls).
var maybeControl = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t[0x7f], t[0xc2], t[0xe2], t[0xd8] = true, true, true, true
	return t
}()

func isControl(b []byte, i int, c byte, cr bool) bool {
	switch {
	case c == '\n' || c == '\t':
		return false
	case c == '\r':
		return cr
	case c < 0x20 || c == 0x7f:
		return true
	case c == 0xc2: // U+0080–U+009F are 0xC2 0x80–0x9F in UTF-8
		return i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] <= 0x9f
	case c == 0xd8: // U+061C, the Arabic letter mark: 0xD8 0x9C
		return i+1 < len(b) && b[i+1] == 0x9c
	case c == 0xe2 && i+2 < len(b):
		// U+200E, U+200F: E2 80 8E–8F; U+202A–U+202E: E2 80 AA–AE; U+2066–U+2069: E2 81 A6–A9
		c1, c2 := b[i+1], b[i+2]
		return c1 == 0x80 && (c2 == 0x8e || c2 == 0x8f || c2 >= 0xaa && c2 <= 0xae) || c1 == 0x81 && c2 >= 0xa6 && c2 <= 0xa9
	}
	return false
}

func appendEscaped(dst, b []byte, cr bool) []byte {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !isControl(b, i, c, cr) {
			dst = append(dst, c)
			continue
		}
		if c >= 0x80 { // a multi-byte control: C1 or bidirectional
			r, size := utf8.DecodeRune(b[i:])
			dst = fmt.Appendf(dst, `\u%04x`, r)
			i += size - 1
			continue
		}
		if c == 0x7f {
			// DEL as \u007f, like the multi-byte controls: encoding/json writes DEL raw, so in a JSON
			// string (every --json output passes here) \x7f would make the document invalid (the trace
			// review); the C0 controls never reach here raw in JSON, which escapes them itself
			dst = append(dst, `\u007f`...)
			continue
		}
		dst = fmt.Appendf(dst, `\x%02x`, c)
	}
	return dst
}

// TerminalWriter wraps w (the process's stdout or stderr) so that every write is escaped as Terminal
// does: one gate for every table, warning and message, whatever printed it. JSON is unaffected (its
// encoder escapes the C0 controls itself, and DEL, C1 and the bidirectional controls are written here
// as \uXXXX, a valid JSON escape). The one write passed whole is the progress bar's
// erase-line sequence, which tune writes by itself.
func TerminalWriter(w io.Writer) io.Writer { return &terminalWriter{w: w} }

type terminalWriter struct{ w io.Writer }

// EraseLine is the sequence the progress bar clears its line with ("\r" + CSI K).
const EraseLine = "\r\x1b[K"

func (t *terminalWriter) Write(p []byte) (int, error) {
	if firstControl(p, false) < 0 || string(p) == EraseLine {
		return t.w.Write(p)
	}
	if _, err := t.w.Write(appendEscaped(make([]byte, 0, len(p)+16), p, false)); err != nil {
		return 0, err
	}
	return len(p), nil
}
