package transcript

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ldd-tools/tune/internal/redact"
	"github.com/ldd-tools/tune/internal/regular"
)

// Options tune a scan. The zero value is tune's own rules.
type Options struct {
	// CCUsage reads lines exactly as ccusage 20.x selects them: only lines containing the bytes
	// `"usage":{` are considered, and a record is never reassembled from several lines. tune's default
	// also reads records written with spaces (`"usage": {`) or pretty-printed over several lines.
	CCUsage bool
	// NoProgress ignores agent_progress copies (ccusage's `session` report). By default they are read,
	// deduplicated against the subagent files and attributed to the subagent (ccusage's `daily`).
	NoProgress bool
	// ReplaySameTime narrows the /btw replay rule (Deduper.ReplaySameTime): ccusage's `session`,
	// `weekly`, `monthly` and `blocks` reports, unlike `daily`, count a sidechain line that replays a
	// parent message under a new requestId as a request of its own unless it has the timestamp of the
	// line kept (checked against ccusage 20.0.24).
	ReplaySameTime bool
	// TieSpeed is the tie rule of the same four reports (Deduper.TieSpeed): on equal usage totals a
	// line with a speed replaces a kept line without one.
	TieSpeed bool
	// MaxTotal keeps the usage of the line with the largest total per request (ccusage's exact rule)
	// instead of the field-wise maximum. The two agree on Claude Code's monotone streaming counts.
	MaxTotal bool
	// Label is the effort label of requests that record no effort (an A/B arm name).
	Label string
	// Workers is the number of files parsed in parallel (0: GOMAXPROCS). Results do not depend on it.
	Workers int
	// Progress, when set, is called from the scanning goroutine with the bytes read so far and the
	// total size of the files.
	Progress func(done, total int64)
	// WarningsPerReason caps the warnings kept per file and reason (0: 3). Counts are never capped.
	WarningsPerReason int
	// MaxLineBytes caps the length of one physical line (0: DefaultMaxLineBytes). A longer line is
	// skipped as ReasonTooLong while it is read, never held in memory: a transcript of one endless line
	// (or /dev/zero behind a link) costs at most the cap.
	MaxLineBytes int
	// OnRequest, when set, receives every request once the scan is complete, in order of first
	// appearance, instead of Result.Requests (which stays nil). r is valid only during the call. It
	// runs before Scan returns, before Result.Sessions is filled. Until then each request is held as
	// a compact record with its ids (about 130 bytes); per-request rows need that, aggregates do not
	// (see Sink).
	OnRequest func(r *Request)
	// OrderBy, when set, orders the requests OnRequest receives by its key (ascending), then by first
	// appearance (Deduper.EachBy).
	OrderBy func(r *Request) int64
	// Strict makes a file that cannot be read an error of the scan; by default it is left out and
	// named in Result.Unreadable, and the rest is read.
	Strict bool
	// Check, when set, is called with what was read (files, skips, Unreadable, NoRecords; no request
	// yet) before OnRequest gets any request; an error it returns is Scan's, and nothing is emitted.
	Check func(res *Result) error
	// Sink, when set, receives requests as soon as their session group (the consecutive files of one
	// session: main file, subagents, side questions) has been read, so that memory hardly grows with
	// the corpus: what stays per request is a key and a compact record, 60–75 bytes, for the rare
	// copy in a later session (a resumed or forked session repeats earlier lines). When such a copy changes a request already
	// added, the sink is told to Remove the added version and then to Add the new one, so aggregates
	// stay exactly equal to ccusage's. Requests given to a Sink carry no MessageID or RequestID.
	Sink Sink
	// Visit, when set, makes the Visitor of each parsing goroutine: it reads what Scan does not (tool
	// calls, prompts, agent links) from the same records in the same pass.
	Visit func() Visitor
}

// Visitor reads more of a scan's records than Scan does (Options.Visit), so that a second reader
// never disagrees with the first on which lines are records (tune effort reads tool calls and
// prompts this way; docs/decisions.md#effort-conformance-issue-14).
type Visitor interface {
	// File starts a file; Record then gets each of its records (bytes valid during the call only),
	// from the goroutine parsing that file. parsed is the record as ParseRecord reads it when Scan has
	// parsed it already (a usage line: one parse serves both readers), else nil; a usage line that does
	// not parse (Scan counts and names it) is not passed on.
	File(src Source)
	Record(rec []byte, line int, parsed *Record)
	// Done ends the file. What it returns is merged in path order, from the goroutine that merges
	// requests, before the file's requests; nothing is merged for a file that could not be read.
	Done() FileFacts
}

// FileFacts are what a Visitor gathered from one file.
type FileFacts interface{ Merge() }

// Scan reads the files (in the given order; Discover sorts them) and returns the deduplicated
// requests, the sessions and the line counts. Only an unreadable file is an error; bad lines are
// counted in Result.Skipped and sampled in Result.Warnings.
func Scan(files []string, opt Options) (*Result, error) {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers > len(files) {
		workers = len(files)
	}
	total := TotalSize(files)
	var done atomic.Int64

	// Files are parsed in parallel and merged in path order, so the result is the same for any
	// number of workers. A few parsed files per worker (their usage observations only) may wait to be
	// merged: enough to keep the workers busy past a large file, few enough that the waiting
	// observations stay small next to the rest (32 cost 5 MB more RSS on the 1 GB corpus, no speed).
	m := newMerger(opt)
	var wait func(<-chan *fileResult) *fileResult
	if opt.Progress != nil {
		wait = func(slot <-chan *fileResult) *fileResult { return waitWithProgress(slot, opt.Progress, &done, total) }
	}
	err := Ordered(len(files), workers, max(8, 4*workers),
		func() *fileParser { return newFileParser(opt, &done) },
		func(fp *fileParser, i int) *fileResult { return fp.parse(files[i], int32(i)) },
		wait,
		func(i int, fr *fileResult) error {
			if fr.err != nil && opt.Strict {
				return fr.err
			}
			if fr.err != nil {
				msg := fr.err.Error()
				if pe := (*fs.PathError)(nil); errors.As(fr.err, &pe) {
					msg = pe.Err.Error() // the path is File
				}
				m.res.Unreadable = append(m.res.Unreadable, FileError{File: files[i], Err: msg})
				// Left out, but registered: observations name their file by its index.
				m.dedup.AddFile(fr.src)
				return nil
			}
			m.add(fr)
			return nil
		})
	if err != nil {
		return nil, err
	}
	if opt.Progress != nil {
		opt.Progress(done.Load(), total)
	}
	return m.result()
}

func waitWithProgress(slot <-chan *fileResult, progress func(done, total int64), done *atomic.Int64, total int64) *fileResult {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case fr := <-slot:
			progress(done.Load(), total)
			return fr
		case <-tick.C:
			progress(done.Load(), total)
		}
	}
}

// fileResult is one parsed file, waiting to be merged.
type fileResult struct {
	index    int32
	src      Source
	obs      []observation
	counts   LineCounts
	skipped  map[string]int
	warnings []Warning
	minMs    int64
	maxMs    int64
	hasTime  bool
	turnMs   int64
	turns    int
	bytes    int64
	facts    FileFacts // the Visitor's, when Options.Visit is set
	err      error
}

// fileParser parses files one at a time, reusing its buffers.
type fileParser struct {
	opt     Options
	lr      *LineReader
	intern  map[string]string
	lastMsg string
	lastReq string
	done    *atomic.Int64
	line    lineFields
	cur     *fileResult
	visit   Visitor
	visited Record // the Record of a usage line, for visit
}

func newFileParser(opt Options, done *atomic.Int64) *fileParser {
	fp := &fileParser{opt: opt, intern: make(map[string]string), done: done}
	fp.lr = NewLineReader(nil, 1<<20)
	fp.lr.NoMultiLine = opt.CCUsage
	fp.lr.MaxLine = opt.MaxLineBytes
	fp.lr.OnSkip = func(line, lines int, reason string) { fp.skip(line, lines, reason) }
	if opt.Visit != nil {
		fp.visit = opt.Visit()
	}
	return fp
}

// str returns b as an interned string: models, versions, efforts and agent ids repeat on every line.
// It is redacted once, when first seen: these names reach every audit table and export
// (docs/decisions.md#hostile-files-issue-25). Ids are not (see id): two ids redacted alike would merge.
func (fp *fileParser) str(b []byte) string {
	if v, ok := fp.intern[string(b)]; ok {
		return v
	}
	v := redact.String(string(b))
	fp.intern[string(b)] = v
	return v
}

// id returns b as a string, reusing the previous line's string when equal: the lines of one request
// are usually adjacent, so most ids are not allocated again.
func (fp *fileParser) id(b []byte, last *string) string {
	if *last == string(b) {
		return *last
	}
	*last = string(b)
	return *last
}

func (fp *fileParser) skip(line, lines int, reason string) {
	fr := fp.cur
	if reason == ReasonNotObject || reason == ReasonTruncated {
		fr.skipped[reason] += lines
	} else {
		fr.skipped[reason]++
	}
	limit := fp.opt.WarningsPerReason
	if limit <= 0 {
		limit = 3
	}
	n := 0
	for _, w := range fr.warnings {
		if w.Reason == reason {
			n++
		}
	}
	if n < limit {
		fr.warnings = append(fr.warnings, Warning{File: fr.src.Path, Line: line, Reason: reason})
	}
}

type countingReader struct {
	r    io.Reader
	done *atomic.Int64
	n    int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.done.Add(int64(n))
	return n, err
}

var (
	markUsageStrict = []byte(`"usage":{`)
	markTurn        = []byte(`"turn_duration"`)
	markInput       = []byte(`"input_tokens"`)
)

// hasInputTokens reports whether rec contains the key "input_tokens", which every usage object has
// (ccusage requires it too).
func hasInputTokens(rec []byte) bool { return containsAnchored(rec, markInput, 9) } // 'k'

// hasTurnDuration reports whether rec is likely a system/turn_duration line: those are short and
// carry the subtype near their end, so only the tail is searched.
func hasTurnDuration(rec []byte) bool {
	const tail = 512
	if len(rec) > tail {
		rec = rec[len(rec)-tail:]
	}
	return containsAnchored(rec, markTurn, 5) // '_'
}

// containsAnchored is bytes.Contains(rec, pat) specialised for the few markers a scan looks for: it
// jumps between occurrences of pat[anchor], a byte chosen to be rare in transcripts ('k' is about
// one byte in 160, '_' one in 70), and compares around each. A general substring search starts from
// pat[0], and '"', the first byte of every JSON key, is one byte in 17; this is several times faster
// over a gigabyte.
//
// Most occurrences of the anchor are not followed by the pattern's next byte, so that byte is
// compared before the whole pattern (the call to bytes.Equal at every 'k' was 2.5 % of the audit).
func containsAnchored(rec, pat []byte, anchor int) bool {
	c := pat[anchor]
	last := anchor == len(pat)-1
	var next byte
	if !last {
		next = pat[anchor+1]
	}
	from := anchor
	for from < len(rec) {
		i := bytes.IndexByte(rec[from:], c)
		if i < 0 {
			return false
		}
		p := from + i
		from = p + 1
		if p-anchor+len(pat) > len(rec) {
			return false // later occurrences end further out
		}
		if (last || rec[p+1] == next) && bytes.Equal(rec[p-anchor:p-anchor+len(pat)], pat) {
			return true
		}
	}
	return false
}

// obsPool recycles the observation slices of merged files (as pointers: a slice put into a Pool
// would be boxed, an allocation per Put).
var obsPool = sync.Pool{New: func() any { return new([]observation) }}

func (fp *fileParser) parse(path string, index int32) *fileResult {
	fr := &fileResult{index: index, src: SourceOf(path), skipped: make(map[string]int)}
	fr.obs = *obsPool.Get().(*[]observation)
	fp.cur = fr
	if fp.visit != nil {
		fp.visit.File(fr.src)
		defer func() { fr.facts = fp.visit.Done() }()
	}
	f, err := regular.Open(path) // a FIFO or a device among the transcripts is refused, not read forever
	if err != nil {
		fr.err = fmt.Errorf("transcripts: %w", err)
		return fr
	}
	defer f.Close()
	cr := &countingReader{r: f, done: fp.done}
	fp.lr.Reset(cr)
	for {
		rec, line, ok := fp.lr.Next()
		if !ok {
			break
		}
		usage := hasInputTokens(rec)
		if fp.visit != nil && !usage {
			fp.visit.Record(rec, line, nil)
		}
		switch {
		case usage && fp.usageRecord(rec, line):
		case hasTurnDuration(rec):
			if parseLine(rec, &fp.line) == nil && string(fp.line.Type) == "system" && string(fp.line.Subtype) == "turn_duration" {
				if fp.line.HasDuration {
					fr.turnMs += int64(fp.line.DurationMs)
					fr.turns++
				}
				fp.seeTime(fp.line.Timestamp)
			} else {
				fp.seeTime(findTimestamp(rec))
			}
		default:
			fp.seeTime(findTimestamp(rec))
		}
	}
	if err := fp.lr.Err(); err != nil {
		fr.err = fmt.Errorf("transcripts: %s: %w", path, err)
	}
	usageLines := fr.counts.UsageLines
	fr.counts = fp.lr.Counts()
	fr.counts.UsageLines = usageLines
	fr.counts.Skipped = 0
	for _, n := range fr.skipped {
		fr.counts.Skipped += n
	}
	fr.bytes = cr.n
	fp.cur = nil
	return fr
}

func (fp *fileParser) seeTime(ts []byte) {
	if len(ts) == 0 {
		return
	}
	ms, ok := parseTimestamp(ts)
	if !ok {
		return
	}
	fr := fp.cur
	if !fr.hasTime || ms < fr.minMs {
		fr.minMs = ms
	}
	if !fr.hasTime || ms > fr.maxMs {
		fr.maxMs = ms
	}
	fr.hasTime = true
}

// usageRecord turns a record that mentions usage into an observation, or counts why not. It returns
// false when the record is not a usage line after all: under ccusage's rules, one without the bytes
// `"usage":{`.
//
// ccusage's two byte-level filters (`"usage":{` present, then hasNullField) come before its parse.
// For a record that parses they are decided by the parse itself (scanner.keyFilters), which saves
// two passes over every usage line (12 % of the CPU time of `tune audit --ccusage daily` on the 1 GB
// corpus; docs/decisions.md#cost-and-date-views-in-the-audit-issue-13); a record that does not parse
// is judged on its bytes, as before.
func (fp *fileParser) usageRecord(rec []byte, line int) bool {
	lf := &fp.line
	var visited *Record
	if fp.visit != nil {
		visited = &fp.visited
		visited.reset()
	}
	err := parseLineOpts(rec, lf, visited, fp.opt.CCUsage)
	if visited != nil && err == nil {
		visited.fill(lf)
		fp.visit.Record(rec, line, visited)
	}
	if fp.opt.CCUsage {
		usage, null := lf.UsageKey, lf.NullKey
		if err != nil {
			usage = bytes.Contains(rec, markUsageStrict)
			null = usage && hasNullField(rec)
		}
		if !usage {
			return false
		}
		if null {
			fp.skip(line, 1, ReasonNullField)
			return true
		}
	}
	if err != nil {
		switch err {
		case errTruncated:
			fp.skip(line, 1, ReasonTruncated)
		case errType:
			fp.skip(line, 1, ReasonInvalidUsage)
		default:
			fp.skip(line, 1, ReasonMalformed)
		}
		return true
	}
	if lf.NullField {
		fp.skip(line, 1, ReasonNullField)
		return true
	}
	fp.seeTime(lf.Timestamp)
	direct := lf.HasMessage && lf.Message.HasUsage
	directOK := direct && lf.Message.Usage.HasInput && lf.Message.Usage.HasOutput && lf.Timestamp != nil
	progress := !fp.opt.NoProgress && lf.HasProgress && lf.Progress.HasMessage && lf.Progress.Message.HasUsage
	progressOK := progress && lf.progressUsable()
	if !directOK && progressOK {
		fp.seeTime(lf.Progress.Timestamp)
	}
	switch {
	case directOK:
		fp.observe(line, lf.Timestamp, &lf.Message, lf.RequestID, lf.HasRequestID, lf.Sidechain, false, lf)
	case progressOK:
		fp.observe(line, lf.Progress.Timestamp, &lf.Progress.Message, lf.Progress.RequestID, lf.Progress.HasRequestID, lf.Progress.Sidechain, true, lf)
	case direct && lf.Timestamp == nil || progress && lf.Progress.Timestamp == nil:
		fp.skip(line, 1, ReasonNoTimestamp)
	case direct || progress:
		fp.skip(line, 1, ReasonInvalidUsage)
	}
	// Otherwise "usage" only appeared in text: not a usage record.
	return true
}

func (fp *fileParser) observe(line int, ts []byte, m *messageFields, reqID []byte, hasReq, sidechain, progress bool, lf *lineFields) {
	ms, ok := parseTimestamp(ts)
	if !ok {
		fp.skip(line, 1, ReasonNoTimestamp)
		return
	}
	if (!progress && lf.HasVersion && !isSemverPrefix(lf.Version)) ||
		(!progress && lf.HasSessionID && len(lf.SessionID) == 0) ||
		(hasReq && len(reqID) == 0) || (m.HasID && len(m.ID) == 0) || (m.HasModel && len(m.Model) == 0) {
		fp.skip(line, 1, ReasonInvalidField)
		return
	}
	fr := fp.cur
	fr.counts.UsageLines++
	o := observation{
		MessageID:      fp.id(m.ID, &fp.lastMsg),
		RequestID:      fp.id(reqID, &fp.lastReq),
		HasMessageID:   m.HasID,
		HasRequestID:   hasReq,
		Sidechain:      sidechain,
		Progress:       progress,
		Model:          fp.str(m.Model),
		Version:        fp.str(lf.Version),
		TimeMs:         ms,
		Usage:          m.Usage,
		ThinkingBlocks: int32(m.ThinkingBlocks),
		ThinkingChars:  m.ThinkingChars,
		File:           fr.index,
		Line:           int32(line),
	}
	o.Usage.Speed = fp.str(m.Speed)
	if progress {
		o.Usage.Cost, o.Usage.HasCost = lf.Progress.Cost, lf.Progress.HasCost
	} else {
		o.Usage.Cost, o.Usage.HasCost = lf.Cost, lf.HasCost
	}
	src := &fr.src
	if progress {
		o.Class = ClassSubagent
		o.AgentID = fp.str(lf.DataAgentID)
		if strings.HasPrefix(o.AgentID, "acompact") {
			o.Class = ClassCompaction
		}
		o.Effort = fp.str(lf.Progress.Effort)
	} else {
		o.Class = src.Class
		o.AgentID = src.AgentID
		if len(lf.AgentID) > 0 {
			o.AgentID = fp.str(lf.AgentID)
		}
		if o.Class == ClassMain && sidechain {
			o.Class = ClassSubagent
		}
		if o.Class == ClassMain {
			o.AgentID = ""
		}
		o.Effort = fp.str(lf.Effort)
	}
	fr.obs = append(fr.obs, o)
}

// progressUsable reports whether an agent_progress line's nested request is one Scan counts: usage
// with input and output tokens, and a timestamp (ParseRecord's Copy follows the same rule).
func (lf *lineFields) progressUsable() bool {
	p := &lf.Progress
	return lf.HasProgress && p.HasMessage && p.Message.HasUsage && p.Message.Usage.HasInput && p.Message.Usage.HasOutput &&
		p.Timestamp != nil
}

// findTimestamp returns the top-level timestamp of a record without parsing it; it is only used for
// the span of a session (wall time). Claude Code writes "timestamp" near the end of most lines, so the
// tail is searched; short records are searched whole. The lines this misses are tool results whose
// timestamp precedes a large toolUseResult: they always sit between a request and the next one, so
// they never widen a session's span.
func findTimestamp(rec []byte) []byte {
	const tail, short = 256, 4096
	if len(rec) <= short {
		return timestampAfter(rec, true)
	}
	return timestampAfter(rec[len(rec)-tail:], true)
}

var markTimestamp = []byte(`"timestamp"`)

// timestampAfter returns the value of a "timestamp" key in b: the last one when last is set, else
// the first. Occurrences are found from their 'p' (see containsAnchored).
func timestampAfter(b []byte, last bool) []byte {
	const anchor = 9 // 'p'
	lo, hi := anchor, len(b)
	for lo < hi {
		var p int
		if last {
			p = bytes.LastIndexByte(b[lo:hi], 'p')
		} else {
			p = bytes.IndexByte(b[lo:hi], 'p')
		}
		if p < 0 {
			return nil
		}
		p += lo
		if last {
			hi = p
		} else {
			lo = p + 1
		}
		start := p - anchor
		if start+len(markTimestamp) > len(b) || b[p+1] != '"' || !bytes.Equal(b[start:start+len(markTimestamp)], markTimestamp) {
			continue
		}
		rest := trimSpace(b[start+len(markTimestamp):])
		if len(rest) > 0 && rest[0] == ':' {
			rest = trimSpace(rest[1:])
			if len(rest) > 0 && rest[0] == '"' {
				if j := bytes.IndexByte(rest[1:], '"'); j >= 0 {
					return rest[1 : 1+j]
				}
			}
		}
	}
	return nil
}

// trimSpace drops the JSON white space at the start of b (bytes.TrimLeft builds its cutset's table
// at every call).
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	return b
}

// parseTimestamp parses Claude Code's "2026-02-11T20:36:47.925Z" quickly, anything else with
// time.RFC3339Nano. It returns Unix milliseconds.
func parseTimestamp[T string | []byte](s T) (int64, bool) {
	if len(s) == 24 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' && s[19] == '.' && s[23] == 'Z' {
		var d [9]int
		parts := [...][2]int{{0, 4}, {5, 7}, {8, 10}, {11, 13}, {14, 16}, {17, 19}, {20, 23}}
		ok := true
		for k, p := range parts {
			v := 0
			for i := p[0]; i < p[1]; i++ {
				c := s[i]
				if c < '0' || c > '9' {
					ok = false
					break
				}
				v = v*10 + int(c-'0')
			}
			d[k] = v
		}
		if ok && d[1] >= 1 && d[1] <= 12 && d[2] >= 1 && d[2] <= daysIn(d[1], d[0]) && d[3] < 24 && d[4] < 60 && d[5] < 60 {
			secs := (unixDays(d[0], d[1], d[2])*24+int64(d[3]))*3600 + int64(d[4])*60 + int64(d[5])
			return secs*1000 + int64(d[6]), true
		}
	}
	t, err := time.Parse(time.RFC3339Nano, string(s))
	if err != nil {
		return 0, false
	}
	return t.UnixMilli(), true
}

// daysIn is the number of days of month m (1–12) of year y in the proleptic Gregorian calendar, as
// the time package counts them.
func daysIn(m, y int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// unixDays is the number of days from 1970-01-01 to the valid date y-m-d (y ≥ 0), by the civil
// calendar arithmetic of H. Hinnant's days_from_civil: time.Date per line was 3 % of the audit, and
// this is the same number (TestParseTimestampMatchesTime).
func unixDays(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12 // March is 0
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// isSemverPrefix is ccusage's version check: digits '.' digits '.' digit, then anything.
func isSemverPrefix(v []byte) bool {
	i := 0
	digits := func() bool {
		start := i
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
		}
		return i > start
	}
	if !digits() || i >= len(v) || v[i] != '.' {
		return false
	}
	i++
	if !digits() || i >= len(v) || v[i] != '.' {
		return false
	}
	i++
	return i < len(v) && v[i] >= '0' && v[i] <= '9'
}

// nullableFields are the keys ccusage refuses to see set to null anywhere in a usage line.
var nullableFields = map[string]bool{
	"id": true, "cwd": true, "model": true, "speed": true, "costUSD": true, "version": true,
	"sessionId": true, "requestId": true, "isApiErrorMessage": true,
	"cache_read_input_tokens": true, "cache_creation_input_tokens": true,
}

// hasNullField applies ccusage's byte-level null filter: a usage line is dropped when any of
// nullableFields is followed by null, at any depth (spaces around the colon allowed here).
func hasNullField(rec []byte) bool {
	b := rec
	off := 0
	for {
		i := bytes.Index(b[off:], []byte("null"))
		if i < 0 {
			return false
		}
		at := off + i
		off = at + 4
		j := at - 1
		for j >= 0 && isSpace(b[j]) {
			j--
		}
		if j < 0 || b[j] != ':' {
			continue
		}
		j--
		for j >= 0 && isSpace(b[j]) {
			j--
		}
		if j < 0 || b[j] != '"' {
			continue
		}
		k := bytes.LastIndexByte(b[:j], '"')
		if k < 0 {
			continue
		}
		if nullableFields[string(b[k+1:j])] {
			return true
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// merger folds parsed files into the result, in path order. Files of one session are consecutive in
// path order (S.jsonl, then S/subagents/…), so the Deduper is flushed whenever the session changes.
type merger struct {
	opt      Options
	dedup    *Deduper
	res      *Result
	sessions map[string]*Session
	versions map[string]map[string]int // session → Claude Code version → requests
	group    string                    // session of the files merged since the last flush
	started  bool
}

func newMerger(opt Options) *merger {
	m := &merger{
		opt:      opt,
		res:      &Result{Skipped: make(map[string]int)},
		sessions: make(map[string]*Session),
		versions: make(map[string]map[string]int),
	}
	d := NewDeduper()
	d.MaxTotal, d.Label, d.ReplaySameTime, d.TieSpeed = opt.MaxTotal, opt.Label, opt.ReplaySameTime, opt.TieSpeed
	// Ids are only needed to hand out the requests at the end (Result.Requests, OnRequest).
	d.keepIDs = opt.OnRequest != nil || opt.Sink == nil
	d.reclassify = opt.Sink != nil
	d.emit = m.emit
	m.dedup = d
	return m
}

// emit counts a finalised request in its session (or uncounts a retracted one) and passes it on to
// the Sink.
func (m *merger) emit(add bool, r *Request) {
	s := m.sessions[r.Session]
	if s == nil {
		s = &Session{ID: r.Session, Project: r.Project, Label: m.opt.Label}
		m.sessions[r.Session] = s
	}
	step := 1
	if !add {
		step = -1
	}
	s.Requests += step
	if r.Version != "" {
		if m.versions[r.Session] == nil {
			m.versions[r.Session] = make(map[string]int)
		}
		m.versions[r.Session][r.Version] += step
	}
	if m.opt.Sink == nil {
		return
	}
	if add {
		m.opt.Sink.Add(r)
	} else {
		m.opt.Sink.Remove(r)
	}
}

func (m *merger) session(src *Source) *Session {
	s := m.sessions[src.Session]
	if s == nil {
		s = &Session{ID: src.Session, Project: src.Project, Label: m.opt.Label, Directory: dirOf(src.Path)}
		m.sessions[src.Session] = s
	}
	return s
}

func dirOf(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[:i]
	}
	return "."
}

func (m *merger) add(fr *fileResult) {
	src := &fr.src
	if m.started && src.Session != m.group {
		m.dedup.Flush()
	}
	m.group, m.started = src.Session, true
	m.res.Files = append(m.res.Files, src.Path)
	m.res.Bytes += fr.bytes
	c := &m.res.Lines
	c.Lines += fr.counts.Lines
	c.Blank += fr.counts.Blank
	c.Records += fr.counts.Records
	c.MultiLine += fr.counts.MultiLine
	c.MultiLineLines += fr.counts.MultiLineLines
	c.UsageLines += fr.counts.UsageLines
	c.Skipped += fr.counts.Skipped
	for k, v := range fr.skipped {
		m.res.Skipped[k] += v
	}
	m.res.Warnings = append(m.res.Warnings, fr.warnings...)
	if !fr.hasTime {
		m.res.NoRecords = append(m.res.NoRecords, src.Path)
	}
	s := m.session(src)
	s.Files = append(s.Files, src.Path)
	if fr.hasTime {
		first, last := msTime(fr.minMs), msTime(fr.maxMs)
		if s.First.IsZero() || first.Before(s.First) {
			s.First = first
		}
		if last.After(s.Last) {
			s.Last = last
		}
	}
	s.ActiveMs += fr.turnMs
	s.Turns += fr.turns
	if fr.facts != nil {
		fr.facts.Merge()
	}
	m.dedup.AddFile(*src)
	for i := range fr.obs {
		m.dedup.Add(&fr.obs[i])
	}
	obs := fr.obs[:0]
	obsPool.Put(&obs)
	fr.obs = nil
}

func (m *merger) result() (*Result, error) {
	res := m.res
	if m.opt.Check != nil {
		if err := m.opt.Check(res); err != nil {
			return nil, err
		}
	}
	m.dedup.Flush()
	switch {
	case m.opt.OnRequest != nil:
		m.dedup.EachBy(m.opt.OrderBy, m.opt.OnRequest)
	case m.opt.Sink == nil:
		res.Requests = m.dedup.Requests()
	}
	ids := make([]string, 0, len(m.sessions))
	for id := range m.sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		s := m.sessions[id]
		s.Versions = sortedKeys(m.versions[id])
		res.Sessions = append(res.Sessions, *s)
	}
	return res, nil
}
