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

// reqState is a request being merged: the public record plus what the merge rules need.
type reqState struct {
	Request
	hasMessageID  bool
	hasRequestID  bool
	keptSidechain bool // whether the usage kept so far came from a sidechain line
	fromProgress  bool // attribution came from an agent_progress copy
	usage         usageFields
	maxTotal      uint64
	firstMs       int64
	lastMs        int64
	usageMs       int64
	// Thinking blocks are counted per origin (file, and progress copy or not), keeping the origin with
	// the most: the same block appears once in a subagent file and once as a progress copy, and a
	// resumed session repeats earlier lines in a new file.
	origin     int32
	curBlocks  int32
	curChars   int64
	bestBlocks int32
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

	reqs      []reqState
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
		if (best < 0 || r < best) && match(&d.reqs[r]) {
			best = r
		}
	}
	return best
}

// Add merges one observation read from file, whose session and project the path gives.
func (d *Deduper) Add(o *observation, session, project, file string) {
	if !o.HasMessageID {
		d.push(o, session, project, file)
		return
	}
	exactHash := d.hashKey(o.MessageID, o.RequestID, o.HasRequestID)
	idx := d.find(d.exact, exactHash, func(r *reqState) bool {
		return r.MessageID == o.MessageID && r.hasRequestID == o.HasRequestID && r.RequestID == o.RequestID
	})
	replay := false
	if idx < 0 {
		idx = d.find(d.byMessage, d.hashMessage(o.MessageID), func(r *reqState) bool {
			return r.hasMessageID && r.MessageID == o.MessageID && (o.Sidechain || r.keptSidechain)
		})
		replay = idx >= 0
	}
	if idx < 0 {
		idx = d.push(o, session, project, file)
		d.link(d.exact, exactHash, idx)
		d.link(d.byMessage, d.hashMessage(o.MessageID), idx)
		return
	}
	if d.merge(&d.reqs[idx], o, replay, session, file) {
		r := &d.reqs[idx]
		d.link(d.exact, d.hashKey(r.MessageID, r.RequestID, r.hasRequestID), idx)
		d.link(d.byMessage, d.hashMessage(r.MessageID), idx)
	}
}

func (d *Deduper) push(o *observation, session, project, file string) int32 {
	r := reqState{
		Request: Request{
			MessageID: o.MessageID,
			RequestID: o.RequestID,
			Session:   session,
			Project:   project,
			AgentID:   o.AgentID,
			Class:     o.Class,
			Model:     o.Model,
			Effort:    o.Effort,
			Version:   o.Version,
			Speed:     o.Usage.Speed,
			File:      file,
		},
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
	d.reqs = append(d.reqs, r)
	return int32(len(d.reqs) - 1)
}

func originOf(o *observation) int32 {
	if o.Progress {
		return o.File*2 + 1
	}
	return o.File * 2
}

// merge folds o into r. It reports whether r's ids changed (so the indexes must learn them).
func (d *Deduper) merge(r *reqState, o *observation, replay bool, session, file string) bool {
	if o.TimeMs < r.firstMs {
		r.firstMs = o.TimeMs
	}
	if o.TimeMs > r.lastMs {
		r.lastMs = o.TimeMs
	}
	if o.Effort != "" {
		r.Effort = o.Effort
	}
	if r.Model == "" {
		r.Model = o.Model
	}
	if r.Version == "" {
		r.Version = o.Version
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
				d.sideQuestion[session+"\x00"+o.AgentID] = true
			}
			if !replay && r.fromProgress && !o.Progress {
				// The subagent's own file: its class (subagent or compaction) and agent id win.
				r.Class, r.AgentID, r.fromProgress = o.Class, o.AgentID, false
			}
			return false
		}
		// The non-sidechain line wins the usage.
		if replay {
			// The parent arrived after a /btw replay: the replay's log is a side question and the
			// request belongs to the parent.
			d.sideQuestion[r.Session+"\x00"+r.AgentID] = true
			r.Class, r.AgentID, r.Session, r.File = o.Class, o.AgentID, session, file
			r.fromProgress = o.Progress
		}
		r.keptSidechain = false
		idsChanged = r.RequestID != o.RequestID || r.hasRequestID != o.HasRequestID
		r.RequestID, r.hasRequestID = o.RequestID, o.HasRequestID
		r.usage, r.maxTotal, r.usageMs = o.Usage, total, o.TimeMs
		r.Speed = o.Usage.Speed
		return idsChanged
	default:
		if r.fromProgress && !o.Progress && o.Class != ClassMain {
			r.Class, r.AgentID, r.fromProgress = o.Class, o.AgentID, false
		}
		if total > r.maxTotal {
			idsChanged = r.RequestID != o.RequestID || r.hasRequestID != o.HasRequestID
			r.RequestID, r.hasRequestID = o.RequestID, o.HasRequestID
			r.maxTotal, r.usageMs = total, o.TimeMs
			r.Speed = o.Usage.Speed
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

// Requests finalises the merged requests, in order of first appearance.
func (d *Deduper) Requests() []Request {
	out := make([]Request, len(d.reqs))
	for i := range d.reqs {
		r := &d.reqs[i]
		r.keepBestThinking()
		q := r.Request
		u := &r.usage
		q.InputTokens = u.Input
		q.OutputTokens = u.Output
		q.CacheCreationTokens = u.cacheWrite()
		if u.HasSplit {
			q.CacheCreation5m, q.CacheCreation1h = u.Cache5m, u.Cache1h
		} else {
			q.CacheCreation5m = u.CacheCreation
		}
		q.CacheReadTokens = u.CacheRead
		q.ThinkingBlocks = int(r.bestBlocks)
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
		q.First, q.Last, q.UsageTime = msTime(r.firstMs), msTime(r.lastMs), msTime(r.usageMs)
		out[i] = q
	}
	return out
}

// Len is the number of requests so far.
func (d *Deduper) Len() int { return len(d.reqs) }

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
