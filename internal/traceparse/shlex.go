package traceparse

import (
	"bytes"
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

// span is a token's place in the tokenizer's buffer.
type span struct{ start, end int }

// tokenize splits buf[:n]. A token without quotes or backslashes is a span of buf[:n]; an unquoted
// token is appended to buf after n and its span points there. The caller turns buf into one string
// and slices every token from it: one allocation per line, however many tokens are quoted.
func tokenize(buf []byte, n int, spans []span) ([]byte, []span, error) {
	i := 0
	for {
		for i < n && isSep(buf[i]) {
			i++
		}
		if i >= n {
			return buf, spans, nil
		}
		start := i
		for i < n && byteClass[buf[i]] == classPlain {
			i++
		}
		if i == n || isSep(buf[i]) {
			spans = append(spans, span{start, i})
			continue
		}
		out := len(buf)
		buf = append(buf, buf[start:i]...)
		for i < n && !isSep(buf[i]) {
			switch c := buf[i]; c {
			case '\\':
				if i+1 >= n {
					return buf, spans, errNoEscaped
				}
				// The escaped character may be multi-byte: its first byte is taken here and its
				// continuation bytes by the default case, which is the same thing.
				buf = append(buf, buf[i+1])
				i += 2
			case '\'':
				end := bytes.IndexByte(buf[i+1:n], '\'')
				if end < 0 {
					return buf, spans, errNoClosingQuote
				}
				buf = append(buf, buf[i+1:i+1+end]...)
				i += end + 2
			case '"':
				i++
				for {
					if i >= n {
						return buf, spans, errNoClosingQuote
					}
					c := buf[i]
					if c == '"' {
						i++
						break
					}
					if c == '\\' {
						if i+1 >= n {
							return buf, spans, errNoEscaped
						}
						if next := buf[i+1]; next == '"' || next == '\\' {
							buf = append(buf, next)
							i += 2
							continue
						}
					}
					buf = append(buf, c)
					i++
				}
			default:
				buf = append(buf, c)
				i++
			}
		}
		spans = append(spans, span{out, len(buf)})
	}
}

// splitPOSIX appends the tokens of s to out.
func splitPOSIX(s string, out []string) ([]string, error) {
	buf, spans, err := tokenize([]byte(s), len(s), nil)
	if err != nil {
		return out, err
	}
	return appendTokens(out, string(buf), spans), nil
}

func appendTokens(out []string, s string, spans []span) []string {
	for _, sp := range spans {
		out = append(out, s[sp.start:sp.end])
	}
	return out
}

// fallbackSplit is the recovery for a line whose quotes do not balance (Decision 1.10.1): split at
// runs of space and tab, then unquote each token on its own when it balances by itself; a token that
// does not is kept exactly as written, quote characters included, so nothing is invented.
func fallbackSplit(s string, out []string) []string {
	for _, tok := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' }) {
		if parts, err := splitPOSIX(tok, nil); err == nil && len(parts) == 1 {
			out = append(out, parts[0])
		} else {
			out = append(out, tok)
		}
	}
	return out
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
