package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
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

// MaxTokens is the largest token count one request may carry (10^10, thousands of times the largest
// context window). A larger count drops the line as invalid-usage (counted and warned like every skip),
// so totals over any realistic number of lines cannot wrap uint64 (two 2^63-1 counts summed to 28) and
// no cost turns negative (docs/decisions.md#hostile-files-issue-25).
const MaxTokens = 10_000_000_000

// errType marks a field ccusage also reads with a value of the wrong type (ccusage then drops the line).
var errType = errors.New("field of the wrong type")

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
	// command is the text field's slash command, kept until the block's type is known: only a text
	// block names one (the keys may come in any order; the fuzzer found a block without a type).
	var command []byte
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
				command = s.commandText()
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
		if string(typ) == "text" {
			m.rec.command(command)
		}
	}
}
