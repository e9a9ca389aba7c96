package scorer

import (
	"encoding/binary"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// This file reproduces the parts of Python's str and re semantics that the reference scorer depends on.
// Go's RE2 differs on every one of them (docs/decisions.md#scorer), so the scorer does not use regexp at all:
// its patterns are matched by hand against the text views built here, which is also what makes it fast.
//
//   Python          here
//   \w  (str)       isWord: categories L* and N* plus '_', minus Unicode 15 additions (= str.isalnum() or
//                   '_'; compared with CPython 3.11 for every code point). Combining marks (Mn/Mc) are not.
//   \d              isDigit: category Nd (any script's decimal digits, e.g. full-width ５), same exception.
//   \s              isSpace: str.isspace(), which also covers VT, FS..US (0x1c-0x1f), NEL and NBSP.
//   \b              wordBoundary: isWord differs on the two sides (string ends count as non-word).
//   str.lower()     pyLower: full mapping, so İ becomes "i" + U+0307; Σ becomes ς in final position.
//   re.IGNORECASE   fold: simple lowercase plus CPython's extra equivalences ı≡i and ſ≡s (İ≡i and K≡k
//                   already follow from the simple lowercase).
// Go's unicode tables are Unicode 15.0; CPython 3.11 uses 14.0. The letters and digits new in 15.0 are
// unassigned in Python, so neither \w nor \d: pythonUnassigned takes them out. Lowercasing and \s do not
// differ (compared for every code point).

// asciiWord marks the ASCII word characters [A-Za-z0-9_].
var asciiWord = func() (t [utf8.RuneSelf]bool) {
	for c := 0; c < utf8.RuneSelf; c++ {
		t[c] = c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
	}
	return t
}()

// isWord reports whether r is a Python \w character.
func isWord(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiWord[r]
	}
	return (unicode.IsLetter(r) || unicode.IsNumber(r)) && !newerThanPython(r)
}

// isDigit reports whether r is a Python \d character (Unicode category Nd).
func isDigit(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= '0' && r <= '9'
	}
	return unicode.Is(unicode.Nd, r) && !newerThanPython(r)
}

// goUnicodeVersion is the Unicode version of Go's tables that pythonUnassigned was computed against; a
// test fails when the toolchain's tables change, because then the list must be computed again.
const goUnicodeVersion = "15.0.0"

// pythonUnassigned holds the letters and numbers (Go's Unicode 15.0) that CPython 3.11's Unicode 14.0
// does not assign: every code point where str.isalnum() is false but unicode.IsLetter/IsNumber is true.
var pythonUnassigned = &unicode.RangeTable{R32: []unicode.Range32{
	{Lo: 0x1123f, Hi: 0x11240, Stride: 1}, // Khojki
	{Lo: 0x11f02, Hi: 0x11f02, Stride: 1}, // Kawi
	{Lo: 0x11f04, Hi: 0x11f10, Stride: 1},
	{Lo: 0x11f12, Hi: 0x11f33, Stride: 1},
	{Lo: 0x11f50, Hi: 0x11f59, Stride: 1}, // Kawi digits
	{Lo: 0x1342f, Hi: 0x1342f, Stride: 1}, // Egyptian hieroglyphs
	{Lo: 0x13441, Hi: 0x13446, Stride: 1},
	{Lo: 0x1b132, Hi: 0x1b132, Stride: 1}, // small kana
	{Lo: 0x1b155, Hi: 0x1b155, Stride: 1},
	{Lo: 0x1d2c0, Hi: 0x1d2d3, Stride: 1}, // Kaktovik numerals
	{Lo: 0x1df25, Hi: 0x1df2a, Stride: 1}, // Latin Extended-G
	{Lo: 0x1e030, Hi: 0x1e06d, Stride: 1}, // Cyrillic Extended-D
	{Lo: 0x1e4d0, Hi: 0x1e4eb, Stride: 1}, // Nag Mundari
	{Lo: 0x1e4f0, Hi: 0x1e4f9, Stride: 1}, // Nag Mundari digits
	{Lo: 0x2b739, Hi: 0x2b739, Stride: 1}, // CJK Extension B
	{Lo: 0x31350, Hi: 0x323af, Stride: 1}, // CJK Extension H
}}

// newerThanPython reports whether r is a letter or number only in Go's newer Unicode tables.
func newerThanPython(r rune) bool {
	return r >= 0x1123f && unicode.Is(pythonUnassigned, r)
}

// isSpace reports whether r is a Python \s character (str.isspace). Go's unicode.IsSpace lacks 0x1c-0x1f.
func isSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, ' ',
		0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// wordAt reports whether the rune starting at byte i of s is a word character (false at the end).
func wordAt(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	if c := s[i]; c < utf8.RuneSelf {
		return asciiWord[c]
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return isWord(r)
}

// wordBefore reports whether the rune ending at byte i of s is a word character (false at the start).
func wordBefore(s string, i int) bool {
	if i <= 0 {
		return false
	}
	if c := s[i-1]; c < utf8.RuneSelf {
		return asciiWord[c]
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return isWord(r)
}

// wordEnd returns the end of the run of word characters starting at byte i.
func wordEnd(s string, i int) int {
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if !asciiWord[c] {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isWord(r) {
			break
		}
		i += n
	}
	return i
}

// spacesEnd returns the end of the run of Python whitespace starting at byte i (i itself when none).
func spacesEnd(s string, i int) int {
	for i < len(s) {
		r, n := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		if !isSpace(r) {
			break
		}
		i += n
	}
	return i
}

// digitsEnd returns the end of the run of \d characters starting at byte i and how many runes it holds.
func digitsEnd(s string, i int) (end, count int) {
	for i < len(s) {
		r, n := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		if !isDigit(r) {
			break
		}
		i += n
		count++
	}
	return i, count
}

// isASCII reports whether s has only ASCII bytes; then every view of it is plain ASCII lowercase.
func isASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if load64(s, i)&highBits != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// The ASCII lowercasing below works on 8 bytes at a time (SWAR): prompts are mostly ASCII, and this is
// the one pass over the whole text that every prompt pays.
const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// load64 reads s[i:i+8] as a little-endian word (the compiler turns this into one load).
func load64(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// upperBits has the high bit of every byte of the ASCII word x that is in 'A'..'Z'.
func upperBits(x uint64) uint64 {
	geA := x + (0x80-'A')*lowBits   // high bit set where byte >= 'A' (no carries: bytes are < 0x80)
	gtZ := x + (0x80-'Z'-1)*lowBits // high bit set where byte > 'Z'
	return geA &^ gtZ & highBits
}

// asciiLower lowercases an ASCII string, returning s itself when it has no capitals.
func asciiLower(s string) string {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if upperBits(load64(s, i)) != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			break
		}
	}
	if i >= len(s) {
		return s
	}
	b := []byte(s)
	j := i &^ 7
	for ; j+8 <= len(b); j += 8 {
		x := binary.LittleEndian.Uint64(b[j:])
		binary.LittleEndian.PutUint64(b[j:], x|upperBits(x)>>2) // 0x80 >> 2 is the 0x20 case bit
	}
	for ; j < len(b); j++ {
		if c := b[j]; c >= 'A' && c <= 'Z' {
			b[j] = c + 'a' - 'A'
		}
	}
	// b is never written again, so it can become the string without a second copy (as strings.Builder
	// does); long prompts are 10-20 kB.
	return unsafe.String(unsafe.SliceData(b), len(b))
}

const (
	capitalIWithDot = 'İ' // U+0130: Python lower() gives "i" + U+0307
	dotlessI        = 'ı' // U+0131: IGNORECASE-equivalent to i
	longS           = 'ſ' // U+017F: IGNORECASE-equivalent to s
	capitalSigma    = 'Σ'
)

// fold maps a rune to the representative that Python's IGNORECASE compares: the simple lowercase, with
// ı and ſ joined to i and s (CPython's sre _equivalences). It keeps word-ness, so boundaries computed on a
// folded view are the boundaries of the text.
func fold(r rune) rune {
	switch r {
	case dotlessI:
		return 'i'
	case longS:
		return 's'
	}
	return unicode.ToLower(r)
}

// views are the normalised copies of a prompt that the reference patterns run on.
type views struct {
	// lowerFold is text.lower() as IGNORECASE sees it: most signal patterns.
	lowerFold string
	// lower is text.lower() exactly: the layer terms, matched without IGNORECASE.
	lower string
	// origFold is the original text as IGNORECASE sees it: overrides, natural bumps, line refs, new-nouns.
	origFold string
	// origAt maps a byte offset of origFold (at a rune start, or len) to the original text; nil when the
	// offsets are the same (ASCII text).
	origAt []int32
}

func makeViews(text string) views {
	if isASCII(text) {
		l := asciiLower(text)
		return views{lowerFold: l, lower: l, origFold: l}
	}
	var lf, lo, of strings.Builder
	lf.Grow(len(text) + 8)
	lo.Grow(len(text) + 8)
	of.Grow(len(text) + 8)
	at := make([]int32, 0, len(text)+1)
	for i, r := range text {
		if r == capitalIWithDot {
			lf.WriteString("i\u0307")
			lo.WriteString("i\u0307")
		} else {
			lf.WriteRune(fold(r))
			lo.WriteRune(unicode.ToLower(r))
		}
		f := fold(r)
		for n := utf8.RuneLen(f); n > 0; n-- {
			at = append(at, int32(i))
		}
		of.WriteRune(f)
	}
	at = append(at, int32(len(text)))
	return views{lowerFold: lf.String(), lower: lo.String(), origFold: of.String(), origAt: at}
}

// original returns the original text of origFold[i:j].
func (v *views) original(text string, i, j int) string {
	if v.origAt == nil {
		return text[i:j]
	}
	return text[v.origAt[i]:v.origAt[j]]
}

// pyLower is Python's str.lower(): the full lowercase mapping (İ → i + U+0307) and the Final_Sigma rule
// for Σ. It is used where the reference lowercases a string it then compares (new-nouns, file paths).
func pyLower(s string) string {
	if isASCII(s) {
		return asciiLower(s)
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i, r := range s {
		switch r {
		case capitalIWithDot:
			b.WriteString("i\u0307")
		case capitalSigma:
			if finalSigma(s, i) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma implements Unicode's Final_Sigma condition as CPython does: a cased letter before Σ (skipping
// case-ignorable characters) and none after it.
func finalSigma(s string, i int) bool {
	j := i
	before := false
	for j > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:j])
		j -= n
		if !caseIgnorable(r) {
			before = cased(r)
			break
		}
	}
	if !before {
		return false
	}
	for j = i + utf8.RuneLen(capitalSigma); j < len(s); {
		r, n := utf8.DecodeRuneInString(s[j:])
		j += n
		if !caseIgnorable(r) {
			return !cased(r)
		}
	}
	return true
}

// cased is the Unicode Cased property: Lu, Ll, Lt, Other_Lowercase, Other_Uppercase.
func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

// caseIgnorable is the Unicode Case_Ignorable property: Mn, Me, Cf, Lm, Sk and the Word_Break classes
// MidLetter, MidNumLet and Single_Quote (listed by hand: Go has no Word_Break table).
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', 0xb7, 0x387, 0x55f, 0x5f4, 0x2018, 0x2019, 0x2024, 0x2027,
		0xfe13, 0xfe52, 0xfe55, 0xff07, 0xff0e, 0xff1a:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
