package transcript

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
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
}

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
	var total int64
	for _, f := range files {
		if info, err := os.Stat(f); err == nil {
			total += info.Size()
		}
	}
	var done atomic.Int64

	// Files are parsed in parallel and merged in path order, so the result is the same for any
	// number of workers. At most 2×workers parsed files wait to be merged, which bounds memory.
	slots := make([]chan *fileResult, len(files))
	for i := range slots {
		slots[i] = make(chan *fileResult, 1)
	}
	jobs := make(chan int)
	inFlight := make(chan struct{}, 2*max(workers, 1))
	stop := make(chan struct{})
	go func() {
		defer close(jobs)
		for i := range files {
			select {
			case inFlight <- struct{}{}:
			case <-stop:
				return
			}
			select {
			case jobs <- i:
			case <-stop:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fp := newFileParser(opt, &done)
			for i := range jobs {
				slots[i] <- fp.parse(files[i], int32(i))
			}
		}()
	}

	m := newMerger(opt)
	var firstErr error
	for i := range files {
		var fr *fileResult
		if opt.Progress != nil {
			fr = waitWithProgress(slots[i], opt.Progress, &done, total)
		} else {
			fr = <-slots[i]
		}
		<-inFlight
		if fr.err != nil {
			firstErr = fr.err
			close(stop)
			break
		}
		m.add(fr)
	}
	if firstErr != nil {
		// Drain so that the workers can exit.
		go func() {
			for range jobs {
			}
		}()
		wg.Wait()
		return nil, firstErr
	}
	wg.Wait()
	if opt.Progress != nil {
		opt.Progress(done.Load(), total)
	}
	return m.result(), nil
}

func waitWithProgress(slot chan *fileResult, progress func(done, total int64), done *atomic.Int64, total int64) *fileResult {
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
	err      error
}

// fileParser parses files one at a time, reusing its buffers.
type fileParser struct {
	opt    Options
	lr     *LineReader
	intern map[string]string
	done   *atomic.Int64
	line   lineFields
	cur    *fileResult
}

func newFileParser(opt Options, done *atomic.Int64) *fileParser {
	fp := &fileParser{opt: opt, intern: make(map[string]string), done: done}
	fp.lr = NewLineReader(nil, 1<<20)
	fp.lr.NoMultiLine = opt.CCUsage
	fp.lr.OnSkip = func(line, lines int, reason string) { fp.skip(line, lines, reason) }
	return fp
}

func (fp *fileParser) str(s string) string {
	if v, ok := fp.intern[s]; ok {
		return v
	}
	fp.intern[s] = s
	return s
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
	markUsage       = []byte(`"usage"`)
	markUsageStrict = []byte(`"usage":{`)
	markTurn        = []byte(`"turn_duration"`)
)

func (fp *fileParser) parse(path string, index int32) *fileResult {
	fr := &fileResult{index: index, src: SourceOf(path), skipped: make(map[string]int)}
	fp.cur = fr
	f, err := os.Open(path)
	if err != nil {
		fr.err = fmt.Errorf("transcripts: %w", err)
		return fr
	}
	defer f.Close()
	cr := &countingReader{r: f, done: fp.done}
	fp.lr.Reset(cr)
	mark := markUsage
	if fp.opt.CCUsage {
		mark = markUsageStrict
	}
	for {
		rec, line, ok := fp.lr.Next()
		if !ok {
			break
		}
		switch {
		case bytes.Contains(rec, mark):
			fp.usageRecord(rec, line)
		case bytes.Contains(rec, markTurn):
			if parseLine(rec, &fp.line) == nil && fp.line.Type == "system" && fp.line.Subtype == "turn_duration" {
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

func (fp *fileParser) seeTime(ts string) {
	if ts == "" {
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

// usageRecord turns a record that mentions usage into an observation, or counts why not.
func (fp *fileParser) usageRecord(rec []byte, line int) {
	if hasNullField(rec) {
		fp.skip(line, 1, ReasonNullField)
		return
	}
	lf := &fp.line
	if err := parseLine(rec, lf); err != nil {
		switch err {
		case errTruncated:
			fp.skip(line, 1, ReasonTruncated)
		case errType:
			fp.skip(line, 1, ReasonInvalidUsage)
		default:
			fp.skip(line, 1, ReasonMalformed)
		}
		return
	}
	fp.seeTime(lf.Timestamp)
	direct := lf.HasMessage && lf.Message.HasUsage
	directOK := direct && lf.Message.Usage.HasInput && lf.Message.Usage.HasOutput && lf.Timestamp != ""
	progress := !fp.opt.NoProgress && lf.HasProgress && lf.Progress.HasMessage && lf.Progress.Message.HasUsage
	progressOK := progress && lf.Progress.Message.Usage.HasInput && lf.Progress.Message.Usage.HasOutput && lf.Progress.Timestamp != ""
	if !directOK && progressOK {
		fp.seeTime(lf.Progress.Timestamp)
	}
	switch {
	case directOK:
		fp.observe(line, lf.Timestamp, &lf.Message, lf.RequestID, lf.HasRequestID, lf.Sidechain, false, lf)
	case progressOK:
		fp.observe(line, lf.Progress.Timestamp, &lf.Progress.Message, lf.Progress.RequestID, lf.Progress.HasRequestID, lf.Progress.Sidechain, true, lf)
	case direct && lf.Timestamp == "" || progress && lf.Progress.Timestamp == "":
		fp.skip(line, 1, ReasonNoTimestamp)
	case direct || progress:
		fp.skip(line, 1, ReasonInvalidUsage)
	}
	// Otherwise "usage" only appeared in text: not a usage record.
}

func (fp *fileParser) observe(line int, ts string, m *messageFields, reqID string, hasReq, sidechain, progress bool, lf *lineFields) {
	ms, ok := parseTimestamp(ts)
	if !ok {
		fp.skip(line, 1, ReasonNoTimestamp)
		return
	}
	if (!progress && lf.HasVersion && !isSemverPrefix(lf.Version)) ||
		(!progress && lf.HasSessionID && lf.SessionID == "") ||
		(hasReq && reqID == "") || (m.HasID && m.ID == "") || (m.HasModel && m.Model == "") {
		fp.skip(line, 1, ReasonInvalidField)
		return
	}
	fr := fp.cur
	fr.counts.UsageLines++
	o := observation{
		MessageID:      m.ID,
		RequestID:      reqID,
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
	o.Usage.Speed = fp.str(o.Usage.Speed)
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
		if lf.AgentID != "" {
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

// findTimestamp returns the top-level timestamp of a record without parsing it. Claude Code writes
// "timestamp" near the end of most lines (and before the large toolUseResult of user lines), so the
// tail is searched first, then the whole record. Only used for the span of a session (wall time).
func findTimestamp(rec []byte) string {
	const tail = 256
	if len(rec) > tail {
		if ts := timestampAfter(rec[len(rec)-tail:], true); ts != "" {
			return ts
		}
	}
	return timestampAfter(rec, false)
}

var markTimestamp = []byte(`"timestamp"`)

func timestampAfter(b []byte, last bool) string {
	for len(b) > 0 {
		var i int
		if last {
			i = bytes.LastIndex(b, markTimestamp)
		} else {
			i = bytes.Index(b, markTimestamp)
		}
		if i < 0 {
			return ""
		}
		rest := bytes.TrimLeft(b[i+len(markTimestamp):], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			rest = bytes.TrimLeft(rest[1:], " \t\r\n")
			if len(rest) > 0 && rest[0] == '"' {
				if j := bytes.IndexByte(rest[1:], '"'); j >= 0 {
					return string(rest[1 : 1+j])
				}
			}
		}
		if last {
			b = b[:i]
		} else {
			b = b[i+len(markTimestamp):]
		}
	}
	return ""
}

// parseTimestamp parses Claude Code's "2026-02-11T20:36:47.925Z" quickly, anything else with
// time.RFC3339Nano. It returns Unix milliseconds.
func parseTimestamp(s string) (int64, bool) {
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
		if ok && d[1] >= 1 && d[1] <= 12 && d[2] >= 1 && d[2] <= 31 && d[3] < 24 && d[4] < 60 && d[5] < 60 {
			t := time.Date(d[0], time.Month(d[1]), d[2], d[3], d[4], d[5], d[6]*1e6, time.UTC)
			if t.Day() == d[2] {
				return t.UnixMilli(), true
			}
		}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return t.UnixMilli(), true
}

// isSemverPrefix is ccusage's version check: digits '.' digits '.' digit, then anything.
func isSemverPrefix(v string) bool {
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

// merger folds parsed files into the result, in path order.
type merger struct {
	opt      Options
	dedup    *Deduper
	res      *Result
	sessions map[string]*Session
	files    []Source
}

func newMerger(opt Options) *merger {
	d := NewDeduper()
	d.MaxTotal = opt.MaxTotal
	return &merger{
		opt:      opt,
		dedup:    d,
		res:      &Result{Skipped: make(map[string]int)},
		sessions: make(map[string]*Session),
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
	m.files = append(m.files, *src)
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
	for i := range fr.obs {
		m.dedup.Add(&fr.obs[i], src.Session, src.Project, src.Path)
	}
}

func (m *merger) result() *Result {
	res := m.res
	res.Requests = m.dedup.Requests()
	versions := make(map[string]map[string]bool)
	for i := range res.Requests {
		r := &res.Requests[i]
		if r.Effort == "" && m.opt.Label != "" {
			r.Effort, r.EffortSrc = m.opt.Label, EffortLabel
		}
		s := m.sessions[r.Session]
		if s == nil {
			s = &Session{ID: r.Session, Project: r.Project, Label: m.opt.Label}
			m.sessions[r.Session] = s
		}
		s.Requests++
		if r.Version != "" {
			if versions[r.Session] == nil {
				versions[r.Session] = make(map[string]bool)
			}
			versions[r.Session][r.Version] = true
		}
	}
	ids := make([]string, 0, len(m.sessions))
	for id := range m.sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		s := m.sessions[id]
		s.Versions = sortedKeys(versions[id])
		res.Sessions = append(res.Sessions, *s)
	}
	return res
}
