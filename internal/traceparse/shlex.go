package traceparse

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// The trace writer's quoting is POSIX shell quoting as read by Python's shlex.split(line, posix=True)
// with comments off. It is hand-written here because no Go library reproduces those exact rules:
// only space, tab, CR and LF separate tokens (NBSP, VT and FF stay inside), double quotes let a
// backslash escape only `"` and `\`, single quotes are literal, a backslash outside quotes escapes
// any character, and adjacent quoted and bare pieces join into one token.

var (
	errNoClosingQuote = errors.New("no closing quotation")
	errNoEscaped      = errors.New("no escaped character after the final backslash")
)

func isSep(c byte) bool { return byteClass[c] == classSep }

// byteClass sorts bytes for the tokenizer's inner scan: one table load instead of five compares.
var byteClass = func() (t [256]uint8) {
	for _, c := range []byte(" \t\r\n") {
		t[c] = classSep
	}
	for _, c := range []byte("\"'\\") {
		t[c] = classQuote
	}
	return t
}()

const (
	classPlain = iota
	classSep
	classQuote // a quote or a backslash
)

// span is a token's place in a line's text: a Fields.text under construction.
type span struct{ start, end int }

// tokenize appends the spans of the tokens of src to spans. src is a piece of a line's text that
// starts at srcOff in it; the text itself starts at offset base of a. A token without quotes or
// backslashes is a span of src; the unquoted text of any other token is written to a, after the
// line, and its span points there. So all tokens are slices of one string, whatever their quoting.
// The caller reserves room in a for len(src) more bytes, so that the writes never move a's buffer.
func tokenize(src string, srcOff int, a *arena, base int, spans []span) ([]span, error) {
	i, n := 0, len(src)
	for {
		for i < n && isSep(src[i]) {
			i++
		}
		if i >= n {
			return spans, nil
		}
		start := i
		for i < n && byteClass[src[i]] == classPlain {
			i++
		}
		if i == n || isSep(src[i]) {
			spans = append(spans, span{srcOff + start, srcOff + i})
			continue
		}
		out := a.Len() - base
		a.WriteString(src[start:i])
		for i < n && !isSep(src[i]) {
			switch src[i] {
			case '\\':
				if i+1 >= n {
					return spans, errNoEscaped
				}
				// The escaped character may be multi-byte: its first byte is taken here and its
				// continuation bytes by the default case, which is the same thing.
				a.writeByte(src[i+1])
				i += 2
			case '\'':
				end := strings.IndexByte(src[i+1:], '\'')
				if end < 0 {
					return spans, errNoClosingQuote
				}
				a.WriteString(src[i+1 : i+1+end])
				i += end + 2
			case '"':
				i++
				for {
					run := i
					for i < n && src[i] != '"' && src[i] != '\\' {
						i++
					}
					a.WriteString(src[run:i])
					if i >= n {
						return spans, errNoClosingQuote
					}
					if src[i] == '"' {
						i++
						break
					}
					if i+1 >= n {
						return spans, errNoEscaped
					}
					if next := src[i+1]; next == '"' || next == '\\' {
						a.writeByte(next)
						i += 2
						continue
					}
					a.writeByte('\\') // a backslash before anything else is itself
					i++
				}
			default:
				run := i
				for i < n && byteClass[src[i]] == classPlain {
					i++
				}
				a.WriteString(src[run:i])
			}
		}
		spans = append(spans, span{out, a.Len() - base})
	}
}

// fallbackSplit is the recovery for a line whose quotes do not balance (docs/decisions.md#trace-logs): split at
// runs of space and tab, then unquote each token on its own when it balances by itself; a token that
// does not is kept exactly as written, quote characters included, so nothing is invented. line is
// the line's text at offset base of a, as for tokenize; a needs room for len(line) more bytes.
func fallbackSplit(line string, a *arena, base int, spans []span) []span {
	for i := 0; i < len(line); {
		if line[i] == ' ' || line[i] == '\t' {
			i++
			continue
		}
		start := i
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			i++
		}
		before := len(spans)
		var err error
		if spans, err = tokenize(line[start:i], start, a, base, spans); err != nil || len(spans) != before+1 {
			spans = append(spans[:before], span{start, i})
		}
	}
	return spans
}

// isPySpace reports whether Python's str.strip() removes r: Unicode White_Space plus the ASCII
// file/group/record/unit separators 0x1C–0x1F, which Python also treats as whitespace.
func isPySpace(r rune) bool {
	switch {
	case r <= 0x7f:
		return (r >= 0x09 && r <= 0x0d) || (r >= 0x1c && r <= 0x20)
	case r == 0x85, r == 0xa0, r == 0x1680, r == 0x2028, r == 0x2029, r == 0x202f, r == 0x205f, r == 0x3000:
		return true
	case r >= 0x2000 && r <= 0x200a:
		return true
	}
	return false
}

// trimPy trims like Python's str.strip(): Unicode whitespace at both ends, including NBSP.
func trimPy[T ~string | ~[]byte](b T) T {
	for len(b) > 0 {
		c := b[0]
		if c < utf8.RuneSelf {
			if !isPySpace(rune(c)) {
				break
			}
			b = b[1:]
			continue
		}
		r, size := utf8.DecodeRuneInString(string(b[:min(len(b), utf8.UTFMax)]))
		if !isPySpace(r) {
			break
		}
		b = b[size:]
	}
	for len(b) > 0 {
		c := b[len(b)-1]
		if c < utf8.RuneSelf {
			if !isPySpace(rune(c)) {
				break
			}
			b = b[:len(b)-1]
			continue
		}
		r, size := utf8.DecodeLastRuneInString(string(b[max(0, len(b)-utf8.UTFMax):]))
		if !isPySpace(r) {
			break
		}
		b = b[:len(b)-size]
	}
	return b
}
