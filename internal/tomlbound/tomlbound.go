// Package tomlbound decodes TOML that a pull request or a user can write (tune.toml, weights versions,
// fixtures, saved report inputs) only after a cheap scan has bounded its nesting.
//
// BurntSushi/toml (v1.6.0) spends memory and time with the square of the nesting: for every level of an
// inline table (`y = {a={a={…}}}`) or every part of a dotted key (`a.a.a….b = 1`) it copies the whole key
// path, so 16 KB of nested tables allocate 1.8 GB and 4 KB of dotted key 164 MB; it has no option to
// limit this. pelletier/go-toml/v2 (v2.4.3) stays linear and stops at 10,000 levels, but moving every
// decoder to another library's metadata (Undecoded, IsDefined) is a larger change than this scan: a
// hand-written pass over the bytes, one state machine, that never allocates.
// See docs/decisions.md#hostile-files-issue-25.
package tomlbound

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// MaxDepth is the deepest nesting of arrays and inline tables accepted; tune's own files nest at most 3
// deep (an array of inline tables inside a table).
const MaxDepth = 16

// MaxKeyParts is the most parts one key may have (a.b.c is 3): tune's keys have at most 3.
const MaxKeyParts = 16

// DepthError refuses a document nested deeper than the limits, before it is parsed.
type DepthError struct {
	Line  int
	What  string // "arrays and inline tables nested 17 deep", "a key of 17 dotted parts"
	Limit int
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("line %d: %s (at most %d): refused before parsing, to keep memory bounded", e.Line, e.What, e.Limit)
}

// Decode is toml.Decode of data into v after Check.
func Decode(data []byte, v any) (toml.MetaData, error) {
	if err := Check(data); err != nil {
		return toml.MetaData{}, err
	}
	md, err := toml.Decode(string(data), v)
	return md, tableMismatch(err)
}

// tableMismatch words BurntSushi/toml's "type mismatch for <Go type>: expected table but found int64"
// (a table key given a value: `evolve = 3`) in the file's terms: the Go type named the decoder's struct
// field by field, which says nothing to a person editing tune.toml (the review of the pull-request loop).
func tableMismatch(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	m := mismatchPrefix.FindStringSubmatch(msg)
	i := strings.LastIndex(msg, ": expected table but found ")
	if m == nil || i < len(m[0]) {
		return err
	}
	found := msg[i+len(": expected table but found "):]
	switch {
	case strings.HasPrefix(found, "int"), strings.HasPrefix(found, "float"):
		found = "a number"
	case found == "string":
		found = "a string"
	case found == "bool":
		found = "a boolean"
	case strings.HasPrefix(found, "[]"):
		found = "an array"
	case strings.HasPrefix(found, "time."):
		found = "a date"
	}
	return fmt.Errorf("%s%q must be a table ([%s] with its keys on the lines below it), not %s", m[1], m[2], m[2], found)
}

// mismatchPrefix is the position BurntSushi/toml puts before a type mismatch: the line and the key.
var mismatchPrefix = regexp.MustCompile(`^(toml: (?:line [0-9]+ )?\(last key "([^"]*)"\): )type mismatch for `)

// Check scans data for nesting deeper than MaxDepth and keys of more than MaxKeyParts parts. It follows
// TOML's four string forms and comments, so brackets, braces and dots inside them do not count; it is
// conservative elsewhere: every '.' between two separators (=, comma, brackets, braces, newline) counts
// as a key part, so it may refuse what TOML would parse, never the other way around (a float has one dot).
func Check(data []byte) error {
	depth, parts, line := 0, 1, 1
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch c {
		case '\n':
			line++
			parts = 1
		case '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			i-- // the newline is counted by the loop
		case '"', '\'':
			end, lines := skipString(data, i)
			line += lines
			i = end
		case '[', '{':
			depth++
			parts = 1
			if depth > MaxDepth {
				return &DepthError{Line: line, What: fmt.Sprintf("arrays and inline tables nested %d deep", depth), Limit: MaxDepth}
			}
		case ']', '}':
			depth--
			parts = 1
		case '=', ',':
			parts = 1
		case '.':
			parts++
			if parts > MaxKeyParts {
				return &DepthError{Line: line, What: fmt.Sprintf("a key of %d dotted parts", parts), Limit: MaxKeyParts}
			}
		}
	}
	return nil
}

// skipString returns the index of the last byte of the string that starts at data[i] (a quote) and the
// newlines inside it. An unterminated string runs to the end (the parser then reports it).
func skipString(data []byte, i int) (end, lines int) {
	q := data[i]
	multi := i+2 < len(data) && data[i+1] == q && data[i+2] == q
	j := i + 1
	if multi {
		j = i + 3
	}
	for ; j < len(data); j++ {
		c := data[j]
		switch {
		case c == '\\' && q == '"':
			if j+1 < len(data) && data[j+1] == '\n' {
				lines++
			}
			j++
		case c == '\n':
			if !multi {
				return j - 1, lines // a single-line string cannot span lines: let the newline be seen
			}
			lines++
		case c == q && !multi:
			return j, lines
		case c == q && j+2 < len(data) && data[j+1] == q && data[j+2] == q:
			// up to two more quotes may close a multi-line string ("""a""""" is `a""`)
			k := j + 3
			for n := 0; n < 2 && k < len(data) && data[k] == q; n++ {
				k++
			}
			return k - 1, lines
		}
	}
	return len(data) - 1, lines
}
