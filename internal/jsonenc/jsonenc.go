// Package jsonenc appends JSON strings and numbers exactly as encoding/json writes them (with
// SetEscapeHTML(false)), for the hand-written encoders of the hot paths (`tune trace --format jsonl`,
// `--json`): reflection over every task and entry was half the CPU of a streamed trace
// (docs/decisions.md#streaming-reads). No allowed dependency offers a faster encoder, and the output
// must stay byte-identical to encoding/json's, which differential tests and a fuzz target check.
package jsonenc

import (
	"math"
	"strconv"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// String appends s as a JSON string: '"' and '\\' escaped, control characters as \b \f \n \r \t or
// \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped; '<', '>' and '&' kept.
func String(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while none of them needs a look (most of a trace's text), then a
		// byte at a time up to the one that does (at most seven bytes on).
		for len(s)-i >= 8 && plainWord(word(s[i:i+8])) {
			i += 8
		}
		for i < len(s) && plainByte[s[i]] {
			i++
		}
		if i >= len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plainByte says which bytes are written as they are: ASCII from 0x20 on but '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// word is the 8 bytes of s as a little-endian word: one load, no bounds checks (len(s) is 8).
func word(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// plainWord reports whether the 8 bytes of x are all ASCII, none a control character, '"' or '\\'
// (with the bit tricks of "Bit Twiddling Hacks": a byte below n, a zero byte).
func plainWord(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	look := x | (x - ones*0x20) | (quote-ones)&^quote | (backslash-ones)&^backslash
	return look&highs == 0
}

// Float appends a finite float64 as encoding/json does (the shortest representation, 'f' format
// between 1e-6 and 1e21, else 'e' with a one-digit negative exponent unpadded). NaN and infinities,
// which encoding/json refuses, are written as null; the trace reader never produces them.
func Float(dst []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(dst, "null"...)
	}
	abs := math.Abs(f)
	// The losses of a trace are short decimals (0.4, -0.125): when f is the double nearest to n/10⁶
	// for an integer n of at most 15 digits, that decimal is its shortest form (two decimals of at
	// most 15 digits never round to the same double), written without strconv's shortest search.
	if abs >= 1e-6 && abs < 1e9 {
		if m := f * 1e6; m == math.Trunc(m) && m/1e6 == f {
			return appendMicros(dst, int64(m))
		}
	}
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// appendMicros appends n/10⁶ in 'f' format, the fraction without trailing zeros (n is not 0).
func appendMicros(dst []byte, n int64) []byte {
	if n < 0 {
		dst = append(dst, '-')
		n = -n
	}
	dst = strconv.AppendInt(dst, n/1e6, 10)
	frac := n % 1e6
	if frac == 0 {
		return dst
	}
	digits := 6
	for frac%10 == 0 {
		frac /= 10
		digits--
	}
	dst = append(dst, '.')
	for ; digits > 0; digits-- {
		dst = append(dst, '0')
	}
	for i := len(dst) - 1; frac > 0; i-- {
		dst[i] = byte('0' + frac%10)
		frac /= 10
	}
	return dst
}

// Int appends an integer.
func Int(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// Bool appends true or false.
func Bool(dst []byte, b bool) []byte {
	if b {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}
