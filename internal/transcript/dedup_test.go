package transcript

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// randomScan is a random set of files and observations drawn from small id spaces, so that requests
// recur across files and sessions: every rule (sidechain preference, field-wise or whole-line
// maximum, /btw replays in both orders, progress copies, attribution changes, effort and thinking
// merges, side-question marks) fires, within one session group and across groups.
type randomScan struct {
	files []Source
	obs   [][]observation // per file
}

func newRandomScan(rng *rand.Rand) randomScan {
	var sc randomScan
	paths := []string{
		"projects/p/s1.jsonl", "projects/p/s1/subagents/agent-a1.jsonl", "projects/p/s1/subagents/agent-acompact-c1.jsonl",
		"projects/p/s2.jsonl", "projects/p/s2/subagents/agent-b2.jsonl", "projects/p/agent-old.jsonl",
		"projects/q/s3.jsonl", "projects/q/s3/subagents/agent-a1.jsonl",
	}
	nFiles := 1 + rng.IntN(7)
	for f := 0; f < nFiles; f++ {
		src := SourceOf(paths[rng.IntN(len(paths))])
		sc.files = append(sc.files, src)
		var obs []observation
		for n := rng.IntN(9); n > 0; n-- {
			o := observation{
				HasMessageID: rng.IntN(12) > 0,
				HasRequestID: rng.IntN(5) > 0,
				Sidechain:    rng.IntN(3) == 0,
				Progress:     src.Class == ClassMain && rng.IntN(4) == 0,
				Model:        []string{"", "opus", "haiku"}[rng.IntN(3)],
				Version:      []string{"", "2.1.39", "2.1.217"}[rng.IntN(3)],
				Effort:       []string{"", "", "low", "high"}[rng.IntN(4)],
				TimeMs:       int64(rng.IntN(100000)) - 1000,
				File:         int32(f),
				Usage: usageFields{
					Input: uint64(rng.IntN(4)), Output: uint64(rng.IntN(300)), CacheCreation: uint64(rng.IntN(50)),
					CacheRead: uint64(rng.IntN(1000)), HasInput: true, HasOutput: true,
					Speed: []string{"", "standard", "fast"}[rng.IntN(3)],
				},
				ThinkingBlocks: int32(rng.IntN(3)),
				ThinkingChars:  int64(rng.IntN(40)),
			}
			if o.HasMessageID {
				o.MessageID = fmt.Sprintf("msg_%d", rng.IntN(6))
			}
			if o.HasRequestID {
				o.RequestID = fmt.Sprintf("req_%d", rng.IntN(4))
			}
			if rng.IntN(3) == 0 {
				o.Usage.HasSplit, o.Usage.Cache5m, o.Usage.Cache1h = true, uint64(rng.IntN(40)), uint64(rng.IntN(40))
			}
			if rng.IntN(3) == 0 {
				o.Usage.HasThinking, o.Usage.Thinking = true, uint64(rng.IntN(200))
			}
			// As the parser classifies lines.
			o.Class, o.AgentID = src.Class, src.AgentID
			switch {
			case o.Progress:
				o.Class, o.AgentID = ClassSubagent, []string{"a1", "acompact-c1", "z9"}[rng.IntN(3)]
				if o.AgentID == "acompact-c1" {
					o.Class = ClassCompaction
				}
			case o.Class == ClassMain && o.Sidechain:
				o.Class, o.AgentID = ClassSubagent, "x"+fmt.Sprint(rng.IntN(2))
			case o.Class == ClassMain:
				o.AgentID = ""
			}
			obs = append(obs, o)
		}
		sc.obs = append(sc.obs, obs)
	}
	return sc
}

// run merges the scan; flushAfter(f) says whether to flush after file f.
func (sc randomScan) run(d *Deduper, flushAfter func(f int) bool) {
	for f, src := range sc.files {
		d.AddFile(src)
		for i := range sc.obs[f] {
			o := sc.obs[f][i] // a copy: the Deduper may keep its strings, never its address
			d.Add(&o)
		}
		if flushAfter(f) {
			d.Flush()
		}
	}
}

// multiset counts requests; Remove fails the test unless the exact request was added before.
type multiset struct {
	t       testing.TB
	m       map[Request]int
	removes int
}

func (s *multiset) Add(r *Request) { s.m[*r]++ }

func (s *multiset) Remove(r *Request) {
	s.removes++
	if s.m[*r] == 0 {
		s.t.Fatalf("Remove of a request never added: %+v", *r)
	}
	if s.m[*r]--; s.m[*r] == 0 {
		delete(s.m, *r)
	}
}

func (s *multiset) emit(add bool, r *Request) {
	if add {
		s.Add(r)
	} else {
		s.Remove(r)
	}
}

func withoutIDs(rs []Request) map[Request]int {
	m := map[Request]int{}
	for _, r := range rs {
		r.MessageID, r.RequestID = "", ""
		m[r]++
	}
	return m
}

// TestFlushIsInvisible: finalising after any file — and reopening finalised requests when a later
// file has another copy — gives exactly the requests of one unflushed pass: the same list, ids and
// order (Requests), and, through emit with retractions, the same multiset (Sink scans).
func TestFlushIsInvisible(t *testing.T) {
	removes := 0
	for trial := range 3000 {
		rng := rand.New(rand.NewPCG(uint64(trial), 7))
		sc := newRandomScan(rng)
		maxTotal := trial%2 == 1
		label := []string{"", "xhigh"}[trial%3%2]
		fresh := func() *Deduper {
			d := NewDeduper()
			d.MaxTotal, d.Label = maxTotal, label
			return d
		}
		want := fresh()
		sc.run(want, func(int) bool { return false })
		wantReqs := want.Requests()

		every := fresh()
		sc.run(every, func(int) bool { return true })
		if got := every.Requests(); !reflect.DeepEqual(got, wantReqs) {
			t.Fatalf("trial %d: flushing after every file:\n got %+v\nwant %+v", trial, got, wantReqs)
		}
		some := fresh()
		sc.run(some, func(int) bool { return rng.IntN(2) == 0 })
		if got := some.Requests(); !reflect.DeepEqual(got, wantReqs) {
			t.Fatalf("trial %d: flushing after some files:\n got %+v\nwant %+v", trial, got, wantReqs)
		}

		sink := &multiset{t: t, m: map[Request]int{}}
		streamed := fresh()
		streamed.keepIDs, streamed.reclassify, streamed.emit = false, true, sink.emit
		sc.run(streamed, func(int) bool { return true })
		streamed.Flush()
		if w := withoutIDs(wantReqs); !reflect.DeepEqual(sink.m, w) {
			t.Fatalf("trial %d: streamed requests differ:\n got %v\nwant %v", trial, sink.m, w)
		}
		removes += sink.removes
	}
	if removes == 0 {
		t.Error("no trial retracted a request: the test does not reach the reopen path")
	}
	t.Logf("%d retractions", removes)
}

// TestSinkAcrossSessions scans files where copies of a request sit in other sessions, in path order
// before and after the original, and checks that a Sink ends with exactly the requests (and the
// sessions) of a scan that holds everything.
func TestSinkAcrossSessions(t *testing.T) {
	parent := assistant("m1", "r1", 0, usage(3, 10, 100, 1000))
	parentFinal := assistant("m1", "r1", 1, usage(3, 250, 100, 1000))
	sub := assistant("ms", "rs", 5, usage(4, 9, 300, 2000)).with("isSidechain", true).with("agentId", "a1")
	replay := assistant("m1", "r-replay", 20, usage(3, 10, 0, 50000)).with("isSidechain", true).with("agentId", "b1")
	answer := assistant("m9", "r9", 21, usage(2, 30, 10, 700)).with("isSidechain", true).with("agentId", "b1")
	files := map[string]string{
		// A resumed session (sorts first) repeats the parent's first, partial line; the original has
		// the final count, so the later copy wins and the request is retracted and re-added.
		"projects/p/0resumed.jsonl": encode(t, parent, progress("a1", sub, 5)),
		"projects/p/5orig.jsonl":    encode(t, parent, parentFinal, assistant("m2", "r2", 2, usage(1, 1, 1, 1)).with("effort", "low")),
		// A later copy with an effort: the last recorded effort wins.
		"projects/p/6fork.jsonl": encode(t, assistant("m2", "r2", 3, usage(1, 1, 1, 1)).with("effort", "high")),
		// A /btw log of another session replays m1 and marks itself a side question after its
		// requests were emitted as subagent ones (its parent sorts after it).
		"projects/p/1btw/subagents/agent-b1.jsonl": encode(t, answer, replay),
		// The subagent's own file, in a later group than its progress copy: attribution moves.
		"projects/p/7sub/subagents/agent-a1.jsonl": encode(t, sub),
	}
	dir := writeTree(t, files)
	want := scanOrFail(t, daily, dir)
	sink := &multiset{t: t, m: map[Request]int{}}
	got := scanOrFail(t, Options{Sink: sink}, dir)
	if w := withoutIDs(want.Requests); !reflect.DeepEqual(sink.m, w) {
		t.Errorf("sink holds\n%v\nwant\n%v", sink.m, w)
	}
	if sink.removes == 0 {
		t.Error("no retraction: the scenario does not cross session groups")
	}
	if got.Requests != nil || !reflect.DeepEqual(got.Sessions, want.Sessions) {
		t.Errorf("sessions\n%+v\nwant\n%+v", got.Sessions, want.Sessions)
	}
	classes := map[string]int{}
	for r, n := range sink.m {
		classes[r.Class.String()] += n
	}
	if fmt.Sprint(classes) != "map[main:2 side-question:1 subagent:1]" {
		t.Errorf("classes %v", classes)
	}
}

// TestSinkOnSample: on the real sample, a Sink receives exactly the requests Result.Requests holds,
// whatever the number of workers, and the sessions are the same.
func TestSinkOnSample(t *testing.T) {
	want := scanOrFail(t, daily, testdataRoot)
	for _, workers := range []int{1, 3} {
		sink := &multiset{t: t, m: map[Request]int{}}
		got := scanOrFail(t, Options{Sink: sink, Workers: workers}, testdataRoot)
		if w := withoutIDs(want.Requests); !reflect.DeepEqual(sink.m, w) {
			t.Errorf("workers=%d: sink differs from Result.Requests", workers)
		}
		if !reflect.DeepEqual(got.Sessions, want.Sessions) {
			t.Errorf("workers=%d: sessions differ", workers)
		}
	}
}

func TestHashIDSpreads(t *testing.T) {
	seen := map[uint64]string{}
	for i := range 200000 {
		s := fmt.Sprintf("msg_01%022d", i)
		h := hashID(hashMsgSeed, s)
		if prev, ok := seen[h]; ok {
			t.Fatalf("%s and %s collide", s, prev)
		}
		seen[h] = s
	}
	// Lengths and trailing bytes count.
	ids := []string{"", "a", "a\x00", "abcdefgh", "abcdefgh\x00", "abcdefghi"}
	hs := map[uint64]bool{}
	for _, s := range ids {
		hs[hashID(hashMsgSeed, s)] = true
	}
	if len(hs) != len(ids) {
		t.Errorf("short ids collide: %d hashes for %d ids", len(hs), len(ids))
	}
}

// TestRecordRoundTrip: a record decodes to the state it was encoded from (what reopening relies on).
func TestRecordRoundTrip(t *testing.T) {
	d := NewDeduper()
	d.AddFile(SourceOf(filepath.FromSlash("projects/p/s.jsonl")))
	r := reqState{
		messageID: "msg_x", requestID: "req_y", agentID: "a1", model: "opus", effort: "high", version: "2.1.217",
		class: ClassCompaction, hasMessageID: true, keptSidechain: true, fromProgress: true,
		usage:    usageFields{Input: 1, Output: 1 << 40, CacheCreation: 3, Cache5m: 4, Cache1h: 5, CacheRead: 6, Thinking: 7, HasSplit: true, HasThinking: true, HasInput: true, HasOutput: true, Speed: "fast"},
		maxTotal: 1<<40 + 100, firstMs: -5, lastMs: 1 << 41, usageMs: 7, bestBlocks: 3, bestChars: 99, origin: -1, nextMsg: -1,
	}
	r.seq = 1 << 30
	pos := d.encode(&r, true)
	var got reqState
	if n := d.decode(pos, &got); n != len(d.chunks[0]) || !d.sideQ(pos) || !reflect.DeepEqual(got, r) {
		t.Errorf("decoded %+v (%d bytes of %d, side question %v)\nwant %+v", got, n, len(d.chunks[0]), d.sideQ(pos), r)
	}
}

func TestKeyTableGrowsAndKills(t *testing.T) {
	var tb keyTable
	for i := range 5000 {
		tb.insert(idKey{msg: uint64(i % 1700), req: uint32(i)}, uint32(i))
	}
	for i := range 5000 {
		if s := tb.find(idKey{msg: uint64(i % 1700), req: uint32(i)}); s < 0 || tb.slots[s].pos() != uint32(i) {
			t.Fatalf("key %d: slot %d", i, s)
		}
	}
	if load := float64(tb.used) / float64(len(tb.slots)); load < 0.4 || load > 0.8 {
		t.Errorf("load %.2f", load)
	}
	var poss []int
	tb.eachMessage(5, func(i int) { poss = append(poss, int(tb.slots[i].pos())) })
	sort.Ints(poss)
	if fmt.Sprint(poss) != "[5 1705 3405]" {
		t.Errorf("message 5: %v", poss)
	}
	tb.kill(tb.find(idKey{msg: 5, req: 1705}))
	if tb.find(idKey{msg: 5, req: 1705}) >= 0 {
		t.Error("a killed slot is still found")
	}
}

// TestRecordsWalk: next visits every record in the order written, across chunks.
func TestRecordsWalk(t *testing.T) {
	d := NewDeduper()
	d.AddFile(SourceOf("projects/p/s.jsonl"))
	var want []uint32
	for i := range 3000 {
		r := reqState{seq: uint32(i), messageID: strings.Repeat("m", i%50), usage: usageFields{Output: uint64(i) << 20}}
		if i == 1500 {
			r.messageID = strings.Repeat("x", chunkSize+10) // a record bigger than a chunk
		}
		d.encode(&r, false)
		want = append(want, uint32(i))
	}
	var got []uint32
	for pos, ok := uint32(0), true; ok; pos, ok = d.next(pos) {
		got = append(got, d.recordSeq(pos))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("walked %d records, want %d", len(got), len(want))
	}
}

// TestRetainedPerRequest guards the point of flushing: once its session group is done, a request
// costs tens of bytes (a key-table slot and a varint record), not its merge state. 100,000 requests
// in 1,000 sessions of realistic sizes.
func TestRetainedPerRequest(t *testing.T) {
	for _, keepIDs := range []bool{false, true} {
		d := realisticDeduper(keepIDs)
		perReq := float64(d.retained()) / float64(d.Len())
		limit := 80.0
		if keepIDs {
			limit = 140
		}
		if perReq > limit {
			t.Errorf("keepIDs=%v: %.1f bytes retained per request, want at most %.0f", keepIDs, perReq, limit)
		}
		t.Logf("keepIDs=%v: %.1f bytes per request", keepIDs, perReq)
	}
}

// realisticDeduper is a Deduper (with or without ids) that has read 100,000 requests in 1,000
// sessions of realistic sizes, three streamed lines each, every session group flushed.
func realisticDeduper(keepIDs bool) *Deduper {
	d := NewDeduper()
	d.keepIDs, d.emit = keepIDs, func(bool, *Request) {}
	const sessions, perSession = 1000, 100
	for s := range sessions {
		d.AddFile(SourceOf(fmt.Sprintf("projects/p/%08d-0000-0000-0000-000000000000.jsonl", s)))
		for i := range perSession {
			for line := range 3 { // streamed lines of one response
				o := observation{
					MessageID: fmt.Sprintf("msg_01%022d", s*perSession+i), RequestID: fmt.Sprintf("req_011C%020d", s*perSession+i),
					HasMessageID: true, HasRequestID: true, Model: "claude-opus-4-6", Version: "2.1.39",
					TimeMs: 1770000000000 + int64(s*perSession+i)*4000 + int64(line)*500, File: int32(s),
					Usage: usageFields{Input: 3, Output: uint64(40 + 100*line), CacheCreation: 2500, CacheRead: 95000, HasInput: true, HasOutput: true},
				}
				d.Add(&o)
			}
		}
		d.Flush()
	}
	return d
}
