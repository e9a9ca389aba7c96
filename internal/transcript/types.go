// Package transcript reads Claude Code JSONL transcripts and yields one record per API request.
//
// Claude Code writes one line per streamed content block, and every line repeats the request's
// message.id, requestId and usage; subagent calls are often copied into the parent file as
// agent_progress lines. The package finds the files as ccusage does, streams them (lines can be many
// megabytes), and merges the lines of each request with ccusage 20.x's deduplication rules, so that
// token totals equal ccusage's. Malformed lines are counted by reason and returned as warnings; they
// never stop a scan. The package is pure: files in, values and warnings out.
//
// Files: scan.go (files → observations, in parallel, merged in path order), parse.go (the transcript
// schema: which fields a record holds and their types) over jsonscan.go (the JSON scanner), dedup.go
// (ccusage's merge rules: observations → requests) with dedupcodec.go (the compact record a finalised
// request is kept as) and keytable.go (hashed ids → records), record.go (Record: what tune effort reads
// beyond usage, through a Visitor). A new field is threaded through all of them: see the checklist in
// docs/architecture.md#add-a-transcript-field.
package transcript

import (
	"time"
)

// Class says which loop a request belongs to.
type Class uint8

// Request classes.
const (
	ClassMain         Class = iota // the session's main loop (including skills that run a different model)
	ClassSubagent                  // a Task/Agent subagent, from its own file or an agent_progress copy
	ClassCompaction                // auto-compaction (agent-acompact-*.jsonl)
	ClassSideQuestion              // a /btw side question: a sidechain log that replays parent messages
)

var classNames = [...]string{"main", "subagent", "compaction", "side-question"}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "unknown"
}

// ThinkingSource says how a request's thinking tokens are known.
type ThinkingSource uint8

// Thinking sources, from least to most reliable.
const (
	// ThinkingUnknown: no usage.output_tokens_details.thinking_tokens and no thinking text to estimate
	// from (no thinking block, or only empty/redacted ones). ThinkingTokens is 0 and means "unknown".
	ThinkingUnknown ThinkingSource = iota
	// ThinkingEstimated: estimated as ceil(characters of thinking text / 4). Where Claude Code stores
	// thinking text at all it is a summary, so this is a rough lower bound.
	ThinkingEstimated
	// ThinkingExact: usage.output_tokens_details.thinking_tokens (a part of output_tokens).
	ThinkingExact
)

var thinkingNames = [...]string{"unknown", "estimated", "exact"}

func (s ThinkingSource) String() string { return thinkingNames[s] }

// EffortSource says where a request's effort level comes from.
type EffortSource uint8

// Effort sources.
const (
	EffortNone       EffortSource = iota // not recorded and no label given
	EffortTranscript                     // the top-level "effort" field of the assistant line
	EffortLabel                          // the caller's arm label (Options.Label)
)

var effortNames = [...]string{"none", "transcript", "label"}

func (s EffortSource) String() string { return effortNames[s] }

// Request is one deduplicated API request.
type Request struct {
	MessageID string // message.id ("" when absent: such lines are never deduplicated)
	RequestID string // requestId of the line whose usage was kept
	Session   string // session id from the file path, as ccusage derives it
	Project   string // first directory under projects/ ("" when the path has none)
	AgentID   string // subagent id ("" in the main loop)
	Class     Class
	Model     string
	Effort    string
	EffortSrc EffortSource
	Version   string // Claude Code version
	Speed     string // usage.speed ("standard", "fast" or "")
	File      string // the file of the request's first line

	InputTokens         uint64
	OutputTokens        uint64 // includes thinking
	CacheCreationTokens uint64 // 5m + 1h when the split is recorded, else the flat field (as ccusage)
	CacheCreation5m     uint64 // equals CacheCreationTokens when no split is recorded
	CacheCreation1h     uint64
	CacheReadTokens     uint64
	ThinkingTokens      uint64
	ThinkingSrc         ThinkingSource
	ThinkingBlocks      int // thinking + redacted_thinking blocks of the response
	// RecordedCostUSD is the costUSD Claude Code (≈1.0.x) wrote on the line whose usage was kept
	// (HasRecordedCost: one was written). ccusage's default cost mode uses it instead of the prices.
	RecordedCostUSD float64
	HasRecordedCost bool

	First time.Time // first line of the response
	Last  time.Time // last line of the response
	// UsageTime is the timestamp of the first line that carried the largest usage total: the line
	// ccusage keeps, and the one that decides the request's day.
	UsageTime time.Time
}

// TotalTokens is input + output + cache write + cache read, ccusage's "total tokens".
func (r *Request) TotalTokens() uint64 {
	return r.InputTokens + r.OutputTokens + r.CacheCreationTokens + r.CacheReadTokens
}

// Sink receives the requests of a scan as their session groups complete (Options.Sink). A later copy
// of a request in another session can change it: the sink then gets Remove with the version it was
// given, followed by Add with the new one. r is valid only during the call.
type Sink interface {
	Add(r *Request)
	Remove(r *Request)
}

// Session is what a session's files say beyond their requests: the span of all timestamped lines
// (main and subagent files) and the recorded turn durations.
type Session struct {
	ID        string
	Project   string
	Files     []string  // in scan order
	First     time.Time // earliest timestamp on any line of its files
	Last      time.Time // latest timestamp on any line of its files
	ActiveMs  int64     // sum of system/turn_duration durationMs
	Turns     int       // number of turn_duration lines
	Requests  int       // deduplicated requests attributed to the session
	Versions  []string  // Claude Code versions seen on its requests, sorted
	Label     string    // the arm label of its files (Options.Label), "" when none
	Directory string    // directory of the session's first file, relative paths kept as given
}

// Warning is a line that was skipped or read with a caveat.
type Warning struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// Skip reasons. Lines are counted under exactly one reason; the names are stable (JSON output).
const (
	ReasonNotObject    = "not-object"    // a line that is not a JSON object (e.g. `42`, `"text"`, `[1]`)
	ReasonTruncated    = "truncated"     // an object cut off by the end of the file or by the next record
	ReasonMalformed    = "malformed"     // invalid JSON in a line that carries usage
	ReasonInvalidUsage = "invalid-usage" // usage without integer input_tokens/output_tokens, a mistyped field, or a count over MaxTokens
	ReasonNoTimestamp  = "no-timestamp"  // usage without a parseable timestamp
	ReasonInvalidField = "invalid-field" // version not d.d.d…, or an empty sessionId/requestId/message.id/model
	ReasonNullField    = "null-field"    // ccusage's rule: id, model, speed, version, … set to null
	ReasonTooLong      = "too-long"      // a line longer than Options.MaxLineBytes, skipped unread
)

// LineCounts count the physical lines of the files read.
type LineCounts struct {
	Lines          int `json:"lines"`            // physical lines, including blank ones
	Blank          int `json:"blank"`            // empty or whitespace-only lines
	Records        int `json:"records"`          // JSON objects read (one line, or several when pretty-printed)
	MultiLine      int `json:"multi_line"`       // records spread over several lines (pretty-printed)
	MultiLineLines int `json:"multi_line_lines"` // physical lines of those records
	UsageLines     int `json:"usage_lines"`      // records that carried usage and were counted
	Skipped        int `json:"skipped"`          // records or lines skipped, all reasons
}

// Result is the outcome of a scan.
type Result struct {
	Requests []Request      // deduplicated, in order of first appearance (files in path order)
	Sessions []Session      // sorted by ID
	Files    []string       // files read, in path order
	Lines    LineCounts     // over all files
	Skipped  map[string]int // skip reason → count (lines for not-object/truncated, records otherwise)
	Warnings []Warning      // the first few skipped lines per reason and file, in scan order
	Bytes    int64          // bytes read
	// Unreadable are the files that could not be read (left out, unless Options.Strict).
	Unreadable []FileError
	// NoRecords are the files read that hold no Claude Code record (no line with a timestamp).
	NoRecords []string
}

// FileError is a file left out of a scan and why.
type FileError struct {
	File string `json:"file"`
	Err  string `json:"error"`
}

// NoRecordsIn reports whether files (those of one path) hold no Claude Code record: none of them
// was read and holds one, and some were read (files that could not be read are named apart, in
// Result.Unreadable) or there are none.
func NoRecordsIn(res *Result, files []string) bool {
	empty := make(map[string]bool, len(res.NoRecords))
	for _, f := range res.NoRecords {
		empty[f] = true
	}
	unreadable := make(map[string]bool, len(res.Unreadable))
	for _, u := range res.Unreadable {
		unreadable[u.File] = true
	}
	read := 0
	for _, f := range files {
		if unreadable[f] {
			continue
		}
		if !empty[f] {
			return false
		}
		read++
	}
	return read > 0 || len(files) == 0
}
