package traceparse

import (
	"encoding/json"
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/ldd-tools/tune/internal/jsonenc"
	"github.com/ldd-tools/tune/internal/redact"
)

// Fields are the key=value pairs of one line, each key once (a later duplicate's value wins), in the
// order their keys first appear. It replaces a map[string]string: a line has a handful of fields,
// so a scan finds one as fast as a hash, and the pairs cost no allocation of their own. Every key and
// value is a slice of one string per line (the line, then the unquoted text of its quoted tokens,
// then any synthesised keys), located by offsets that hold no pointers, so the garbage collector
// never scans them. The zero value has no fields.
type Fields struct {
	text string
	pos  []fieldPos
}

// fieldPos locates one key and its value in Fields.text. uint32 keeps a field at 16 bytes; lines
// are limited to maxLineBytes so the offsets always fit.
type fieldPos struct{ keyStart, keyEnd, valStart, valEnd uint32 }

// FieldsFrom returns the pairs of m, keys in sorted order (for tests and hand-built entries).
func FieldsFrom(m map[string]string) Fields {
	keys := slices.Sorted(maps.Keys(m))
	var text strings.Builder
	pos := make([]fieldPos, 0, len(keys))
	for _, k := range keys {
		p := fieldPos{keyStart: uint32(text.Len())}
		text.WriteString(k)
		p.keyEnd, p.valStart = uint32(text.Len()), uint32(text.Len())
		text.WriteString(m[k])
		p.valEnd = uint32(text.Len())
		pos = append(pos, p)
	}
	if len(pos) == 0 {
		pos = nil
	}
	return Fields{text: text.String(), pos: pos}
}

// Len is the number of fields.
func (f Fields) Len() int { return len(f.pos) }

// At returns the i-th field, 0 <= i < Len(), both redacted (see shown and shownKey).
func (f Fields) At(i int) (key, value string) {
	p := f.pos[i]
	return shownKey(f.text[p.keyStart:p.keyEnd]), shown(f.text[p.valStart:p.valEnd])
}

// shownKey is a key as readers get it: a word of lower-case letters and underscores (every key of the
// format, Δloss included) is no secret and is passed as it is, saving a redaction per field; anything
// else (a pasted key used as a key) is redacted.
func shownKey(key string) string {
	for i := 0; i < len(key); i++ {
		if c := key[i]; !(c >= 'a' && c <= 'z' || c == '_' || c >= 0x80) {
			return redact.String(key)
		}
	}
	return key
}

// shown is a value as every reader of the fields gets it: redacted, whatever its key. Free text (task,
// action, reason) is where a pasted key usually sits, but cmd=, files= and unknown keys carried them out
// verbatim in trace --json, JSONL and Parquet (docs/decisions.md#hostile-files-issue-25); redact's
// prefilters keep a level or a number cheap.
func shown(value string) string { return redact.String(value) }

func (f Fields) index(key string) int {
	for i, p := range f.pos {
		if f.text[p.keyStart:p.keyEnd] == key {
			return i
		}
	}
	return -1
}

// Get returns the value of key and whether the line has it.
func (f Fields) Get(key string) (string, bool) {
	if i := f.index(key); i >= 0 {
		p := f.pos[i]
		return shown(f.text[p.valStart:p.valEnd]), true
	}
	return "", false
}

// Value returns the value of key, "" when the line does not have it (as indexing a map would).
func (f Fields) Value(key string) string {
	v, _ := f.Get(key)
	return v
}

// All yields the fields in order.
func (f Fields) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for i := range f.pos {
			if !yield(f.At(i)) {
				return
			}
		}
	}
}

// Map returns the fields as a new map (never nil).
func (f Fields) Map() map[string]string {
	m := make(map[string]string, len(f.pos))
	for k, v := range f.All() {
		m[k] = v
	}
	return m
}

// MarshalJSON writes the object a map[string]string with the same pairs gives (see AppendJSON).
func (f Fields) MarshalJSON() ([]byte, error) { return f.AppendJSON(nil), nil }

// AppendJSON appends the object encoding/json writes for a map[string]string with the same pairs:
// keys sorted, strings escaped as encoding/json does without HTML escaping (an encoder that escapes
// HTML applies that to this output itself, exactly as for a map).
func (f Fields) AppendJSON(dst []byte) []byte {
	var small [manyFields]int
	order := small[:0]
	if len(f.pos) > manyFields {
		order = make([]int, 0, len(f.pos))
	}
	for i := range f.pos {
		order = append(order, i)
	}
	key := func(i int) string { p := f.pos[i]; return f.text[p.keyStart:p.keyEnd] }
	if len(order) <= manyFields { // insertion sort: a line has a handful of fields
		for i := 1; i < len(order); i++ {
			for j := i; j > 0 && key(order[j]) < key(order[j-1]); j-- {
				order[j], order[j-1] = order[j-1], order[j]
			}
		}
	} else {
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(key(a), key(b)) })
	}
	dst = append(dst, '{')
	for n, i := range order {
		if n > 0 {
			dst = append(dst, ',')
		}
		k, v := f.At(i)
		dst = jsonenc.String(dst, k)
		dst = append(dst, ':')
		dst = jsonenc.String(dst, v)
	}
	return append(dst, '}')
}

// UnmarshalJSON reads a JSON object of strings (null reads as no fields).
func (f *Fields) UnmarshalJSON(data []byte) error {
	var m map[string]string
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*f = FieldsFrom(m)
	return nil
}
