package transcript

import "bytes"

// Record is one transcript record as a line-by-line reader sees it: what Scan's usage pass reads,
// plus the tool calls of an assistant line, the tool results and agent links of a user or progress
// line, and whether a user line is a prompt. The effort check (internal/effort) reads it to follow
// the main loop's level from request to request. Byte slices point into the record, or hold an
// unescaped copy; they are valid until the record's buffer is reused.
type Record struct {
	Type       []byte // "assistant", "user", "progress", "system", …
	Timestamp  []byte
	Entrypoint []byte // "cli", "sdk-cli", …
	RequestID  []byte
	Effort     []byte
	AgentID    []byte
	Sidechain  bool
	// IsMeta marks a user record Claude Code injects (a loaded skill's text, a command's output):
	// not a prompt. IsCompactSummary marks the summary that opens a compacted conversation.
	IsMeta, IsCompactSummary bool

	MessageID []byte // message.id
	Model     []byte // message.model
	HasUsage  bool   // message.usage was an object

	Tools []ToolUse // tool_use blocks of message.content, in order
	// Text reports whether a user record's content is a string or holds a text block: a prompt,
	// unless IsMeta. ResultIDs are the tool_use_id of its tool_result blocks.
	Text      bool
	ResultIDs [][]byte
	// Command is the name in the first <command-name>/NAME</command-name> of the message's text (a
	// string content or a text block), without the slash: a slash command (or a skill) the user
	// typed. Only ParseRecord reads it; the raw bytes are kept (names need no unescaping).
	Command []byte
	// ResultAgentID is toolUseResult.agentId: the subagent a Task/Agent tool result comes from.
	ResultAgentID []byte

	// ParentToolUseID and DataAgentID link an agent_progress record to its Task/Agent call.
	ParentToolUseID []byte
	DataType        []byte
	DataAgentID     []byte
	// Copy is the subagent request an agent_progress record repeats (data.message), when Scan counts
	// it: usage with input and output tokens, and a timestamp (lineFields.progressUsable).
	Copy ProgressCopy
}

// ProgressCopy is the request nested in an agent_progress record. Scan attributes it to the
// subagent DataAgentID and deduplicates it against the subagent's own file (Deduper).
type ProgressCopy struct {
	OK        bool // the record holds a usable copy; the fields below are set only then
	MessageID []byte
	RequestID []byte
	Model     []byte
	Effort    []byte
	Timestamp []byte
	Sidechain bool
}

// ToolUse is one tool_use block: its id and name, and the inputs that name what it loads or
// dispatches (Skill: input.skill; Task/Agent: input.subagent_type).
type ToolUse struct {
	ID, Name     []byte
	Skill        []byte
	SubagentType []byte
}

// Contains reports whether rec contains pat, searching from the byte pat[anchor]: choose a byte that
// is rare in transcripts ('k', '_', a capital), and the search is several times faster than
// bytes.Contains, which starts from the '"' of every JSON key (see containsAnchored).
func Contains(rec, pat []byte, anchor int) bool { return containsAnchored(rec, pat, anchor) }

// ParseRecord reads the fields of one record into out, reusing out's slices. It is the audit's
// reader (parseLine, which skips what it does not need without building values) with the extra
// fields filled in; an error means the record is not usable JSON, or has a field the audit reads
// with the wrong type (the audit skips such a line too).
func ParseRecord(b []byte, out *Record) error {
	out.reset()
	var lf lineFields
	if err := parseLineWith(b, &lf, out); err != nil {
		return err
	}
	out.fill(&lf)
	return nil
}

// reset empties r, keeping its slices' arrays.
func (r *Record) reset() {
	tools, results := r.Tools[:0], r.ResultIDs[:0]
	*r = Record{Tools: tools, ResultIDs: results}
}

// fill sets the fields of out that the audit's reader read into lf (the parse that filled out's own).
func (out *Record) fill(lf *lineFields) {
	m := &lf.Message
	out.Type, out.Timestamp, out.RequestID, out.Effort, out.AgentID = lf.Type, lf.Timestamp, lf.RequestID, lf.Effort, lf.AgentID
	out.Sidechain, out.DataType, out.DataAgentID = lf.Sidechain, lf.DataType, lf.DataAgentID
	out.MessageID, out.Model, out.HasUsage = m.ID, m.Model, m.HasUsage
	if lf.progressUsable() {
		p := &lf.Progress
		pm := &p.Message
		out.Copy = ProgressCopy{OK: true, MessageID: pm.ID, RequestID: p.RequestID, Model: pm.Model, Effort: p.Effort,
			Timestamp: p.Timestamp, Sidechain: p.Sidechain}
	}
}

// recordField reads a top-level field only ParseRecord needs; it reports whether k was one.
func (s *scanner) recordField(k []byte, out *Record) bool {
	switch string(k) {
	case "entrypoint":
		out.Entrypoint = s.looseString()
	case "isMeta":
		out.IsMeta = s.looseBool()
	case "isCompactSummary":
		out.IsCompactSummary = s.looseBool()
	case "parentToolUseID":
		out.ParentToolUseID = s.looseString()
	case "toolUseResult":
		if s.peek() != '{' {
			s.skip()
			return true
		}
		s.object(func(k []byte) {
			if string(k) == "agentId" {
				out.ResultAgentID = s.looseString()
				return
			}
			s.skip()
		})
	default:
		return false
	}
	return true
}

// looseBool reads a bool; any other value reads as false.
func (s *scanner) looseBool() bool {
	switch s.peek() {
	case 't':
		s.literal("true")
		return s.err == nil
	case 'f':
		s.literal("false")
	default:
		s.skip()
	}
	return false
}

// toolField reads one field of a content block that ParseRecord keeps: a tool_use's id, name and
// the inputs that name what it loads or dispatches, a tool_result's tool_use_id.
func (s *scanner) toolField(k []byte, t *ToolUse, resultID *[]byte) {
	switch string(k) {
	case "id":
		t.ID = s.looseString()
	case "name":
		t.Name = s.looseString()
	case "tool_use_id":
		*resultID = s.looseString()
	case "input":
		if s.peek() != '{' {
			s.skip()
			return
		}
		s.object(func(k []byte) {
			switch string(k) {
			case "skill":
				t.Skill = s.looseString()
			case "subagent_type":
				t.SubagentType = s.looseString()
			default:
				s.skip()
			}
		})
	}
}

var (
	markCommand    = []byte("<command-name>")
	markCommandEnd = []byte("</command-name>")
)

// command keeps the first slash command named in text.
func (r *Record) command(text []byte) {
	if r.Command != nil {
		return
	}
	i := bytes.Index(text, markCommand)
	if i < 0 {
		return
	}
	text = text[i+len(markCommand):]
	j := bytes.Index(text, markCommandEnd)
	if j < 0 {
		return
	}
	r.Command = bytes.TrimPrefix(bytes.TrimSpace(text[:j]), []byte("/"))
}

// block records a content block of type typ.
func (r *Record) block(typ []byte, t ToolUse, resultID []byte) {
	switch string(typ) {
	case "tool_use":
		r.Tools = append(r.Tools, t)
	case "tool_result":
		r.ResultIDs = append(r.ResultIDs, resultID)
	case "text":
		r.Text = true
	}
}

// fillUsage sets the token counts and the thinking of q from merged usage u and the characters of
// thinking text of the kept copy.
func fillUsage(q *Request, u *usageFields, chars int64) {
	q.Speed = u.Speed
	q.RecordedCostUSD, q.HasRecordedCost = u.Cost, u.HasCost
	q.InputTokens, q.OutputTokens, q.CacheReadTokens = u.Input, u.Output, u.CacheRead
	q.CacheCreationTokens = u.cacheWrite()
	if u.HasSplit {
		q.CacheCreation5m, q.CacheCreation1h = u.Cache5m, u.Cache1h
	} else {
		q.CacheCreation5m = u.CacheCreation
	}
	switch {
	case u.HasThinking:
		q.ThinkingTokens, q.ThinkingSrc = u.Thinking, ThinkingExact
	case chars > 0:
		q.ThinkingTokens, q.ThinkingSrc = uint64((chars+3)/4), ThinkingEstimated
	default:
		q.ThinkingTokens, q.ThinkingSrc = 0, ThinkingUnknown
	}
}
