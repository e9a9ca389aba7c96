package transcript

import (
	"hash/maphash"
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

// reqState is a request being merged. It is kept compact (about 300 bytes plus its two ids) because
// a scan holds one per request until the end: a later line can still raise a request's usage.
type reqState struct {
	messageID, requestID string
	agentID, model       string // interned
	effort, version      string // interned
	file                 int32  // index of the file that attributes the request (session, project)
	class                Class
	hasMessageID         bool
	hasRequestID         bool
	keptSidechain        bool // whether the usage kept so far came from a sidechain line
	fromProgress         bool // attribution came from an agent_progress copy
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

// chainNode links requests that share a hash; ccusage matches on the request's current ids, so the
// chains are verified against them.
type chainNode struct {
	req  int32
	next int32
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
type Deduper struct {
	// MaxTotal keeps, per request, the whole usage of the line with the largest total (ccusage's exact
	// rule) instead of the field-wise maximum.
	MaxTotal bool

	chunks    [][]reqState // requests in order, in fixed-size chunks so that growth never copies them
	n         int32
	sources   []Source // per file index, registered by AddFile
	nodes     []chainNode
	exact     map[uint64]int32 // hash(message.id, requestId) → first chain node
	byMessage map[uint64]int32 // hash(message.id) → first chain node
	seed      maphash.Seed
	// sideQuestion holds session+"\x00"+agent of the logs that replay parent messages (/btw).
	sideQuestion map[string]bool
}

// NewDeduper returns an empty Deduper.
func NewDeduper() *Deduper {
	return &Deduper{
		exact:        make(map[uint64]int32),
		byMessage:    make(map[uint64]int32),
		seed:         maphash.MakeSeed(),
		sideQuestion: make(map[string]bool),
	}
}

const chunkBits = 12

func (d *Deduper) at(i int32) *reqState {
	return &d.chunks[i>>chunkBits][i&(1<<chunkBits-1)]
}

// AddFile registers the next file; observations name it by its index (the order of AddFile calls).
func (d *Deduper) AddFile(src Source) {
	d.sources = append(d.sources, src)
}

func (d *Deduper) hashKey(msg, req string, hasReq bool) uint64 {
	var h maphash.Hash
	h.SetSeed(d.seed)
	h.WriteString(msg)
	if hasReq {
		h.WriteByte(1)
		h.WriteString(req)
	} else {
		h.WriteByte(0)
	}
	return h.Sum64()
}

func (d *Deduper) hashMessage(msg string) uint64 {
	return maphash.String(d.seed, msg)
}

func (d *Deduper) link(m map[uint64]int32, h uint64, req int32) {
	// Skip when the request is already on this chain (ccusage's index push is idempotent).
	head, ok := m[h]
	for n := head; ok && n >= 0; n = d.nodes[n].next {
		if d.nodes[n].req == req {
			return
		}
	}
	next := int32(-1)
	if ok {
		next = head
	}
	d.nodes = append(d.nodes, chainNode{req: req, next: next})
	m[h] = int32(len(d.nodes) - 1)
}

// find returns the lowest-numbered request on chain h that matches, or -1.
func (d *Deduper) find(m map[uint64]int32, h uint64, match func(*reqState) bool) int32 {
	head, ok := m[h]
	if !ok {
		return -1
	}
	best := int32(-1)
	for n := head; n >= 0; n = d.nodes[n].next {
		r := d.nodes[n].req
		if (best < 0 || r < best) && match(d.at(r)) {
			best = r
		}
	}
	return best
}

// Add merges one observation; its file must have been registered with AddFile.
func (d *Deduper) Add(o *observation) {
	if !o.HasMessageID {
		d.push(o)
		return
	}
	exactHash := d.hashKey(o.MessageID, o.RequestID, o.HasRequestID)
	idx := d.find(d.exact, exactHash, func(r *reqState) bool {
		return r.messageID == o.MessageID && r.hasRequestID == o.HasRequestID && r.requestID == o.RequestID
	})
	replay := false
	if idx < 0 {
		idx = d.find(d.byMessage, d.hashMessage(o.MessageID), func(r *reqState) bool {
			return r.hasMessageID && r.messageID == o.MessageID && (o.Sidechain || r.keptSidechain)
		})
		replay = idx >= 0
	}
	if idx < 0 {
		idx = d.push(o)
		d.link(d.exact, exactHash, idx)
		d.link(d.byMessage, d.hashMessage(o.MessageID), idx)
		return
	}
	if r := d.at(idx); d.merge(r, o, replay) {
		d.link(d.exact, d.hashKey(r.messageID, r.requestID, r.hasRequestID), idx)
		d.link(d.byMessage, d.hashMessage(r.messageID), idx)
	}
}

func (d *Deduper) push(o *observation) int32 {
	if d.n&(1<<chunkBits-1) == 0 {
		d.chunks = append(d.chunks, make([]reqState, 1<<chunkBits))
	}
	i := d.n
	d.n++
	*d.at(i) = reqState{
		messageID:     o.MessageID,
		requestID:     o.RequestID,
		agentID:       o.AgentID,
		model:         o.Model,
		effort:        o.Effort,
		version:       o.Version,
		file:          o.File,
		class:         o.Class,
		hasMessageID:  o.HasMessageID,
		hasRequestID:  o.HasRequestID,
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
	}
	return i
}

func originOf(o *observation) int32 {
	if o.Progress {
		return o.File*2 + 1
	}
	return o.File * 2
}

// merge folds o into r. It reports whether r's ids changed (so the indexes must learn them).
func (d *Deduper) merge(r *reqState, o *observation, replay bool) bool {
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

	idsChanged := false
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
		idsChanged = r.requestID != o.RequestID || r.hasRequestID != o.HasRequestID
		r.requestID, r.hasRequestID = o.RequestID, o.HasRequestID
		r.usage, r.maxTotal, r.usageMs = o.Usage, total, o.TimeMs
		return idsChanged
	default:
		if r.fromProgress && !o.Progress && o.Class != ClassMain {
			r.class, r.agentID, r.file, r.fromProgress = o.Class, o.AgentID, o.File, false
		}
		if total > r.maxTotal {
			idsChanged = r.requestID != o.RequestID || r.hasRequestID != o.HasRequestID
			r.requestID, r.hasRequestID = o.RequestID, o.HasRequestID
			r.maxTotal, r.usageMs = total, o.TimeMs
			if d.MaxTotal {
				r.usage = o.Usage
			}
		}
		if !d.MaxTotal {
			r.usage.max(&o.Usage)
		}
		return idsChanged
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

func (d *Deduper) markSideQuestion(file int32, agent string) {
	d.sideQuestion[d.sources[file].Session+"\x00"+agent] = true
}

// Requests finalises the merged requests, in order of first appearance (see Each).
func (d *Deduper) Requests() []Request {
	out := make([]Request, 0, d.n)
	d.Each(func(r *Request) { out = append(out, *r) })
	return out
}

// Each finalises the merged requests one at a time, in order of first appearance; r is valid only
// during the call. It consumes the Deduper: the merge state is released chunk by chunk, so that a
// caller that aggregates as it goes never holds every request twice.
func (d *Deduper) Each(fn func(r *Request)) {
	n := d.n
	d.exact, d.byMessage, d.nodes = nil, nil, nil
	for i := int32(0); i < n; i++ {
		if i > 0 && i&(1<<chunkBits-1) == 0 {
			d.chunks[(i>>chunkBits)-1] = nil
		}
		r := d.at(i)
		r.keepBestThinking()
		src := &d.sources[r.file]
		u := &r.usage
		q := Request{
			MessageID:       r.messageID,
			RequestID:       r.requestID,
			Session:         src.Session,
			Project:         src.Project,
			AgentID:         r.agentID,
			Class:           r.class,
			Model:           r.model,
			Effort:          r.effort,
			Version:         r.version,
			Speed:           u.Speed,
			File:            src.Path,
			InputTokens:     u.Input,
			OutputTokens:    u.Output,
			CacheReadTokens: u.CacheRead,
			ThinkingBlocks:  int(r.bestBlocks),
			First:           msTime(r.firstMs),
			Last:            msTime(r.lastMs),
			UsageTime:       msTime(r.usageMs),
		}
		q.CacheCreationTokens = u.cacheWrite()
		if u.HasSplit {
			q.CacheCreation5m, q.CacheCreation1h = u.Cache5m, u.Cache1h
		} else {
			q.CacheCreation5m = u.CacheCreation
		}
		switch {
		case u.HasThinking:
			q.ThinkingTokens, q.ThinkingSrc = u.Thinking, ThinkingExact
		case r.bestChars > 0:
			q.ThinkingTokens, q.ThinkingSrc = uint64((r.bestChars+3)/4), ThinkingEstimated
		default:
			q.ThinkingSrc = ThinkingUnknown
		}
		if q.Effort != "" {
			q.EffortSrc = EffortTranscript
		}
		if q.Class == ClassSubagent && d.sideQuestion[q.Session+"\x00"+q.AgentID] {
			q.Class = ClassSideQuestion
		}
		fn(&q)
	}
	d.chunks, d.n = nil, 0
}

// Len is the number of requests so far.
func (d *Deduper) Len() int { return int(d.n) }

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// sortedKeys returns the keys of a set, sorted.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
