package effort

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"strings"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/pricing"
	"github.com/ldd-tools/tune/internal/transcript"
)

// Unknown is the level of a request whose transcript records none (Claude Code before ≈2.1.21x): it
// is reported as such, never guessed.
const Unknown = "unknown"

// Shift verdicts (docs/decisions.md#effort-conformance-issue-14).
const (
	VerdictOK         = "ok"
	VerdictLone       = "no-op: lone call"
	VerdictIgnored    = "ignored"
	VerdictUnexpected = "unexpected level"
	// VerdictOverridden: a later pinned Skill call of the same message asked for the level the next
	// request runs at (the last one loaded wins).
	VerdictOverridden = "overridden"
	VerdictUnknown    = "unknown" // the next request records no level, or there is none
)

// ShiftVerdicts are the shift verdicts in the order summaries count them.
var ShiftVerdicts = []string{VerdictOK, VerdictLone, VerdictIgnored, VerdictUnexpected, VerdictOverridden, VerdictUnknown}

// Re-assert verdicts: what follows a nested skill whose pin differs from its orchestrator's.
const (
	ReassertOK         = "re-asserted"     // the orchestrator reloaded its own level
	ReassertSuperseded = "superseded"      // a shifter moved to another level first: an explicit phase
	ReassertMissing    = "not re-asserted" // the turn ended at the nested level
)

// Agent verdicts.
const (
	AgentConformant = "conformant"
	AgentOffPin     = "off its pin"
	AgentInherits   = "inherits"
	AgentUnknown    = "unknown" // no request of the agent records a level, or no census to compare with
)

// Shift is one Skill call of a pinned skill: the level it asks for and what the next request shows.
type Shift struct {
	Session   string `json:"session"`
	MessageID string `json:"message_id"`
	Skill     string `json:"skill"`
	// From is the level of the request that made the call, To the skill's pin, Observed the level of
	// the next request of the same loop (nil: not recorded, or no next request).
	From       *string `json:"from"`
	To         string  `json:"to"`
	Observed   *string `json:"observed"`
	Paired     bool    `json:"paired"`
	TookEffect *bool   `json:"took_effect"`
	Verdict    string  `json:"verdict"`
	AgentID    string  `json:"agent_id,omitempty"` // set for a shift inside a subagent
	Timestamp  string  `json:"timestamp"`
	File       string  `json:"file"`
	Line       int     `json:"line"`
	// ObservedAt is the file:line of the next request, the evidence of Observed.
	ObservedAt string `json:"observed_at,omitempty"`
	Note       string `json:"note,omitempty"`
}

// Reassert is one nested skill loaded by an orchestrator skill in the same turn with a different pin,
// and what followed it (docs/decisions.md#effort-conformance-issue-14): the design asks the
// orchestrator to reload its own level, or the nested level holds for the rest of the turn.
type Reassert struct {
	Session      string `json:"session"`
	Orchestrator string `json:"orchestrator"`
	Level        string `json:"level"` // the orchestrator's pin
	Nested       string `json:"nested"`
	NestedLevel  string `json:"nested_level"`
	Verdict      string `json:"verdict"`
	// By is the Skill call that re-asserted or superseded, ByVerdict its shift verdict (a lone
	// re-assert is a no-op); both empty when the turn ended first.
	By        string `json:"by,omitempty"`
	ByVerdict string `json:"by_verdict,omitempty"`
	// Requests is the main-loop requests after the nested call, up to the re-assert (or the turn's end).
	Requests  int    `json:"requests"`
	MessageID string `json:"message_id"` // of the nested call
	Timestamp string `json:"timestamp"`
	File      string `json:"file"`
	Line      int    `json:"line"`
}

// Run is one subagent run (one agent-<id>.jsonl) against its agent's pin.
type Run struct {
	Session string `json:"session"`
	AgentID string `json:"agent_id"`
	Agent   string `json:"agent"`
	// Source says how the agent type is known: "meta" (agent-<id>.meta.json), "dispatch" (the
	// dispatching Task/Agent call's subagent_type) or "" (not known).
	Source string  `json:"source"`
	Pinned *string `json:"pinned"`
	// Dispatched is the main loop's level on the request that dispatched the run (an unpinned agent
	// inherits it); nil when unknown.
	Dispatched *string        `json:"dispatched"`
	Observed   map[string]int `json:"observed"`
	Verdict    string         `json:"verdict"`
	Note       string         `json:"note,omitempty"`
	Shifts     int            `json:"shifts"` // pinned Skill calls inside the run (the design forbids them)
	// Progress: the run has no file of its own (older builds); its requests are the agent_progress
	// copies in File, the parent's transcript.
	Progress  bool   `json:"progress_copies,omitempty"`
	Timestamp string `json:"timestamp"`
	File      string `json:"file"`
	Line      int    `json:"line"`
}

// Agent is the runs of one agent type.
type Agent struct {
	Agent    string         `json:"agent"`
	Pinned   *string        `json:"pinned"`
	Observed map[string]int `json:"observed"`
	// Conformant: every recorded request ran at the pin (true for an unpinned agent, which inherits by
	// definition); nil when no request records a level or no census was read.
	Conformant *bool  `json:"conformant"`
	Verdict    string `json:"verdict"`
	Runs       int    `json:"runs"`
	// Evidence is the first run off its pin: session, timestamp, file:line.
	Evidence string `json:"evidence,omitempty"`
}

// Stuck is a session whose main-loop level never moves although paired shifts asked it to.
type Stuck struct {
	Session    string `json:"session"`
	Level      string `json:"level"`
	Shifts     int    `json:"shifts"`
	Entrypoint string `json:"entrypoint,omitempty"`
	Reason     string `json:"reason"`
}

// Span is a stretch of consecutive main-loop requests at one level.
type Span struct {
	Level    string `json:"level"`
	Requests int    `json:"requests"`
	From     string `json:"from"` // timestamp of the first request
	To       string `json:"to"`   // timestamp of the last request
	File     string `json:"file"`
	Line     int    `json:"line"` // line of the first request
}

// Timeline is a session's main-loop levels in order.
type Timeline struct {
	Session string `json:"session"`
	Spans   []Span `json:"spans"`
}

// Bucket is the requests, tokens and weighted spend of one level or one phase.
type Bucket struct {
	Key            string  `json:"key"`
	Requests       int     `json:"requests"`
	OutputTokens   uint64  `json:"output_tokens"`
	ThinkingTokens uint64  `json:"thinking_tokens"`
	Spend          float64 `json:"weighted_spend"` // input-token units, audit.BriefWeights
	Share          float64 `json:"share"`          // of the weighted spend of all buckets
	// CostUSD is the cost at the audit's prices (audit.Price), nil when a model has no price.
	CostUSD *float64       `json:"cost_usd"`
	Levels  map[string]int `json:"levels,omitempty"`
	totals  audit.Totals
}

// Input describes what was read.
type Input struct {
	Files    int   `json:"files"`
	Bytes    int64 `json:"bytes"`
	Sessions int   `json:"sessions"`
	Requests int   `json:"requests"`
	// WithEffort is the number of requests whose transcript records a level.
	WithEffort int `json:"with_effort"`
	Skipped    int `json:"skipped"` // records that are not usable JSON
}

// Observed is the transcript half of the report.
type Observed struct {
	Shifts         []Shift    `json:"shifts"`
	Agents         []Agent    `json:"agents"`
	Runs           []Run      `json:"runs"`
	Reasserts      []Reassert `json:"reasserts"`
	SubagentShifts []Shift    `json:"subagent_shifts"`
	Stuck          []Stuck    `json:"stuck_sessions"`
	Sessions       []Timeline `json:"sessions"`
	ByLevel        []Bucket   `json:"by_level"`
	ByPhase        []Bucket   `json:"by_phase"`
	Input          Input      `json:"transcripts"`
	Warnings       []Warning  `json:"-"`
}

// Options tune Observe.
type Options struct {
	// Census gives the pins. Without one, a shift is a Skill call of effort-<level> (the design's
	// shifters), and agents cannot be checked against pins.
	Census *Census
	// Scan is the transcript reader's options: the audit's (app.ScanOptions), so that tune effort
	// counts the requests tune audit counts. Observe sets Strict, Visit, Check and OnRequest; Attach
	// does not read it.
	Scan transcript.Options
	// Prices prices the requests as the audit does (nil: the embedded table, cost mode auto).
	Prices *pricing.Table
	// Open opens a subagent's agent-<id>.meta.json sidecar (os.Open in the command).
	Open func(name string) (io.ReadCloser, error)
}

// Observe reads the transcript files (in the order given; transcript.Discover sorts them, so the
// files of a session are consecutive) and checks every shift and every subagent run. The requests,
// tokens and costs are the audit's: one transcript.Scan reads them, and the tool calls, prompts
// and agent links of the same records (a transcript.Visitor). Only a file that cannot be opened or
// read is an error.
func Observe(files []string, opt Options) (*Observed, error) {
	scan := opt.Scan
	scan.Strict = true
	scan.Sink = nil
	observed := Attach(&scan, opt)
	res, err := transcript.Scan(files, scan)
	if err != nil {
		return nil, err
	}
	return observed(res), nil
}

// Attach makes a scan also observe what Observe does, in the same pass over the files (tune audit
// --report reads its transcripts once for the audit and its effort section): it sets scan.Visit (which
// must be unset) and adds to scan.Check and scan.OnRequest, after what they already do. The files
// must come in path order (transcript.Discover's). observed completes the result from what the scan
// returned; opt.Scan is not read.
func Attach(scan *transcript.Options, opt Options) (observed func(*transcript.Result) *Observed) {
	ob := newObserver(opt)
	// Files are parsed in parallel and analysed in path order, a session at a time: what is held is
	// one compact record per request of the session being analysed and of the few files read ahead,
	// and the phase of every main-loop request, for the requests the scan hands out at its end.
	scan.Visit = func() transcript.Visitor { return newFileParser(opt.Open, ob) }
	check, onRequest := scan.Check, scan.OnRequest
	scan.Check = func(res *transcript.Result) error {
		if check != nil {
			if err := check(res); err != nil {
				return err
			}
		}
		ob.flush()
		return nil
	}
	scan.OnRequest = ob.count
	if onRequest != nil {
		scan.OnRequest = func(r *transcript.Request) { onRequest(r); ob.count(r) }
	}
	return ob.result
}

// fileData is one parsed file.
type fileData struct {
	ob         *observer
	path       string
	src        transcript.Source
	agentType  string // from the meta.json sidecar
	entrypoint string
	msgs       []message
	copies     []message         // agent_progress copies of subagent requests, in order
	fromCopies bool              // a run known only through copies (observer.copies), not a file
	links      map[string]string // tool_use id → agent id (agent_progress, toolUseResult)
	warnings   []Warning         // of the meta.json sidecar
	index      map[string]int    // message id → msgs index
	copyIndex  map[string]int    // message id → copies index
	newTurn    bool              // a prompt came since the last request
	command    string            // the slash command of that prompt
}

// Merge hands the file to the observer, in path order (transcript.FileFacts).
func (fd *fileData) Merge() { fd.ob.file(fd) }

// message is one request (the records sharing a message.id) of a file.
type message struct {
	id        string
	line      int
	ts        string
	effort    string
	newTurn   bool   // a prompt came since the previous request
	command   string // the slash command of that prompt (/feat: a skill the user invoked), if any
	tools     []tool
	synthetic bool
	agent     string // the subagent of an agent_progress copy
}

type tool struct {
	id, name, skill, agentType string
	line                       int
	ts                         string
}

// fileParser reads the tool calls, prompts and agent links of the records transcript.Scan reads
// (a transcript.Visitor, one per parsing goroutine).
type fileParser struct {
	open func(string) (io.ReadCloser, error)
	ob   *observer
	rec  transcript.Record
	cur  *fileData
}

func newFileParser(open func(string) (io.ReadCloser, error), ob *observer) *fileParser {
	return &fileParser{open: open, ob: ob}
}

// Markers that decide, without parsing, whether a record the scan did not parse can matter: agent
// links carry an agentId; a prompt is a user record that is not a tool result (requests carry usage,
// and the scan parses those). Quotes inside JSON strings are escaped, so these bytes only occur as keys
// or values of the record itself.
var (
	markAgentID  = []byte(`"agentId"`)
	markUser     = []byte(`"type":"user"`)
	markResultID = []byte(`"tool_use_id"`)
)

// File starts a file (transcript.Visitor).
func (p *fileParser) File(src transcript.Source) {
	fd := &fileData{ob: p.ob, path: src.Path, src: src, index: map[string]int{}, copyIndex: map[string]int{}}
	p.cur = fd
	if fd.src.Class == transcript.ClassSubagent {
		fd.agentType = p.readMeta(strings.TrimSuffix(src.Path, ".jsonl") + ".meta.json")
	}
}

// Done ends the file (transcript.Visitor).
func (p *fileParser) Done() transcript.FileFacts {
	fd := p.cur
	p.cur = nil
	fd.index, fd.copyIndex = nil, nil
	return fd
}

// Record reads one record of the file (transcript.Visitor): a usage line as the scan parsed it, else
// a record that can matter, parsed here. A record that does not parse is left to the scan, which
// counts and names the usage lines it cannot read.
func (p *fileParser) Record(b []byte, line int, parsed *transcript.Record) {
	fd := p.cur
	r := parsed
	if r == nil {
		switch {
		case transcript.Contains(b, markAgentID, 6): // 'I'
		case transcript.Contains(b, markUser, 2) && !transcript.Contains(b, markResultID, 5): // 'y', '_'
		default:
			return
		}
		r = &p.rec
		if err := transcript.ParseRecord(b, r); err != nil {
			return
		}
	}
	if fd.entrypoint == "" && len(r.Entrypoint) > 0 {
		fd.entrypoint = string(r.Entrypoint)
	}
	switch string(r.Type) {
	case "assistant":
		if len(r.MessageID) == 0 || !r.HasUsage || (r.Sidechain && fd.src.Class == transcript.ClassMain) {
			return // not a request of this loop (a /btw replay in a main file)
		}
		i, seen := fd.index[string(r.MessageID)]
		if !seen {
			i = len(fd.msgs)
			fd.index[string(r.MessageID)] = i
			fd.msgs = append(fd.msgs, message{id: string(r.MessageID), line: line, ts: string(r.Timestamp), newTurn: fd.newTurn,
				command: fd.command})
			fd.newTurn, fd.command = false, ""
		}
		m := &fd.msgs[i]
		if len(r.Effort) > 0 {
			m.effort = string(r.Effort)
		}
		m.synthetic = string(r.Model) == audit.SyntheticModel
		for _, t := range r.Tools {
			m.tools = append(m.tools, tool{id: string(t.ID), name: string(t.Name), skill: string(t.Skill),
				agentType: string(t.SubagentType), line: line, ts: string(r.Timestamp)})
		}
	case "progress":
		if len(r.ParentToolUseID) > 0 && len(r.DataAgentID) > 0 {
			fd.link(string(r.ParentToolUseID), string(r.DataAgentID))
		}
		if c := &r.Copy; c.OK && len(c.MessageID) > 0 {
			// A subagent request repeated in its parent's file: a request of its subagent for the
			// runs, when the subagent's own file lacks it (observer.copies).
			i, seen := fd.copyIndex[string(c.MessageID)]
			if !seen {
				i = len(fd.copies)
				fd.copyIndex[string(c.MessageID)] = i
				fd.copies = append(fd.copies, message{id: string(c.MessageID), line: line, ts: string(c.Timestamp),
					agent: string(r.DataAgentID)})
			}
			m := &fd.copies[i]
			if len(c.Effort) > 0 {
				m.effort = string(c.Effort)
			}
			m.synthetic = string(c.Model) == audit.SyntheticModel
		}
	case "user":
		if len(r.ResultAgentID) > 0 && len(r.ResultIDs) > 0 {
			fd.link(string(r.ResultIDs[0]), string(r.ResultAgentID))
		}
		if r.Text && !r.IsMeta && !r.IsCompactSummary && len(r.ResultIDs) == 0 {
			fd.newTurn, fd.command = true, string(r.Command)
		}
	}
}

func (fd *fileData) link(toolID, agentID string) {
	if fd.links == nil {
		fd.links = map[string]string{}
	}
	if _, ok := fd.links[toolID]; !ok {
		fd.links[toolID] = agentID
	}
}

// readMeta returns the agentType of a subagent's meta.json sidecar ("" when there is none or it
// does not say; a sidecar that does not parse is a warning).
func (p *fileParser) readMeta(path string) string {
	f, err := p.open(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			p.cur.warnings = append(p.cur.warnings, Warning{File: path, Reason: "skipped: " + errText(err)})
		}
		return ""
	}
	defer f.Close()
	var meta struct {
		AgentType string `json:"agentType"`
	}
	if err := json.NewDecoder(io.LimitReader(f, 1<<20)).Decode(&meta); err != nil {
		p.cur.warnings = append(p.cur.warnings, Warning{File: path, Line: 1, Reason: "not valid JSON: " + err.Error()})
		return ""
	}
	return meta.AgentType
}
