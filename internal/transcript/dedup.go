package transcript

import (
	"encoding/binary"
	"math"
	"math/bits"
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

// idKey is a request's identity for deduplication: a 64-bit hash of message.id and a 32-bit hash of
// requestId (0 when the line has none). Hashes, not the ids, are kept once a request is finalised;
// two different requests share a key with probability about 2^-96 (2^-64 for the /btw rule, which
// matches on message.id alone), negligible next to the millions of requests a corpus holds.
type idKey struct {
	msg uint64
	req uint32
}

// Seeds of the id hashes. They are fixed so that a scan is deterministic, collisions included.
const (
	hashMsgSeed = 0x9e3779b97f4a7c15
	hashReqSeed = 0xc2b2ae3d27d4eb4f
	hashMul     = 0xa0761d6478bd642f
	hashMix     = 0xe7037ed1a0b428db
)

// hashID hashes an id eight bytes at a time with multiply-fold mixing (the wyhash construction).
// hash/maphash would do, but its seeds are random per process and results must not depend on the run.
func hashID(seed uint64, s string) uint64 {
	h := seed ^ uint64(len(s))*hashMul
	for ; len(s) >= 8; s = s[8:] {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = mulFold(h^w^hashMix, hashMul)
	}
	var w uint64
	for i := len(s) - 1; i >= 0; i-- {
		w = w<<8 | uint64(s[i])
	}
	return mulFold(mulFold(h^w^hashMix, hashMul), hashMix)
}

func mulFold(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

func keyOf(msgID, reqID string, hasReq bool) idKey {
	k := idKey{msg: hashID(hashMsgSeed, msgID)}
	if hasReq {
		if k.req = uint32(hashID(hashReqSeed, reqID)); k.req == 0 {
			k.req = 1 // 0 means "no requestId"
		}
	}
	return k
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

// Record flags (the first byte of a record; the second is the class).
const (
	recSidechain    = 1 << iota // keptSidechain
	recProgress                 // fromProgress
	recSplit                    // usage.HasSplit
	recThinking                 // usage.HasThinking
	recMessageID                // hasMessageID
	recSideQuestion             // emitted as a side question
	recReopened                 // reopened into a later group: a newer record will replace it
	recCost                     // usage.HasCost: the recorded costUSD follows the thinking counts
)

// Records live in chunks of 64 KB (a longer record, possible only with ids, gets a chunk of its own)
// and never move. A position is chunk<<16 | offset, so 32 bits address 4 GB of records: about a
// hundred million requests.
const (
	chunkBits = 16
	chunkSize = 1 << chunkBits
	maxChunks = 1<<(32-chunkBits) - 1 // the last position is kept free (keySlot's dead marker)
)

// encode appends r's record and returns its position. Layout: flags, class, then varints: seq;
// file; agent, model, effort, version and speed (interned); the seven usage fields; usage total −
// maxTotal (zigzag); first time (zigzag ms), last − first, usage time − first; best thinking blocks
// and characters; the recorded cost (8 bytes, when recCost); with keepIDs, the two ids (length and bytes).
func (d *Deduper) encode(r *reqState, sideQuestion bool) uint32 {
	var flags byte
	for _, f := range [...]struct {
		on  bool
		bit byte
	}{{r.keptSidechain, recSidechain}, {r.fromProgress, recProgress}, {r.usage.HasSplit, recSplit},
		{r.usage.HasThinking, recThinking}, {r.hasMessageID, recMessageID}, {sideQuestion, recSideQuestion},
		{r.usage.HasCost, recCost}} {
		if f.on {
			flags |= f.bit
		}
	}
	b := append(d.scratch[:0], flags, byte(r.class))
	b = binary.AppendUvarint(b, uint64(r.seq))
	b = binary.AppendUvarint(b, uint64(r.file))
	for _, s := range [...]string{r.agentID, r.model, r.effort, r.version, r.usage.Speed} {
		b = binary.AppendUvarint(b, uint64(d.intern(s)))
	}
	u := &r.usage
	for _, v := range [...]uint64{u.Input, u.Output, u.CacheCreation, u.Cache5m, u.Cache1h, u.CacheRead, u.Thinking} {
		b = binary.AppendUvarint(b, v)
	}
	// maxTotal is the total of one line; with the field-wise maximum (and a cache split on some lines
	// only) the merged usage can total more or less, so the difference is stored signed.
	b = binary.AppendVarint(b, int64(u.total()-r.maxTotal))
	b = binary.AppendVarint(b, r.firstMs)
	b = binary.AppendUvarint(b, uint64(r.lastMs-r.firstMs))
	b = binary.AppendUvarint(b, uint64(r.usageMs-r.firstMs))
	b = binary.AppendUvarint(b, uint64(r.bestBlocks))
	b = binary.AppendUvarint(b, uint64(r.bestChars))
	if u.HasCost {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(u.Cost))
	}
	if d.keepIDs {
		b = binary.AppendUvarint(b, uint64(len(r.messageID)))
		b = append(b, r.messageID...)
		b = binary.AppendUvarint(b, uint64(len(r.requestID)))
		b = append(b, r.requestID...)
	}
	d.scratch = b
	n := len(d.chunks)
	if n == 0 || len(d.chunks[n-1])+len(b) > cap(d.chunks[n-1]) {
		if n == maxChunks {
			panic("transcript: more than 4 GB of request records in one scan")
		}
		d.chunks = append(d.chunks, make([]byte, 0, max(chunkSize, len(b))))
		n++
	}
	off := len(d.chunks[n-1])
	d.chunks[n-1] = append(d.chunks[n-1], b...)
	return uint32(n-1)<<chunkBits | uint32(off)
}

// record returns the bytes from a record's start to the end of its chunk.
func (d *Deduper) record(pos uint32) []byte {
	return d.chunks[pos>>chunkBits][pos&(chunkSize-1):]
}

// recordSeq reads the seq of the record at pos.
func (d *Deduper) recordSeq(pos uint32) uint32 {
	v, _ := binary.Uvarint(d.record(pos)[2:])
	return uint32(v)
}

// next returns the position of the record after the one at pos, in the order written.
func (d *Deduper) next(pos uint32) (uint32, bool) {
	var r reqState
	c, off := pos>>chunkBits, pos&(chunkSize-1)
	if n := uint32(d.decode(pos, &r)); int(off+n) < len(d.chunks[c]) {
		return pos + n, true
	}
	if int(c)+1 < len(d.chunks) {
		return (c + 1) << chunkBits, true
	}
	return 0, false
}

// decode reads the record at pos into r (its key and links are the caller's) and returns the
// record's length in bytes. Whether it was emitted as a side question is sideQ's.
func (d *Deduper) decode(pos uint32, r *reqState) int {
	b := d.record(pos)
	flags := b[0]
	*r = reqState{class: Class(b[1]), origin: -1, nextMsg: -1}
	i := 2
	next := func() uint64 {
		v, n := binary.Uvarint(b[i:])
		i += n
		return v
	}
	r.seq = uint32(next())
	r.file = int32(next())
	r.agentID, r.model, r.effort, r.version = d.strs[next()], d.strs[next()], d.strs[next()], d.strs[next()]
	u := &r.usage
	u.Speed = d.strs[next()]
	u.Input, u.Output, u.CacheCreation, u.Cache5m, u.Cache1h, u.CacheRead, u.Thinking = next(), next(), next(), next(), next(), next(), next()
	u.HasInput, u.HasOutput = true, true
	u.HasSplit, u.HasThinking = flags&recSplit != 0, flags&recThinking != 0
	delta, n := binary.Varint(b[i:])
	i += n
	r.maxTotal = u.total() - uint64(delta)
	first, n := binary.Varint(b[i:])
	i += n
	r.firstMs = first
	r.lastMs = first + int64(next())
	r.usageMs = first + int64(next())
	r.bestBlocks, r.bestChars = int32(next()), int64(next())
	if flags&recCost != 0 {
		u.Cost, u.HasCost = math.Float64frombits(binary.LittleEndian.Uint64(b[i:])), true
		i += 8
	}
	if d.keepIDs {
		l := int(next())
		r.messageID = string(b[i : i+l])
		i += l
		l = int(next())
		r.requestID = string(b[i : i+l])
		i += l
	}
	r.keptSidechain = flags&recSidechain != 0
	r.fromProgress = flags&recProgress != 0
	r.hasMessageID = flags&recMessageID != 0
	return i
}

// sideQ reports whether the record at pos was emitted as a side question.
func (d *Deduper) sideQ(pos uint32) bool { return d.record(pos)[0]&recSideQuestion != 0 }

func (d *Deduper) intern(s string) uint32 {
	if i, ok := d.strIdx[s]; ok {
		return i
	}
	i := uint32(len(d.strs))
	d.strs = append(d.strs, s)
	d.strIdx[s] = i
	return i
}

// keyTable maps the keys of finalised requests to their records. It is open addressing with linear
// probing on the message hash, so that all requests sharing a message.id lie in one probe run (the
// /btw rule looks them up by message.id alone). A slot is 16 bytes and the load stays between 40 and
// 80 %; a Go map of the same keys would take about twice that, and a second map would be needed for
// the message lookup.
type keyTable struct {
	slots []keySlot
	used  int // occupied slots, dead ones included
}

type keySlot struct {
	msg  uint64
	req  uint32
	link uint32 // record position + 1; 0: empty; slotDead: the request was reopened
}

const slotDead = 1<<32 - 1

func (s *keySlot) pos() uint32 { return s.link - 1 }
func (s *keySlot) live() bool  { return s.link != 0 && s.link != slotDead }

func (t *keyTable) insert(k idKey, pos uint32) {
	if (t.used+1)*5 > len(t.slots)*4 {
		t.grow()
	}
	mask := len(t.slots) - 1
	i := int(k.msg) & mask
	for t.slots[i].link != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = keySlot{msg: k.msg, req: k.req, link: pos + 1}
	t.used++
}

// grow resizes the table to a load of at most 40 % (at least 1,024 slots), dropping dead slots.
func (t *keyTable) grow() {
	old := t.slots
	live := 0
	for i := range old {
		if old[i].live() {
			live++
		}
	}
	size := 1024
	for live*5 > size*2 {
		size *= 2
	}
	t.slots, t.used = make([]keySlot, size), 0
	mask := size - 1
	for _, s := range old {
		if s.live() {
			i := int(s.msg) & mask
			for t.slots[i].link != 0 {
				i = (i + 1) & mask
			}
			t.slots[i] = s
			t.used++
		}
	}
}

// find returns the slot of the live entry with key k, or -1.
func (t *keyTable) find(k idKey) int {
	if len(t.slots) == 0 {
		return -1
	}
	mask := len(t.slots) - 1
	for i := int(k.msg) & mask; t.slots[i].link != 0; i = (i + 1) & mask {
		if s := &t.slots[i]; s.msg == k.msg && s.req == k.req && s.link != slotDead {
			return i
		}
	}
	return -1
}

// eachMessage calls fn with every live slot whose message hash is msg.
func (t *keyTable) eachMessage(msg uint64, fn func(i int)) {
	if len(t.slots) == 0 {
		return
	}
	mask := len(t.slots) - 1
	for i := int(msg) & mask; t.slots[i].link != 0; i = (i + 1) & mask {
		if s := &t.slots[i]; s.msg == msg && s.link != slotDead {
			fn(i)
		}
	}
}

func (t *keyTable) kill(i int) { t.slots[i].link = slotDead }

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
