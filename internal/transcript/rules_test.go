package transcript

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// rec builds one transcript line. Fields are set with the helpers below; json.Marshal sorts keys,
// which the reader does not care about.
type rec map[string]any

func ts(sec int) string {
	return time.Date(2026, 7, 30, 10, 0, 0, 0, time.UTC).Add(time.Duration(sec) * time.Second).Format("2006-01-02T15:04:05.000Z")
}

func usage(in, out, cw, cr int) map[string]any {
	return map[string]any{"input_tokens": in, "output_tokens": out, "cache_creation_input_tokens": cw, "cache_read_input_tokens": cr}
}

// assistant is one streamed line of a response.
func assistant(msgID, reqID string, sec int, u map[string]any, blocks ...map[string]any) rec {
	if blocks == nil {
		blocks = []map[string]any{{"type": "text", "text": "ok"}}
	}
	r := rec{
		"type": "assistant", "timestamp": ts(sec), "sessionId": "s", "version": "2.1.217", "isSidechain": false,
		"message": map[string]any{"id": msgID, "model": "claude-opus-4-8", "role": "assistant", "content": blocks, "usage": u},
	}
	if reqID != "" {
		r["requestId"] = reqID
	}
	return r
}

func (r rec) with(k string, v any) rec {
	out := rec{}
	for a, b := range r {
		out[a] = b
	}
	out[k] = v
	return out
}

// progress wraps an assistant record as Claude Code copies a subagent's line into the parent file.
func progress(agent string, inner rec, sec int) rec {
	nested := map[string]any{"type": "assistant", "timestamp": inner["timestamp"], "message": inner["message"]}
	if id, ok := inner["requestId"]; ok {
		nested["requestId"] = id
	}
	return rec{
		"type": "progress", "timestamp": ts(sec), "sessionId": "s", "version": "2.1.217", "isSidechain": false,
		"data": map[string]any{"type": "agent_progress", "agentId": agent, "message": nested},
	}
}

func thinking(text string) map[string]any {
	return map[string]any{"type": "thinking", "thinking": text, "signature": "sig"}
}

func encode(t testing.TB, lines ...any) string {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		switch v := l.(type) {
		case string:
			b.WriteString(v)
		default:
			data, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(data)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// writeTree writes files (path relative to a new temporary directory → content) and returns the
// directory.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// brief is a request in a comparable form.
type brief struct {
	Msg, Class, Agent, Session string
	In, Out, CW, CR            uint64
}

func briefs(rs []Request) []brief {
	out := make([]brief, len(rs))
	for i, r := range rs {
		out[i] = brief{r.MessageID, r.Class.String(), r.AgentID, r.Session, r.InputTokens, r.OutputTokens, r.CacheCreationTokens, r.CacheReadTokens}
	}
	return out
}

func scanTree(t testing.TB, opt Options, files map[string]string) *Result {
	t.Helper()
	return scanOrFail(t, opt, writeTree(t, files))
}

func TestStreamedLinesMergeIntoOneRequest(t *testing.T) {
	res := scanTree(t, daily, map[string]string{"projects/p/s1.jsonl": encode(t,
		assistant("m1", "r1", 0, usage(3, 1, 100, 5000), thinking("")),
		assistant("m1", "r1", 1, usage(3, 10, 100, 5000)),
		assistant("m1", "r1", 2, usage(3, 250, 100, 5000), map[string]any{"type": "tool_use", "id": "t", "name": "Read", "input": map[string]any{}}),
		assistant("m2", "r2", 3, usage(1, 7, 0, 5100)),
	)})
	want := []brief{{"m1", "main", "", "s1", 3, 250, 100, 5000}, {"m2", "main", "", "s1", 1, 7, 0, 5100}}
	if got := briefs(res.Requests); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	r := res.Requests[0]
	if !r.First.Equal(mustTime(ts(0))) || !r.Last.Equal(mustTime(ts(2))) || !r.UsageTime.Equal(mustTime(ts(2))) {
		t.Errorf("times %v %v %v", r.First, r.Last, r.UsageTime)
	}
	if r.ThinkingBlocks != 1 || r.ThinkingSrc != ThinkingUnknown {
		t.Errorf("thinking: %d blocks, %v", r.ThinkingBlocks, r.ThinkingSrc)
	}
	if res.Lines.UsageLines != 4 {
		t.Errorf("usage lines %d", res.Lines.UsageLines)
	}
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestFieldwiseMaxEqualsMaxTotal: on non-monotone lines the two rules differ (field-wise keeps the
// largest of each field, ccusage the line with the largest total); on the real sample they agree,
// which TestCCUsageTotals checks with both.
func TestFieldwiseMaxVersusMaxTotal(t *testing.T) {
	files := map[string]string{"projects/p/s.jsonl": encode(t,
		assistant("m1", "r1", 0, usage(10, 1, 0, 0)),
		assistant("m1", "r1", 1, usage(5, 3, 0, 0)),
	)}
	if got := briefs(scanTree(t, daily, files).Requests); got[0].In != 10 || got[0].Out != 3 {
		t.Errorf("field-wise: %+v", got)
	}
	if got := briefs(scanTree(t, Options{MaxTotal: true}, files).Requests); got[0].In != 10 || got[0].Out != 1 {
		t.Errorf("max total: %+v", got)
	}
}

func TestDedupKeys(t *testing.T) {
	res := scanTree(t, daily, map[string]string{"projects/p/s.jsonl": encode(t,
		// No message.id: never merged, even with itself.
		assistant("", "r0", 0, usage(1, 1, 0, 0)).with("message", map[string]any{"model": "x", "usage": usage(1, 1, 0, 0)}),
		assistant("", "r0", 1, usage(1, 1, 0, 0)).with("message", map[string]any{"model": "x", "usage": usage(1, 1, 0, 0)}),
		// Same message id, no requestId vs a requestId: different keys (both main loop).
		assistant("m1", "", 2, usage(2, 2, 0, 0)),
		assistant("m1", "r1", 3, usage(3, 3, 0, 0)),
		assistant("m1", "", 4, usage(2, 5, 0, 0)),
	)})
	want := []brief{{"", "main", "", "s", 1, 1, 0, 0}, {"", "main", "", "s", 1, 1, 0, 0}, {"m1", "main", "", "s", 2, 5, 0, 0}, {"m1", "main", "", "s", 3, 3, 0, 0}}
	if got := briefs(res.Requests); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// TestProgressCopiesAndSubagentFiles: an agent_progress copy in the parent file and the same request
// in the subagent's own file are one request, attributed to the subagent; the parent's copy is not
// a sidechain line, so its usage wins (ccusage), and thinking blocks are not counted twice.
func TestProgressCopiesAndSubagentFiles(t *testing.T) {
	sub := assistant("ms", "rs", 5, usage(4, 9, 300, 2000), thinking("abcdefgh")).with("isSidechain", true).with("agentId", "a1")
	subBigger := sub.with("message", map[string]any{"id": "ms", "model": "claude-haiku-4-5", "usage": usage(4, 99, 300, 2000), "content": []any{}})
	only := assistant("mp", "rp", 7, usage(1, 2, 3, 4))
	files := map[string]string{
		"projects/p/s.jsonl": encode(t,
			assistant("m1", "r1", 0, usage(3, 10, 100, 1000)),
			progress("a1", sub, 5),
			progress("a1", only, 7), // progress-only: no subagent file has it
		),
		"projects/p/s/subagents/agent-a1.jsonl": encode(t, sub, subBigger),
	}
	res := scanTree(t, daily, files)
	want := []brief{
		{"m1", "main", "", "s", 3, 10, 100, 1000},
		{"ms", "subagent", "a1", "s", 4, 9, 300, 2000},
		{"mp", "subagent", "a1", "s", 1, 2, 3, 4},
	}
	if got := briefs(res.Requests); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("daily got %+v\nwant %+v", got, want)
	}
	if r := res.Requests[1]; r.ThinkingBlocks != 1 || r.ThinkingTokens != 2 || r.ThinkingSrc != ThinkingEstimated {
		t.Errorf("subagent thinking: %d blocks, %d tokens (%v)", r.ThinkingBlocks, r.ThinkingTokens, r.ThinkingSrc)
	}
	// Without progress copies (ccusage's session report) the subagent file alone counts, max total.
	res = scanTree(t, session, files)
	want = []brief{{"m1", "main", "", "s", 3, 10, 100, 1000}, {"ms", "subagent", "a1", "s", 4, 99, 300, 2000}}
	if got := briefs(res.Requests); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("session got %+v\nwant %+v", got, want)
	}
}

// TestSideQuestionReplay: a /btw log replays parent messages under new request ids with the parent's
// cache reads; the replays collapse into the parent's requests and the log's own request is a side
// question.
func TestSideQuestionReplay(t *testing.T) {
	parent := assistant("m1", "r1", 0, usage(3, 10, 100, 1000))
	replay := assistant("m1", "r-replay", 20, usage(3, 10, 0, 50000)).with("isSidechain", true).with("agentId", "b1")
	answer := assistant("m9", "r9", 21, usage(2, 30, 10, 700)).with("isSidechain", true).with("agentId", "b1")
	res := scanTree(t, daily, map[string]string{
		"projects/p/s.jsonl":                    encode(t, parent),
		"projects/p/s/subagents/agent-b1.jsonl": encode(t, replay, answer),
	})
	want := []brief{{"m1", "main", "", "s", 3, 10, 100, 1000}, {"m9", "side-question", "b1", "s", 2, 30, 10, 700}}
	if got := briefs(res.Requests); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// TestSideQuestionReplayInSessionReport: ccusage 20.0.24's session report applies the /btw rule only
// to a replay with the kept line's timestamp (its daily report to any): on this tree, where the
// replay comes 20 s later, ccusage session prints input 8, output 50, cache read 51,700, three
// requests. ReplaySameTime reproduces that; the exact-key sidechain rule still applies.
// (internal/audit's btwcorpus checks a same-time replay against ccusage's reports.)
func TestSideQuestionReplayInSessionReport(t *testing.T) {
	parent := assistant("m1", "r1", 0, usage(3, 10, 100, 1000))
	replay := assistant("m1", "r-replay", 20, usage(3, 10, 0, 50000)).with("isSidechain", true).with("agentId", "b1")
	answer := assistant("m9", "r9", 21, usage(2, 30, 10, 700)).with("isSidechain", true).with("agentId", "b1")
	res := scanTree(t, Options{CCUsage: true, MaxTotal: true, NoProgress: true, ReplaySameTime: true}, map[string]string{
		"projects/p/s.jsonl":                    encode(t, parent),
		"projects/p/s/subagents/agent-b1.jsonl": encode(t, replay, answer),
	})
	want := []brief{{"m1", "main", "", "s", 3, 10, 100, 1000}, {"m1", "subagent", "b1", "s", 3, 10, 0, 50000}, {"m9", "subagent", "b1", "s", 2, 30, 10, 700}}
	if got := briefs(res.Requests); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// TestSideQuestionReplayBeforeParent drives the Deduper directly with the replay first: the parent
// then takes the request back (usage, request id and attribution).
func TestSideQuestionReplayBeforeParent(t *testing.T) {
	d := NewDeduper()
	d.AddFile(SourceOf("projects/p/s/subagents/agent-b1.jsonl"))
	d.AddFile(SourceOf("projects/p/s.jsonl"))
	d.Add(&observation{MessageID: "m1", HasMessageID: true, RequestID: "r-replay", HasRequestID: true, Sidechain: true,
		Class: ClassSubagent, AgentID: "b1", File: 0, Usage: usageFields{Input: 3, Output: 10, CacheRead: 50000, HasInput: true, HasOutput: true}})
	d.Add(&observation{MessageID: "m9", HasMessageID: true, RequestID: "r9", HasRequestID: true, Sidechain: true,
		Class: ClassSubagent, AgentID: "b1", File: 0, Usage: usageFields{Input: 2, Output: 30, HasInput: true, HasOutput: true}})
	d.Add(&observation{MessageID: "m1", HasMessageID: true, RequestID: "r1", HasRequestID: true,
		Class: ClassMain, File: 1, Usage: usageFields{Input: 3, Output: 10, CacheRead: 1000, HasInput: true, HasOutput: true}})
	// A later line of the parent's request finds it under its own request id.
	d.Add(&observation{MessageID: "m1", HasMessageID: true, RequestID: "r1", HasRequestID: true,
		Class: ClassMain, File: 1, Usage: usageFields{Input: 3, Output: 12, CacheRead: 1000, HasInput: true, HasOutput: true}})
	rs := d.Requests()
	got := briefs(rs)
	want := []brief{{"m1", "main", "", "s", 3, 12, 0, 1000}, {"m9", "side-question", "b1", "s", 2, 30, 0, 0}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if rs[0].RequestID != "r1" || rs[0].File != "projects/p/s.jsonl" {
		t.Errorf("request id %q, file %q", rs[0].RequestID, rs[0].File)
	}
}

func TestClasses(t *testing.T) {
	res := scanTree(t, daily, map[string]string{
		"projects/p/s.jsonl": encode(t,
			assistant("m1", "r1", 0, usage(1, 1, 0, 0)),
			// A skill with a model override runs Haiku in the main loop: still main.
			assistant("m2", "r2", 1, usage(1, 1, 0, 0)).with("message", map[string]any{"id": "m2", "model": "claude-haiku-4-5", "usage": usage(1, 1, 0, 0)}),
			// A sidechain line inside a main file is a subagent's.
			assistant("m3", "r3", 2, usage(1, 1, 0, 0)).with("isSidechain", true).with("agentId", "x9"),
		),
		"projects/p/s/subagents/agent-acompact-f00.jsonl": encode(t, assistant("m4", "r4", 3, usage(1, 1, 0, 0)).with("isSidechain", true)),
		"projects/p/s/subagents/agent-a7.jsonl":           encode(t, assistant("m5", "r5", 4, usage(1, 1, 0, 0)).with("isSidechain", true).with("agentId", "a7")),
		// Claude Code ≤ 2.0 kept subagent logs beside the session: ccusage makes them their own session.
		"projects/p/agent-old.jsonl": encode(t, assistant("m6", "r6", 5, usage(1, 1, 0, 0)).with("isSidechain", true)),
	})
	got := map[string]string{}
	for _, r := range res.Requests {
		got[r.MessageID] = r.Class.String() + "/" + r.AgentID + "/" + r.Session
	}
	want := map[string]string{
		"m1": "main//s", "m2": "main//s", "m3": "subagent/x9/s", "m4": "compaction/acompact-f00/s",
		"m5": "subagent/a7/s", "m6": "subagent/old/agent-old",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

func TestThinkingSources(t *testing.T) {
	exact := usage(1, 900, 0, 0)
	exact["output_tokens_details"] = map[string]any{"thinking_tokens": 512}
	partial := usage(1, 10, 0, 0)
	partial["output_tokens_details"] = map[string]any{"thinking_tokens": 3}
	res := scanTree(t, daily, map[string]string{"projects/p/s.jsonl": encode(t,
		assistant("exact", "r1", 0, partial, thinking("")),
		assistant("exact", "r1", 1, exact),
		assistant("estimated", "r2", 2, usage(1, 50, 0, 0), thinking("héllo wörld"), thinking("ab")),
		assistant("empty", "r3", 3, usage(1, 50, 0, 0), thinking(""), map[string]any{"type": "redacted_thinking", "data": "x"}),
		assistant("none", "r4", 4, usage(1, 50, 0, 0)),
	)})
	got := map[string]string{}
	for _, r := range res.Requests {
		got[r.MessageID] = fmt.Sprintf("%d/%v/%d", r.ThinkingTokens, r.ThinkingSrc, r.ThinkingBlocks)
	}
	// "héllo wörld" + "ab" = 13 characters → ceil(13/4) = 4.
	want := map[string]string{"exact": "512/exact/1", "estimated": "4/estimated/2", "empty": "0/unknown/2", "none": "0/unknown/0"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

func TestEffortAndLabel(t *testing.T) {
	files := map[string]string{"projects/p/s.jsonl": encode(t,
		assistant("m1", "r1", 0, usage(1, 1, 0, 0)).with("effort", "low"),
		assistant("m1", "r1", 1, usage(1, 2, 0, 0)).with("effort", "xhigh"), // the last recorded wins
		assistant("m2", "r2", 2, usage(1, 1, 0, 0)),
	)}
	res := scanTree(t, Options{Label: "high"}, files)
	got := fmt.Sprintf("%s/%v %s/%v", res.Requests[0].Effort, res.Requests[0].EffortSrc, res.Requests[1].Effort, res.Requests[1].EffortSrc)
	if got != "xhigh/transcript high/label" {
		t.Errorf("got %s", got)
	}
	res = scanTree(t, daily, files)
	if r := res.Requests[1]; r.Effort != "" || r.EffortSrc != EffortNone {
		t.Errorf("no label: %q %v", r.Effort, r.EffortSrc)
	}
}

// TestTolerantReading: a truncated last line, a pretty-printed record, a line written with spaces and
// invalid records are counted by reason; the valid requests around them are read.
func TestTolerantReading(t *testing.T) {
	good := encode(t, assistant("m1", "r1", 0, usage(1, 2, 3, 4)))
	pretty, _ := json.MarshalIndent(assistant("m2", "r2", 1, usage(10, 20, 30, 40)), "", "  ")
	spaced := `{"type": "assistant", "timestamp": "` + ts(2) + `", "requestId": "r3", "message": {"id": "m3", "model": "x", "usage": {"input_tokens": 100, "output_tokens": 200}}}`
	noTime := assistant("m4", "r4", 0, usage(1, 1, 0, 0)).with("timestamp", "yesterday")
	badVersion := assistant("m5", "r5", 0, usage(1, 1, 0, 0)).with("version", "v2")
	emptyReq := assistant("m6", "", 0, usage(1, 1, 0, 0)).with("requestId", "")
	nullSpeed := assistant("m7", "r7", 0, map[string]any{"input_tokens": 1, "output_tokens": 1, "speed": nil})
	missingOut := assistant("m8", "r8", 0, map[string]any{"input_tokens": 1})
	nestedNull := assistant("m9", "r9", 3, usage(7, 7, 0, 0), map[string]any{"type": "tool_use", "id": "t", "name": "Rpc", "input": map[string]any{"id": nil}})
	truncated := strings.TrimSuffix(encode(t, assistant("m10", "r10", 4, usage(1000, 1000, 0, 0))), "\n")
	truncated = truncated[:len(truncated)/2]
	content := good + string(pretty) + "\n" + encode(t, spaced, noTime, badVersion, emptyReq, nullSpeed, missingOut, nestedNull) + truncated

	res := scanTree(t, daily, map[string]string{"projects/p/s.jsonl": content})
	var ids []string
	for _, r := range res.Requests {
		ids = append(ids, r.MessageID)
	}
	if strings.Join(ids, ",") != "m1,m2,m3,m9" {
		t.Errorf("tune read %v", ids)
	}
	wantSkipped := map[string]int{ReasonNoTimestamp: 1, ReasonInvalidField: 2, ReasonNullField: 1, ReasonInvalidUsage: 1, ReasonTruncated: 1}
	if fmt.Sprint(res.Skipped) != fmt.Sprint(wantSkipped) {
		t.Errorf("skipped %v, want %v", res.Skipped, wantSkipped)
	}
	if res.Lines.MultiLine != 1 {
		t.Errorf("lines %+v", res.Lines)
	}
	var reasons []string
	for _, w := range res.Warnings {
		reasons = append(reasons, fmt.Sprintf("%d:%s", w.Line, w.Reason))
	}
	sort.Strings(reasons)
	if len(reasons) != 6 || !strings.Contains(strings.Join(reasons, " "), fmt.Sprintf("%d:truncated", strings.Count(content, "\n")+1)) {
		t.Errorf("warnings %v", reasons)
	}

	// ccusage's line handling: no pretty-printed or spaced records, and the byte-level null rule
	// drops the line with a null id inside a tool input.
	res = scanTree(t, Options{CCUsage: true}, map[string]string{"projects/p/s.jsonl": content})
	ids = ids[:0]
	for _, r := range res.Requests {
		ids = append(ids, r.MessageID)
	}
	if strings.Join(ids, ",") != "m1" {
		t.Errorf("ccusage mode read %v", ids)
	}
}

func TestSessionsSpanAndTurns(t *testing.T) {
	turn := func(sec, ms int) rec {
		return rec{"type": "system", "subtype": "turn_duration", "durationMs": ms, "timestamp": ts(sec), "sessionId": "s"}
	}
	user := rec{"type": "user", "timestamp": ts(-60), "message": map[string]any{"role": "user", "content": "go"}}
	res := scanTree(t, daily, map[string]string{
		"projects/p/s.jsonl":                    encode(t, user, assistant("m1", "r1", 0, usage(1, 1, 0, 0)), turn(30, 25000), turn(90, 1500)),
		"projects/p/s/subagents/agent-a1.jsonl": encode(t, assistant("m2", "r2", 120, usage(1, 1, 0, 0)).with("isSidechain", true)),
		"projects/p/t.jsonl":                    encode(t, assistant("m3", "r3", 0, usage(1, 1, 0, 0)).with("version", "2.1.39")),
	})
	if len(res.Sessions) != 2 {
		t.Fatalf("sessions %+v", res.Sessions)
	}
	s := res.Sessions[0]
	if s.ID != "s" || s.First != mustTime(ts(-60)) || s.Last != mustTime(ts(120)) || s.ActiveMs != 26500 || s.Turns != 2 ||
		s.Requests != 2 || len(s.Files) != 2 || fmt.Sprint(s.Versions) != "[2.1.217]" || s.Project != "p" {
		t.Errorf("session %+v", s)
	}
	if v := res.Sessions[1].Versions; fmt.Sprint(v) != "[2.1.39]" {
		t.Errorf("versions %v", v)
	}
}
