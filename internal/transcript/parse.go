package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// usageFields is one usage object, as recorded on a line.
type usageFields struct {
	Input, Output       uint64
	HasInput, HasOutput bool
	CacheCreation       uint64 // the flat cache_creation_input_tokens
	CacheRead           uint64
	HasSplit            bool // a cache_creation {ephemeral_5m…, ephemeral_1h…} object was present
	Cache5m, Cache1h    uint64
	Thinking            uint64 // output_tokens_details.thinking_tokens
	HasThinking         bool
	Speed               string
	// Cost is the line's recorded costUSD (Claude Code ≈1.0.x wrote one; see Request.RecordedCostUSD).
	// It sits with the usage because ccusage takes it from the line whose usage it keeps.
	Cost    float64
	HasCost bool
}

// cacheWrite is the cache-write total as ccusage counts it: the TTL split replaces the flat field
// when the split object is present.
func (u *usageFields) cacheWrite() uint64 {
	if u.HasSplit {
		return u.Cache5m + u.Cache1h
	}
	return u.CacheCreation
}

func (u *usageFields) total() uint64 {
	return u.Input + u.Output + u.cacheWrite() + u.CacheRead
}

// messageFields is the part of an assistant message the audit needs.
type messageFields struct {
	ID, Model       []byte
	Speed           []byte // usage.speed
	HasID, HasModel bool
	HasUsage        bool
	Usage           usageFields
	ThinkingBlocks  int   // thinking and redacted_thinking blocks on this line
	ThinkingChars   int64 // characters of thinking text on this line
	// rec, when set, also receives the content's tool calls, tool results and text (ParseRecord).
	rec *Record
}

// lineFields is what the audit reads from one record. Progress holds the nested record of an
// agent_progress line (data.message). Byte slices point into the record (or hold an unescaped copy).
type lineFields struct {
	Type, Subtype []byte
	Timestamp     []byte
	RequestID     []byte
	HasRequestID  bool
	Version       []byte
	HasVersion    bool
	SessionID     []byte
	HasSessionID  bool
	Effort        []byte
	AgentID       []byte
	Sidechain     bool
	DurationMs    float64
	HasDuration   bool
	HasMessage    bool
	Message       messageFields
	// NullField: one of the fields ccusage refuses to see null (id, model, speed, version, cwd,
	// sessionId, requestId, costUSD, isApiErrorMessage, cache_*_input_tokens) is null.
	NullField bool
	// UsageKey and NullKey are ccusage's byte-level filters (`"usage":{` present; hasNullField),
	// decided while parsing when asked (parseLineOpts).
	UsageKey, NullKey bool
	Cost              float64 // costUSD
	HasCost           bool

	DataType    []byte
	DataAgentID []byte
	HasProgress bool // data.message was an object
	Progress    progressFields
}

type progressFields struct {
	Type         []byte
	Timestamp    []byte
	RequestID    []byte
	HasRequestID bool
	Sidechain    bool
	Effort       []byte
	HasMessage   bool
	Message      messageFields
	Cost         float64 // data.message.costUSD
	HasCost      bool
}

// errTruncated marks input that ended inside a value.
var errTruncated = errors.New("unexpected end of JSON input")

// errSyntax marks invalid JSON.
var errSyntax = errors.New("invalid JSON")

// MaxTokens is the largest token count one request may carry (10^10, thousands of times the largest
// context window). A larger count drops the line as invalid-usage (counted and warned like every skip),
// so totals over any realistic number of lines cannot wrap uint64 (two 2^63-1 counts summed to 28) and
// no cost turns negative (docs/decisions.md#hostile-files-issue-25).
const MaxTokens = 10_000_000_000

// errType marks a field ccusage also reads with a value of the wrong type (ccusage then drops the line).
var errType = errors.New("field of the wrong type")

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

// commandText reads a message text for ParseRecord's slash command: unescaped only when it may name
// one (the letters of "command-name" need no escape; its brackets may be written \u003c…\u003e), so
// the long texts of assistant messages are not copied.
func (s *scanner) commandText() []byte {
	raw := s.rawString()
	if !bytes.Contains(raw, markCommandName) {
		return nil
	}
	if hasEscape(raw) {
		return []byte(s.unescape(raw))
	}
	return raw
}

var markCommandName = []byte("command-name")

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

// keyFilters decides ccusage's two byte-level filters for the key whose raw bytes (between the
// quotes, still escaped) are raw and whose closing quote is just before b[end]. In a record that
// parses, the bytes `"usage":{` and a `"K" : null` of hasNullField can only occur at a key: inside a
// string every quote is escaped, so the byte before it is a backslash, while both patterns need a
// quote after a letter (`usage"`, `K"`). The key text the byte rules see is what follows the last
// quote before the closing one: the opening quote, or an escaped quote inside the key. Records that
// do not parse are judged on their bytes instead (usageRecord).
func (s *scanner) keyFilters(raw []byte, end int) {
	b := s.b
	usage := end+1 < len(b) && b[end] == ':' && b[end+1] == '{'
	null := false
	if !usage {
		j := end
		for j < len(b) && isSpace(b[j]) {
			j++
		}
		if j < len(b) && b[j] == ':' {
			j++
			for j < len(b) && isSpace(b[j]) {
				j++
			}
			null = j+4 <= len(b) && string(b[j:j+4]) == "null"
		}
	}
	if !usage && !null {
		return
	}
	tail := raw
	if k := bytes.LastIndexByte(raw, '"'); k >= 0 {
		tail = raw[k+1:]
	}
	if usage && string(tail) == "usage" {
		s.usageKey = true
	}
	if null && nullableFields[string(tail)] {
		s.nullKey = true
	}
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

// uint reads an unsigned integer the way ccusage (serde u64) does: digits only; a fraction, an
// exponent, a sign or another type is a type error. null reads as absent.
func (s *scanner) uint() (v uint64, present bool) {
	switch c := s.peek(); {
	case c == 'n':
		s.literal("null")
		return 0, false
	case c == '-' || (c >= '0' && c <= '9'):
		num := s.number()
		if s.err != nil {
			return 0, false
		}
		for _, d := range num {
			if d < '0' || d > '9' {
				s.fail(errType)
				return 0, false
			}
			next := v*10 + uint64(d-'0')
			if next/10 != v || next > MaxTokens {
				s.fail(errType) // overflow, or more than any request can hold
				return 0, false
			}
			v = next
		}
		return v, true
	default:
		s.skip()
		if s.err == nil {
			s.fail(errType)
		}
		return 0, false
	}
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

// cost reads a costUSD as ccusage does: null is absent (the null rule has already dropped such a
// line), a number is the cost, anything else is a type error (ccusage drops the line).
func (s *scanner) cost() (float64, bool) {
	if s.nullable().isNull() || s.err != nil {
		return 0, false
	}
	f, ok := s.float()
	if !ok && s.err == nil {
		s.fail(errType)
	}
	return f, ok
}

// optString reads a string that ccusage also reads: null is absent, another type is a type error.
func (s *scanner) optString() ([]byte, bool) {
	if s.isNull() {
		return nil, false
	}
	if s.err != nil {
		return nil, false
	}
	if s.peek() != '"' {
		s.skip()
		if s.err == nil {
			s.fail(errType)
		}
		return nil, false
	}
	return s.str(), true
}

// looseString reads a string that only the audit reads: any other type reads as absent.
func (s *scanner) looseString() []byte {
	if s.peek() != '"' {
		s.skip()
		return nil
	}
	return s.str()
}

// optBool reads a bool that ccusage also reads: null is absent, another type is a type error.
func (s *scanner) optBool() bool {
	switch s.peek() {
	case 't':
		s.literal("true")
		return s.err == nil
	case 'f':
		s.literal("false")
		return false
	case 'n':
		s.literal("null")
		return false
	default:
		s.skip()
		if s.err == nil {
			s.fail(errType)
		}
		return false
	}
}

// parseLine reads the fields of one record. A non-nil error means the record is not usable JSON
// (errSyntax, errTruncated) or a field ccusage needs has the wrong type (errType).
func parseLine(b []byte, out *lineFields) error { return parseLineWith(b, out, nil) }

// parseLineWith is parseLine that also fills rec, when set, with what ParseRecord reads beyond the
// audit's fields.
func parseLineWith(b []byte, out *lineFields, rec *Record) error {
	return parseLineOpts(b, out, rec, false)
}

// parseLineOpts is parseLineWith that, with ccusage set, also decides ccusage's byte-level filters of
// a usage line (lineFields.UsageKey, NullKey) while it parses.
func parseLineOpts(b []byte, out *lineFields, rec *Record, ccusage bool) error {
	*out = lineFields{}
	out.Message.rec = rec
	s := scanner{b: b, ccusage: ccusage}
	s.object(func(k []byte) {
		if rec != nil && s.recordField(k, rec) {
			return
		}
		switch string(k) {
		case "type":
			out.Type = s.looseString()
		case "subtype":
			out.Subtype = s.looseString()
		case "timestamp":
			out.Timestamp, _ = s.optString()
		case "requestId":
			out.RequestID, out.HasRequestID = s.nullable().optString()
		case "version":
			out.Version, out.HasVersion = s.nullable().optString()
		case "sessionId":
			out.SessionID, out.HasSessionID = s.nullable().optString()
		case "cwd":
			s.nullable().skip()
		case "effort":
			out.Effort = s.looseString()
		case "agentId":
			out.AgentID = s.looseString()
		case "isSidechain":
			out.Sidechain = s.optBool()
		case "isApiErrorMessage":
			s.nullable().optBool()
		case "costUSD":
			out.Cost, out.HasCost = s.cost()
		case "durationMs":
			out.DurationMs, out.HasDuration = s.float()
		case "message":
			if s.peek() == '{' {
				out.HasMessage = true
				s.message(&out.Message)
			} else {
				s.skip()
			}
		case "data":
			if s.peek() == '{' {
				s.data(out)
			} else {
				s.skip()
			}
		default:
			s.skip()
		}
	})
	if s.err != nil {
		return s.err
	}
	if s.peek() != 0 {
		return errSyntax // something after the object
	}
	out.NullField = s.null
	out.UsageKey, out.NullKey = s.usageKey, s.nullKey
	return nil
}

func (s *scanner) data(out *lineFields) {
	s.object(func(k []byte) {
		switch string(k) {
		case "type":
			out.DataType = s.looseString()
		case "agentId":
			out.DataAgentID = s.looseString()
		case "message":
			if s.peek() != '{' {
				s.skip()
				return
			}
			out.HasProgress = true
			p := &out.Progress
			s.object(func(k []byte) {
				switch string(k) {
				case "type":
					p.Type = s.looseString()
				case "timestamp":
					p.Timestamp, _ = s.optString()
				case "requestId":
					p.RequestID, p.HasRequestID = s.nullable().optString()
				case "isSidechain":
					p.Sidechain = s.optBool()
				case "costUSD":
					p.Cost, p.HasCost = s.cost()
				case "effort":
					p.Effort = s.looseString()
				case "message":
					if s.peek() == '{' {
						p.HasMessage = true
						s.message(&p.Message)
					} else {
						s.skip()
					}
				default:
					s.skip()
				}
			})
		default:
			s.skip()
		}
	})
}

func (s *scanner) message(m *messageFields) {
	s.object(func(k []byte) {
		switch string(k) {
		case "id":
			m.ID, m.HasID = s.nullable().optString()
		case "model":
			m.Model, m.HasModel = s.nullable().optString()
		case "usage":
			if s.isNull() || s.err != nil {
				return
			}
			m.HasUsage = true
			s.usage(m)
		case "content":
			switch {
			case s.peek() == '[':
				s.array(func() { s.contentBlock(m) })
			case s.peek() == '"' && m.rec != nil:
				m.rec.command(s.commandText())
				m.rec.Text = true
			default:
				s.skip()
			}
		default:
			s.skip()
		}
	})
}

func (s *scanner) usage(m *messageFields) {
	u := &m.Usage
	if s.peek() != '{' {
		s.skip()
		if s.err == nil {
			s.fail(errType)
		}
		return
	}
	s.object(func(k []byte) {
		switch string(k) {
		case "input_tokens":
			u.Input, u.HasInput = s.uint()
		case "output_tokens":
			u.Output, u.HasOutput = s.uint()
		case "cache_creation_input_tokens":
			u.CacheCreation, _ = s.nullable().uint()
		case "cache_read_input_tokens":
			u.CacheRead, _ = s.nullable().uint()
		case "cache_creation":
			if s.isNull() || s.err != nil {
				return
			}
			if s.peek() != '{' {
				s.skip()
				if s.err == nil {
					s.fail(errType)
				}
				return
			}
			u.HasSplit = true
			s.object(func(k []byte) {
				switch string(k) {
				case "ephemeral_5m_input_tokens":
					u.Cache5m, _ = s.uint()
				case "ephemeral_1h_input_tokens":
					u.Cache1h, _ = s.uint()
				default:
					s.skip()
				}
			})
		case "speed":
			m.Speed, _ = s.nullable().optString()
		case "output_tokens_details":
			if s.peek() != '{' {
				s.skip()
				return
			}
			s.object(func(k []byte) {
				if string(k) == "thinking_tokens" && s.peek() >= '0' && s.peek() <= '9' {
					// Not a ccusage field: a malformed value is ignored rather than dropping the line.
					num := s.number()
					var v uint64
					if err := json.Unmarshal(num, &v); err == nil && v <= MaxTokens {
						u.Thinking, u.HasThinking = v, true
					}
					return
				}
				s.skip()
			})
		default:
			s.skip()
		}
	})
}

func (s *scanner) contentBlock(m *messageFields) {
	if s.peek() != '{' {
		s.skip()
		return
	}
	var typ []byte
	var textRaw []byte
	var hasText bool
	var tool ToolUse    // tool_use fields, read only for ParseRecord
	var resultID []byte // tool_result's tool_use_id, likewise
	s.object(func(k []byte) {
		switch string(k) {
		case "type":
			if s.peek() == '"' {
				typ = s.str()
				return
			}
			s.skip()
		case "thinking":
			if s.peek() == '"' {
				textRaw = s.rawString()
				hasText = true
				return
			}
			s.skip()
		case "text":
			if m.rec != nil && s.peek() == '"' {
				m.rec.command(s.commandText())
				return
			}
			s.skip()
		case "id", "name", "tool_use_id", "input":
			if m.rec == nil {
				s.skip()
				return
			}
			s.toolField(k, &tool, &resultID)
		default:
			s.skip()
		}
	})
	switch string(typ) {
	case "thinking":
		m.ThinkingBlocks++
		if hasText {
			m.ThinkingChars += int64(escapedRuneCount(textRaw))
		}
	case "redacted_thinking":
		m.ThinkingBlocks++
	}
	if m.rec != nil {
		m.rec.block(typ, tool, resultID)
	}
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
