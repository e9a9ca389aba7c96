package transcript

import (
	"sort"
	"time"
)

// observation is one line's view of a request, kept compact because a scan holds the observations of
// a whole file before they are merged in path order.
type observation struct {
	MessageID, RequestID string
	HasMessageID         bool
	HasRequestID         bool
	Sidechain            bool // the line's isSidechain (the nested one for agent_progress copies)
	Progress             bool // an agent_progress copy in a parent file
	Class                Class
	AgentID              string
	Model, Version       string
	Effort               string
	TimeMs               int64
	Usage                usageFields
	ThinkingBlocks       int32
	ThinkingChars        int64
	File                 int32 // index of the file in scan order
	Line                 int32
}

// reqState is a request being merged: one per request of the session group being read.
type reqState struct {
	seq                  uint32 // order of first appearance over the whole scan
	key                  idKey  // current ids: the request id switches when another line's usage wins
	nextMsg              int32  // next live request with the same message hash, -1 at the end
	messageID, requestID string // kept for Requests and OnRequest only ("" in Sink-only scans once reopened)
	agentID, model       string // interned
	effort, version      string // interned
	file                 int32  // index of the file that attributes the request (session, project)
	class                Class  // never ClassSideQuestion: that is decided when the request is emitted
	hasMessageID         bool
	keptSidechain        bool   // whether the usage kept so far came from a sidechain line
	fromProgress         bool   // attribution came from an agent_progress copy
	reopened             bool   // finalised in an earlier group and reopened by a later copy
	oldPos               uint32 // the record of the reopened request's emitted version
	usage                usageFields
	maxTotal             uint64
	firstMs, lastMs      int64
	usageMs              int64
	// Thinking blocks are counted per origin (file, and progress copy or not), keeping the origin with
	// the most: the same block appears once in a subagent file and once as a progress copy, and a
	// resumed session repeats earlier lines in a new file.
	origin     int32
	curBlocks  int32
	bestBlocks int32
	curChars   int64
	bestChars  int64
}

// Deduper merges observations into requests with ccusage 20.x's rules:
//
//  1. Key (message.id, requestId); a line without message.id is never merged.
//  2. On a key match, if exactly one of the two is a sidechain line, the non-sidechain usage wins.
//     Otherwise the usage is merged field by field, keeping the maximum of each field (ccusage keeps
//     the line with the largest total; on Claude Code's monotone streaming counts the two agree, see
//     TestFieldwiseMaxEqualsMaxTotal). MaxTotal switches to ccusage's exact whole-line rule.
//  3. /btw replay: with no exact match, a line whose message.id was already seen is the same request
//     when either side is a sidechain line; the parent's usage is kept and the replaying log is marked
//     as a side-question log.
//  4. Scope: global over everything added, in the order added (files in path order).
//
// Attribution: agent_progress copies are attributed to their subagent; when the subagent's own file
// has the same request, the file's class (subagent or compaction) and agent id win.
//
// Memory. The lines of a request are consecutive in one file, and its agent_progress copies and /btw
// replays sit in the same session directory, so nearly every merge happens within a session group
// (the consecutive files of one session). Flush finalises the group: each request is emitted and
// then kept only as a key-table slot (16 bytes, at 40–80 % load) and a varint record (about 36
// bytes) holding what the rules and the emitted values need. A later copy of a finalised request (a
// resumed or forked session repeats earlier lines under a new session id) reopens it from its
// record, so the rules apply exactly as if everything had been held; if the merge changes the
// request, the emitted version is retracted (emit(false, old)) and the new one emitted. No rule needs
// more: every rule reads only the two requests being merged, except the side-question mark, which
// reclassifies a whole subagent log and is applied to its finalised records when it is set. Some
// state per key is unavoidable for exact global deduplication: whether a key was seen cannot be
// answered without remembering the keys.
type Deduper struct {
	// MaxTotal keeps, per request, the whole usage of the line with the largest total (ccusage's exact
	// rule) instead of the field-wise maximum.
	MaxTotal bool
	// ReplaySameTime narrows rule 3 (/btw replays) as ccusage's session report (and its weekly,
	// monthly and blocks reports) does: a replay with a new requestId is the same request only when
	// its line has the timestamp of the line kept so far; otherwise it is a request of its own.
	ReplaySameTime bool
	// TieSpeed is the tie rule of ccusage's session report (and its weekly, monthly and blocks
	// reports), with MaxTotal: of two lines with equal usage totals, a later line that records a speed
	// replaces a kept line that records none (its usage, cost and time); otherwise the first line stays.
	// Measured on testdata/tiecorpus (docs/decisions.md#cost-and-date-views-in-the-audit-issue-13).
	TieSpeed bool
	// Label is the effort of requests whose lines record none (Options.Label).
	Label string

	keepIDs bool // records keep message and request ids (Requests, Each)
	// emit receives finalised requests at Flush (add), and the retracted version of a request that a
	// later copy changed (!add, followed by the new version).
	emit func(add bool, r *Request)
	// reclassify: a new side-question mark is applied to finalised records at once, through emit
	// (Sink scans); otherwise marks are applied when records are read back (Each).
	reclassify bool

	sources []Source
	seq     uint32

	live    []reqState       // the current group's requests
	liveKey map[idKey]int32  // current key → live index
	liveMsg map[uint64]int32 // message hash → first live index (chained by nextMsg)

	table   keyTable
	chunks  [][]byte // the records of finalised requests
	offsets []uint32 // with keepIDs: per seq, the position of the request's latest record (for Each)
	scratch []byte

	strs   []string // interned agent ids, models, efforts, versions and speeds of the records
	strIdx map[string]uint32

	// sideQuestion holds session+"\x00"+agent of the logs that replay parent messages (/btw).
	sideQuestion map[string]bool
	// flushedLogs holds session+"\x00"+agent of subagent logs with finalised requests (reclassify).
	flushedLogs map[string]bool
}

// NewDeduper returns an empty Deduper that keeps ids for Requests and Each.
func NewDeduper() *Deduper {
	return &Deduper{
		keepIDs:      true,
		liveKey:      make(map[idKey]int32),
		liveMsg:      make(map[uint64]int32),
		strs:         []string{""},
		strIdx:       map[string]uint32{"": 0},
		sideQuestion: make(map[string]bool),
		flushedLogs:  make(map[string]bool),
	}
}

// AddFile registers the next file; observations name it by its index (the order of AddFile calls).
func (d *Deduper) AddFile(src Source) {
	d.sources = append(d.sources, src)
}

// Add merges one observation; its file must have been registered with AddFile.
func (d *Deduper) Add(o *observation) {
	if !o.HasMessageID {
		d.push(o, idKey{})
		return
	}
	k := keyOf(o.MessageID, o.RequestID, o.HasRequestID)
	idx := d.findExact(k)
	replay := false
	if idx < 0 {
		idx = d.findReplay(k.msg, o.Sidechain, o.TimeMs)
		replay = idx >= 0
	}
	if idx < 0 {
		d.push(o, k)
		return
	}
	r := &d.live[idx]
	old := r.key
	if d.merge(r, o, k, replay) {
		if d.liveKey[old] == idx {
			delete(d.liveKey, old)
		}
		d.liveKey[r.key] = idx
	}
}

// findExact returns the live index of the request whose current key is k, reopening a finalised one,
// or -1. At most one request has a given current key: a request is created under k only when none
// has it, and takes another line's key only when no request has that one.
func (d *Deduper) findExact(k idKey) int32 {
	if idx, ok := d.liveKey[k]; ok {
		return idx
	}
	if slot := d.table.find(k); slot >= 0 {
		return d.reopen(slot)
	}
	return -1
}

// findReplay returns the earliest request (live or finalised) with message hash msg that the /btw
// rule matches — either side a sidechain line, and with ReplaySameTime the kept line at ms — or -1.
func (d *Deduper) findReplay(msg uint64, sidechain bool, ms int64) int32 {
	best, bestSeq := int32(-1), uint32(0)
	if head, ok := d.liveMsg[msg]; ok {
		for j := head; j >= 0; j = d.live[j].nextMsg {
			r := &d.live[j]
			if d.ReplaySameTime && r.usageMs != ms {
				continue
			}
			if (sidechain || r.keptSidechain) && (best < 0 || r.seq < bestSeq) {
				best, bestSeq = j, r.seq
			}
		}
	}
	slot := -1
	d.table.eachMessage(msg, func(i int) {
		pos := d.table.slots[i].pos()
		if !sidechain && d.record(pos)[0]&recSidechain == 0 {
			return
		}
		if d.ReplaySameTime {
			var r reqState
			if d.decode(pos, &r); r.usageMs != ms {
				return
			}
		}
		if seq := d.recordSeq(pos); best < 0 && slot < 0 || seq < bestSeq {
			slot, bestSeq = i, seq
		}
	})
	if slot >= 0 {
		return d.reopen(slot)
	}
	return best
}

func (d *Deduper) push(o *observation, k idKey) int32 {
	idx := int32(len(d.live))
	d.live = append(d.live, reqState{
		seq:           d.seq,
		key:           k,
		nextMsg:       -1,
		messageID:     o.MessageID,
		requestID:     o.RequestID,
		agentID:       o.AgentID,
		model:         o.Model,
		effort:        o.Effort,
		version:       o.Version,
		file:          o.File,
		class:         o.Class,
		hasMessageID:  o.HasMessageID,
		keptSidechain: o.Sidechain,
		fromProgress:  o.Progress,
		usage:         o.Usage,
		maxTotal:      o.Usage.total(),
		firstMs:       o.TimeMs,
		lastMs:        o.TimeMs,
		usageMs:       o.TimeMs,
		origin:        originOf(o),
		curBlocks:     o.ThinkingBlocks,
		curChars:      o.ThinkingChars,
	})
	d.seq++
	if o.HasMessageID {
		d.link(idx)
	}
	return idx
}

// link indexes live request idx under its current key and its message hash.
func (d *Deduper) link(idx int32) {
	r := &d.live[idx]
	d.liveKey[r.key] = idx
	if head, ok := d.liveMsg[r.key.msg]; ok {
		r.nextMsg = head
	}
	d.liveMsg[r.key.msg] = idx
}

// reopen brings the finalised request of table slot i back into the live group.
func (d *Deduper) reopen(i int) int32 {
	s := d.table.slots[i]
	d.table.kill(i)
	pos := s.pos()
	var r reqState
	d.decode(pos, &r)
	r.key, r.reopened, r.oldPos = idKey{s.msg, s.req}, true, pos
	d.record(pos)[0] |= recReopened
	idx := int32(len(d.live))
	d.live = append(d.live, r)
	d.link(idx)
	return idx
}

func originOf(o *observation) int32 {
	if o.Progress {
		return o.File*2 + 1
	}
	return o.File * 2
}

// merge folds o (key k) into r. It reports whether r's key changed (so the index must learn it).
func (d *Deduper) merge(r *reqState, o *observation, k idKey, replay bool) bool {
	if o.TimeMs < r.firstMs {
		r.firstMs = o.TimeMs
	}
	if o.TimeMs > r.lastMs {
		r.lastMs = o.TimeMs
	}
	if o.Effort != "" {
		r.effort = o.Effort
	}
	if r.model == "" {
		r.model = o.Model
	}
	if r.version == "" {
		r.version = o.Version
	}
	// Thinking blocks: one accumulator per origin, keep the richest origin.
	if org := originOf(o); org == r.origin {
		r.curBlocks += o.ThinkingBlocks
		r.curChars += o.ThinkingChars
	} else {
		r.keepBestThinking()
		r.origin, r.curBlocks, r.curChars = org, o.ThinkingBlocks, o.ThinkingChars
	}

	keyChanged := false
	total := o.Usage.total()
	switch {
	case o.Sidechain != r.keptSidechain:
		if o.Sidechain {
			// A sidechain line never displaces a parent's usage.
			if replay {
				d.markSideQuestion(o.File, o.AgentID)
			}
			if !replay && r.fromProgress && !o.Progress {
				// The subagent's own file: its class (subagent or compaction) and agent id win.
				r.class, r.agentID, r.file, r.fromProgress = o.Class, o.AgentID, o.File, false
			}
			return false
		}
		// The non-sidechain line wins the usage.
		if replay {
			// The parent arrived after a /btw replay: the replay's log is a side question and the
			// request belongs to the parent.
			d.markSideQuestion(r.file, r.agentID)
			r.class, r.agentID, r.file, r.fromProgress = o.Class, o.AgentID, o.File, o.Progress
		}
		r.keptSidechain = false
		keyChanged = r.key != k
		r.key, r.requestID = k, o.RequestID
		r.usage, r.maxTotal, r.usageMs = o.Usage, total, o.TimeMs
		return keyChanged
	default:
		if r.fromProgress && !o.Progress && o.Class != ClassMain {
			r.class, r.agentID, r.file, r.fromProgress = o.Class, o.AgentID, o.File, false
		}
		if total > r.maxTotal || d.MaxTotal && d.TieSpeed && total == r.maxTotal && r.usage.Speed == "" && o.Usage.Speed != "" {
			keyChanged = r.key != k
			r.key, r.requestID = k, o.RequestID
			r.maxTotal, r.usageMs = total, o.TimeMs
			if d.MaxTotal {
				r.usage = o.Usage
			}
			// The recorded cost is the kept line's, as ccusage keeps it (even under the field-wise max).
			r.usage.Cost, r.usage.HasCost = o.Usage.Cost, o.Usage.HasCost
		}
		if !d.MaxTotal {
			r.usage.max(&o.Usage)
		}
		return keyChanged
	}
}

// max raises every field of u to at least o's.
func (u *usageFields) max(o *usageFields) {
	maxU := func(a *uint64, b uint64) {
		if b > *a {
			*a = b
		}
	}
	maxU(&u.Input, o.Input)
	maxU(&u.Output, o.Output)
	maxU(&u.CacheCreation, o.CacheCreation)
	maxU(&u.CacheRead, o.CacheRead)
	maxU(&u.Cache5m, o.Cache5m)
	maxU(&u.Cache1h, o.Cache1h)
	u.HasSplit = u.HasSplit || o.HasSplit
	if o.HasThinking {
		maxU(&u.Thinking, o.Thinking)
		u.HasThinking = true
	}
	if u.Speed == "" {
		u.Speed = o.Speed
	}
}

func (r *reqState) keepBestThinking() {
	if r.curBlocks > r.bestBlocks || (r.curBlocks == r.bestBlocks && r.curChars > r.bestChars) {
		r.bestBlocks, r.bestChars = r.curBlocks, r.curChars
	}
}

func (d *Deduper) logKey(file int32, agent string) string {
	return d.sources[file].Session + "\x00" + agent
}

func (d *Deduper) markSideQuestion(file int32, agent string) {
	key := d.logKey(file, agent)
	if d.sideQuestion[key] {
		return
	}
	d.sideQuestion[key] = true
	if d.reclassify && d.flushedLogs[key] {
		d.reclassifyFlushed(d.sources[file].Session, agent)
	}
}

// reclassifyFlushed re-emits the finalised subagent requests of a log that has just been found to be
// a /btw log as side questions. It reads every record, which is fine: it happens once per such log,
// and only when its parent sorts after it in another session group.
func (d *Deduper) reclassifyFlushed(session, agent string) {
	var r reqState
	for pos, ok := uint32(0), len(d.chunks) > 0; ok; pos, ok = d.next(pos) {
		rec := d.record(pos)
		if rec[0]&(recReopened|recSideQuestion) != 0 || Class(rec[1]) != ClassSubagent {
			continue
		}
		d.decode(pos, &r)
		if r.agentID != agent || d.sources[r.file].Session != session {
			continue
		}
		old := d.request(&r, false)
		d.emit(false, &old)
		rec[0] |= recSideQuestion
		q := d.request(&r, true)
		d.emit(true, &q)
	}
}

// sideQuestionOf reports whether a request is emitted as a side question: a subagent request of a
// log that replays parent messages.
func (d *Deduper) sideQuestionOf(r *reqState) bool {
	return r.class == ClassSubagent && len(d.sideQuestion) > 0 && d.sideQuestion[d.logKey(r.file, r.agentID)]
}

// Flush finalises the live requests: emits them (retracting the earlier version of a reopened
// request that changed) and keeps each as a record and a key-table slot.
func (d *Deduper) Flush() {
	for i := range d.live {
		r := &d.live[i]
		r.keepBestThinking()
		sq := d.sideQuestionOf(r)
		if d.emit != nil {
			q := d.request(r, sq)
			if r.reopened {
				var was reqState
				d.decode(r.oldPos, &was)
				if old := d.request(&was, d.sideQ(r.oldPos)); old != q {
					d.emit(false, &old)
					d.emit(true, &q)
				}
			} else {
				d.emit(true, &q)
			}
		}
		pos := d.encode(r, sq)
		if d.keepIDs {
			if int(r.seq) < len(d.offsets) {
				d.offsets[r.seq] = pos
			} else {
				d.offsets = append(d.offsets, pos)
			}
		}
		if r.hasMessageID {
			d.table.insert(r.key, pos)
		}
		if d.reclassify && r.class == ClassSubagent {
			d.flushedLogs[d.logKey(r.file, r.agentID)] = true
		}
	}
	clear(d.live) // drop the strings
	d.live = d.live[:0]
	clear(d.liveKey)
	clear(d.liveMsg)
}

// request builds the emitted form of r.
func (d *Deduper) request(r *reqState, sideQuestion bool) Request {
	src := &d.sources[r.file]
	u := &r.usage
	q := Request{
		Session:        src.Session,
		Project:        src.Project,
		AgentID:        r.agentID,
		Class:          r.class,
		Model:          r.model,
		Effort:         r.effort,
		Version:        r.version,
		File:           src.Path,
		ThinkingBlocks: int(r.bestBlocks),
		First:          msTime(r.firstMs),
		Last:           msTime(r.lastMs),
		UsageTime:      msTime(r.usageMs),
	}
	if d.keepIDs {
		q.MessageID, q.RequestID = r.messageID, r.requestID
	}
	fillUsage(&q, u, r.bestChars)
	switch {
	case q.Effort != "":
		q.EffortSrc = EffortTranscript
	case d.Label != "":
		q.Effort, q.EffortSrc = d.Label, EffortLabel
	}
	if sideQuestion {
		q.Class = ClassSideQuestion
	}
	return q
}

// Requests finalises the merged requests, in order of first appearance (see Each).
func (d *Deduper) Requests() []Request {
	out := make([]Request, 0, d.seq)
	d.Each(func(r *Request) { out = append(out, *r) })
	return out
}

// Each finalises the merged requests and passes them to fn one at a time, in order of first
// appearance; r is valid only during the call. It consumes the Deduper. Without keepIDs (a Sink scan)
// it passes nothing: the emitted requests were the output.
func (d *Deduper) Each(fn func(r *Request)) {
	d.Flush()
	var r reqState
	for _, pos := range d.offsets {
		d.decode(pos, &r)
		q := d.request(&r, d.sideQuestionOf(&r))
		fn(&q)
	}
	d.chunks, d.offsets, d.table = nil, nil, keyTable{}
}

// EachBy is Each with the requests ordered by key, ascending, then by first appearance (nil key:
// Each). key sees every request once before fn gets the first; the sort costs 16 bytes per request
// while it lasts. A partitioned export asks for its days in order, so that it writes one file at a
// time (docs/decisions.md#parquet-exports).
func (d *Deduper) EachBy(key func(r *Request) int64, fn func(r *Request)) {
	if key != nil {
		d.Flush()
		d.sortBy(key)
	}
	d.Each(fn)
}

// sortBy reorders the seq index by key, then by first appearance.
func (d *Deduper) sortBy(key func(r *Request) int64) {
	type keyed struct {
		key int64
		pos uint32
	}
	order := make([]keyed, len(d.offsets))
	var r reqState
	for i, pos := range d.offsets {
		d.decode(pos, &r)
		q := d.request(&r, d.sideQuestionOf(&r))
		order[i] = keyed{key(&q), pos}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].key < order[j].key })
	for i, k := range order {
		d.offsets[i] = k.pos
	}
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// sortedKeys returns the keys of a count map whose count is positive, sorted.
func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k, n := range m {
		if n > 0 {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
