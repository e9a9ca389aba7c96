package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// The JSON scanner the transcript schema (parse.go) is read with: the grammar, strings, keys, numbers
// and skipping. What a field must hold (ccusage's types, the token bound) is the schema's.

// errTruncated marks input that ended inside a value.
var errTruncated = errors.New("unexpected end of JSON input")

// errSyntax marks invalid JSON.
var errSyntax = errors.New("invalid JSON")

// maxDepth bounds nesting, so that adversarial input cannot exhaust the stack.
const maxDepth = 512

// scanner is a minimal JSON reader that visits only the fields the audit needs and skips everything
// else without building values. encoding/json decodes the same records at about 110 MB/s here (it
// validates and scans every byte of every skipped tool input); skipping strings with IndexByte is
// several times faster, and the audit reads a gigabyte. FuzzRecord checks it against encoding/json.
//
// It is deliberately lenient where leniency costs nothing: raw control characters inside strings and
// invalid UTF-8 are accepted. Whenever encoding/json accepts a record, this reader extracts the same
// fields from it.
type scanner struct {
	b     []byte
	i     int
	err   error
	depth int
	null  bool // a field read with nullable() was null
	// ccusage, when set, has key() apply ccusage's two byte-level line filters to every key at any
	// depth, so that a parsed record needs no extra pass over its bytes (see keyFilters).
	ccusage bool
	// usageKey: the bytes `"usage":{` occur in the record (as a key "usage" right before `:{`).
	usageKey bool
	// nullKey: one of nullableFields is followed by null (hasNullField's rule).
	nullKey bool
}

// nullable notes whether the value at the cursor is null (for ccusage's null rule) before it is read.
func (s *scanner) nullable() *scanner {
	if s.peek() == 'n' {
		s.null = true
	}
	return s
}

func (s *scanner) fail(err error) {
	if s.err == nil {
		s.err = err
	}
	s.i = len(s.b)
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// rawString reads a string and returns its bytes between the quotes, still escaped. Whether they
// contain a backslash is the caller's to ask (hasEscape): most strings are skipped, and that second
// pass over them was 30 % of rawString's time on the 1 GB corpus.
func (s *scanner) rawString() (raw []byte) {
	if s.peek() != '"' {
		s.fail(s.endOr(errSyntax))
		return nil
	}
	begin := s.i + 1
	from := begin
	for {
		j := bytes.IndexByte(s.b[from:], '"')
		if j < 0 {
			s.fail(errTruncated)
			return nil
		}
		q := from + j
		// A quote preceded by an odd run of backslashes is escaped.
		n := 0
		for p := q - 1; p >= begin && s.b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			s.i = q + 1
			return s.b[begin:q]
		}
		from = q + 1
	}
}

// endOr returns errTruncated at the end of the input, else err.
func (s *scanner) endOr(err error) error {
	if s.i >= len(s.b) {
		return errTruncated
	}
	return err
}

// str reads a string value and unescapes it. Without escapes the result points into the input.
// Invalid UTF-8 is replaced by U+FFFD, as encoding/json does.
func (s *scanner) str() []byte {
	raw := s.rawString()
	if s.err != nil {
		return nil
	}
	if !hasEscape(raw) && utf8.Valid(raw) {
		return raw
	}
	return []byte(s.unescape(raw))
}

// unescape decodes an escaped string with encoding/json (rare on the fields read as text).
func (s *scanner) unescape(raw []byte) string {
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(quoted, '"')
	quoted = append(quoted, raw...)
	quoted = append(quoted, '"')
	var v string
	if err := json.Unmarshal(quoted, &v); err != nil {
		s.fail(errSyntax)
		return ""
	}
	return v
}

// key reads an object key and the colon after it. Keys without escapes (all the ones the audit reads)
// are returned as they are; escaped keys are decoded.
func (s *scanner) key() []byte {
	raw := s.rawString()
	if s.err != nil {
		return nil
	}
	end := s.i // just after the closing quote
	if s.ccusage {
		s.keyFilters(raw, end)
	}
	if !plainASCII(raw) && (hasEscape(raw) || !utf8.Valid(raw)) {
		raw = []byte(s.unescape(raw))
	}
	if s.peek() != ':' {
		s.fail(s.endOr(errSyntax))
		return nil
	}
	s.i++
	return raw
}

// hasEscape reports whether a raw string body contains an escape.
func hasEscape(raw []byte) bool { return bytes.IndexByte(raw, '\\') >= 0 }

// plainASCII reports whether b is ASCII without a backslash, in one inlined loop: keys are short, and
// calls to utf8.Valid and IndexByte per key showed in the profile.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf || c == '\\' {
			return false
		}
	}
	return true
}

// object calls field for every key of the object at the cursor; field must consume the value.
func (s *scanner) object(field func(key []byte)) {
	if s.peek() != '{' {
		s.fail(s.endOr(errSyntax))
		return
	}
	s.depth++
	if s.depth > maxDepth {
		s.fail(errSyntax)
		return
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		s.depth--
		return
	}
	for s.err == nil {
		k := s.key()
		if s.err != nil {
			return
		}
		field(k)
		if s.err != nil {
			return
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return
		default:
			s.fail(s.endOr(errSyntax))
		}
	}
}

// array calls elem for every element of the array at the cursor; elem must consume the value.
func (s *scanner) array(elem func()) {
	if s.peek() != '[' {
		s.fail(s.endOr(errSyntax))
		return
	}
	s.depth++
	if s.depth > maxDepth {
		s.fail(errSyntax)
		return
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		s.depth--
		return
	}
	for s.err == nil {
		elem()
		if s.err != nil {
			return
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return
		default:
			s.fail(s.endOr(errSyntax))
		}
	}
}

// skip consumes any value.
func (s *scanner) skip() {
	switch s.peek() {
	case '"':
		s.rawString()
	case '{':
		s.object(func([]byte) { s.skip() })
	case '[':
		s.array(s.skip)
	case 't':
		s.literal("true")
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	case 0:
		s.fail(errTruncated)
	default:
		s.number()
	}
}

func (s *scanner) literal(word string) {
	rest := s.b[s.i:]
	if len(rest) < len(word) {
		if bytes.HasPrefix([]byte(word), rest) {
			s.fail(errTruncated)
		} else {
			s.fail(errSyntax)
		}
		return
	}
	if string(rest[:len(word)]) != word {
		s.fail(errSyntax)
		return
	}
	s.i += len(word)
}

// isNull consumes a null literal when one is next.
func (s *scanner) isNull() bool {
	if s.peek() == 'n' {
		s.literal("null")
		return s.err == nil
	}
	return false
}

// number consumes a JSON number and returns its bytes, validating the grammar.
func (s *scanner) number() []byte {
	b, begin := s.b, s.i
	i := s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if digits() == 0 {
		s.i = i
		s.fail(s.endOr(errSyntax))
		return nil
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			s.i = i
			s.fail(s.endOr(errSyntax))
			return nil
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			s.i = i
			s.fail(s.endOr(errSyntax))
			return nil
		}
	}
	s.i = i
	return b[begin:i]
}

// float reads any JSON number; other types read as absent (durationMs is not a ccusage field).
func (s *scanner) float() (float64, bool) {
	c := s.peek()
	if c != '-' && (c < '0' || c > '9') {
		s.skip()
		return 0, false
	}
	num := s.number()
	if s.err != nil {
		return 0, false
	}
	var f float64
	if err := json.Unmarshal(num, &f); err != nil {
		return 0, false
	}
	return f, true
}

// escapedRuneCount counts the characters of a JSON string body without building the string: what
// utf8.RuneCountInString would return on the value encoding/json decodes.
func escapedRuneCount(raw []byte) int {
	n := 0
	for len(raw) > 0 {
		i := bytes.IndexByte(raw, '\\')
		if i < 0 {
			return n + utf8.RuneCount(raw)
		}
		n += utf8.RuneCount(raw[:i])
		raw = raw[i:]
		if len(raw) < 2 {
			return n + 1
		}
		if raw[1] != 'u' {
			n++
			raw = raw[2:]
			continue
		}
		r1, ok := hex4(raw[2:])
		if !ok {
			n++
			raw = raw[2:]
			continue
		}
		raw = raw[6:]
		if utf16.IsSurrogate(r1) && len(raw) >= 6 && raw[0] == '\\' && raw[1] == 'u' {
			if r2, ok := hex4(raw[2:]); ok && utf16.DecodeRune(r1, r2) != utf8.RuneError {
				raw = raw[6:]
			}
		}
		n++
	}
	return n
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
