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

func isSep(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// splitPOSIX appends the tokens of s to out. Tokens without quotes or backslashes are substrings of
// s (no allocation); the rest are assembled in a byte buffer.
func splitPOSIX(s string, out []string) ([]string, error) {
	n := len(s)
	i := 0
	var buf []byte
	for {
		for i < n && isSep(s[i]) {
			i++
		}
		if i >= n {
			return out, nil
		}
		start := i
		for i < n && !isSep(s[i]) && s[i] != '"' && s[i] != '\'' && s[i] != '\\' {
			i++
		}
		if i == n || isSep(s[i]) {
			out = append(out, s[start:i])
			continue
		}
		buf = append(buf[:0], s[start:i]...)
		for i < n && !isSep(s[i]) {
			switch c := s[i]; c {
			case '\\':
				if i+1 >= n {
					return out, errNoEscaped
				}
				// The escaped character may be multi-byte: its first byte is taken here and its
				// continuation bytes by the default case, which is the same thing.
				buf = append(buf, s[i+1])
				i += 2
			case '\'':
				end := strings.IndexByte(s[i+1:], '\'')
				if end < 0 {
					return out, errNoClosingQuote
				}
				buf = append(buf, s[i+1:i+1+end]...)
				i += end + 2
			case '"':
				i++
				for {
					if i >= n {
						return out, errNoClosingQuote
					}
					c := s[i]
					if c == '"' {
						i++
						break
					}
					if c == '\\' {
						if i+1 >= n {
							return out, errNoEscaped
						}
						if next := s[i+1]; next == '"' || next == '\\' {
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
		out = append(out, string(buf))
	}
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
