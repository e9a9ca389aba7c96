package transcript

import (
	"cmp"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

const testdataRoot = "../../testdata/transcripts"

var spotterDir = filepath.Join(testdataRoot, "spotter", "test", "fixtures", "transcripts")

var edgeCases = filepath.Join(testdataRoot, "claude-code-log", "test", "test_data", "edge_cases.jsonl")

// tokens are ccusage's four token columns.
type tokens struct{ In, Out, CacheWrite, CacheRead uint64 }

func sumTokens(rs []Request) tokens {
	var t tokens
	for i := range rs {
		t.In += rs[i].InputTokens
		t.Out += rs[i].OutputTokens
		t.CacheWrite += rs[i].CacheCreationTokens
		t.CacheRead += rs[i].CacheReadTokens
	}
	return t
}

func scanOrFail(t testing.TB, opt Options, paths ...string) *Result {
	t.Helper()
	files, err := Discover(paths)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Scan(files, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// ccusage 20.0.24 `claude daily` counts agent_progress copies; `claude session` does not.
var (
	daily   = Options{}
	session = Options{NoProgress: true}
)

// TestCCUsageTotals checks the combined totals of ccusage 20.0.24 on the sample (ccusage's own run,
// rerun here: `ccusage claude daily|session --json --offline -z UTC`).
func TestCCUsageTotals(t *testing.T) {
	cases := []struct {
		name  string
		opt   Options
		paths []string
		want  tokens
		reqs  int
	}{
		// The 20 spotter files: tune's own rules and ccusage's agree (no spaced or pretty-printed lines).
		{"spotter daily", daily, []string{spotterDir}, tokens{9165, 195801, 2079960, 77423878}, 904},
		{"spotter session", session, []string{spotterDir}, tokens{9141, 195794, 2065675, 77328535}, 899},
		{"spotter daily ccusage lines", Options{CCUsage: true}, []string{spotterDir}, tokens{9165, 195801, 2079960, 77423878}, 904},
		{"spotter daily max-total", Options{MaxTotal: true}, []string{spotterDir}, tokens{9165, 195801, 2079960, 77423878}, 904},
		// All 21 files: edge_cases.jsonl has three requests written with spaces ("usage": {) that
		// ccusage skips; in ccusage mode the totals are ccusage's.
		{"all daily ccusage", Options{CCUsage: true}, []string{testdataRoot}, tokens{9333, 195886, 2079960, 77423878}, 905},
		{"all session ccusage", Options{CCUsage: true, NoProgress: true}, []string{testdataRoot}, tokens{9309, 195879, 2065675, 77328535}, 900},
		// tune reads them too (lines 2, 4 and 9 of edge_cases.jsonl, see TestEdgeCases).
		{"all daily tune", daily, []string{testdataRoot}, tokens{9333 + 35 + 200 + 85, 195886 + 145 + 25 + 180, 2079960, 77423878}, 908},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, workers := range []int{1, 2, 5} {
				c.opt.Workers = workers
				res := scanOrFail(t, c.opt, c.paths...)
				if got := sumTokens(res.Requests); got != c.want || len(res.Requests) != c.reqs {
					t.Errorf("workers=%d: got %+v in %d requests, want %+v in %d", workers, got, len(res.Requests), c.want, c.reqs)
				}
			}
		})
	}
}

// TestCCUsagePerFile checks every file read alone against ccusage's per-file runs (its own
// runs): daily (progress copies counted) and session.
func TestCCUsagePerFile(t *testing.T) {
	perFile := []struct {
		file           string
		daily, session tokens
	}{
		{"258c7280-ae70-4798-800f-63464d01a85d.jsonl", tokens{189, 38901, 371515, 14783735}, tokens{180, 38899, 349474, 14771617}},
		{"258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-a881341.jsonl", tokens{15, 3, 42176, 34159}, tokens{}},
		{"258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-acompact-fffbd0.jsonl", tokens{3, 6, 2487, 166758}, tokens{}},
		{"4d5611e5-241a-462a-8d15-5122611a9569.jsonl", tokens{230, 28890, 550319, 12151941}, tokens{177, 28755, 479537, 11618567}},
		{"4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl", tokens{53, 136, 71257, 604156}, tokens{}},
		{"4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-acompact-e1f845.jsonl", tokens{3, 8, 8681, 164830}, tokens{}},
		{"6c2214d7-b87e-4432-8e41-22ba294ea584/subagents/agent-afc096d.jsonl", tokens{219, 28, 39438, 457858}, tokens{}},
		{"8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl", tokens{2575, 40352, 273050, 16011938}, tokens{2481, 40320, 260451, 15740561}},
		{"8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents/agent-a7be2f0.jsonl", tokens{94, 33, 13554, 299487}, tokens{}},
		{"8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents/agent-acompact-f46190.jsonl", tokens{3, 6, 2814, 167093}, tokens{}},
		{"ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl", tokens{2571, 49473, 252557, 16567466}, tokens{242, 49467, 237121, 16553628}},
		{"ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-aac57f5.jsonl", tokens{2408, 7, 18814, 29274}, tokens{}},
		{"ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-acompact-946d2b.jsonl", tokens{3, 8, 121689, 17842}, tokens{}},
		{"fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl", tokens{1613, 36293, 352119, 15916893}, tokens{1502, 36256, 260212, 15373675}},
		{"fa812bfe-b295-4cca-9c2f-fdf01028cb46/subagents/agent-a93ccab.jsonl", tokens{70, 28, 45621, 329070}, tokens{}},
		{"fa812bfe-b295-4cca-9c2f-fdf01028cb46/subagents/agent-aa84377.jsonl", tokens{52, 17, 52562, 306055}, tokens{}},
		{"fa812bfe-b295-4cca-9c2f-fdf01028cb46/subagents/agent-acompact-70d8e7.jsonl", tokens{3, 6, 2414, 166873}, tokens{}},
		{"short.jsonl", tokens{3, 13, 13835, 11515}, tokens{}},
		{"subagent.jsonl", tokens{1600, 1593, 40127, 522629}, tokens{1576, 1586, 25842, 427286}},
		{"tool_heavy.jsonl", tokens{54, 212, 17696, 88231}, tokens{}},
	}
	for _, c := range perFile {
		path := filepath.Join(spotterDir, filepath.FromSlash(c.file))
		want := c.session
		if want == (tokens{}) {
			want = c.daily // "same" in the table: the file has no progress copies
		}
		if got := sumTokens(scanOrFail(t, daily, path).Requests); got != c.daily {
			t.Errorf("%s daily: got %+v, want %+v", c.file, got, c.daily)
		}
		if got := sumTokens(scanOrFail(t, session, path).Requests); got != want {
			t.Errorf("%s session: got %+v, want %+v", c.file, got, want)
		}
	}
	edgeWant := tokens{168, 85, 0, 0}
	if got := sumTokens(scanOrFail(t, Options{CCUsage: true}, edgeCases).Requests); got != edgeWant {
		t.Errorf("edge_cases ccusage: got %+v, want %+v", got, edgeWant)
	}
}

// TestOnRequestStreamsTheSameRequests: streaming (Options.OnRequest) gives the requests Result.Requests
// holds, in the same order, and the same sessions.
func TestOnRequestStreamsTheSameRequests(t *testing.T) {
	want := scanOrFail(t, daily, testdataRoot)
	var got []Request
	res := scanOrFail(t, Options{OnRequest: func(r *Request) { got = append(got, *r) }}, testdataRoot)
	if res.Requests != nil || len(got) != len(want.Requests) {
		t.Fatalf("streamed %d requests (Result.Requests %d), want %d", len(got), len(res.Requests), len(want.Requests))
	}
	for i := range got {
		if got[i] != want.Requests[i] {
			t.Fatalf("request %d differs:\n%+v\n%+v", i, got[i], want.Requests[i])
		}
	}
	if len(res.Sessions) != len(want.Sessions) || res.Sessions[0].Requests != want.Sessions[0].Requests {
		t.Errorf("sessions differ")
	}
}

// TestOrderByStreamsInKeyOrder: with OrderBy, OnRequest gets the same requests sorted by the key, and
// by first appearance within a key (a stable sort of the unordered stream).
func TestOrderByStreamsInKeyOrder(t *testing.T) {
	var plain, ordered []Request
	scanOrFail(t, Options{OnRequest: func(r *Request) { plain = append(plain, *r) }}, testdataRoot)
	// Latest hour first: a key the first-appearance order does not already follow.
	key := func(r *Request) int64 { return -r.UsageTime.Truncate(time.Hour).Unix() }
	scanOrFail(t, Options{OnRequest: func(r *Request) { ordered = append(ordered, *r) }, OrderBy: key}, testdataRoot)
	want := slices.Clone(plain)
	slices.SortStableFunc(want, func(a, b Request) int { return cmp.Compare(key(&a), key(&b)) })
	if slices.Equal(want, plain) {
		t.Fatal("the key does not reorder the sample: the test proves nothing")
	}
	if !slices.Equal(ordered, want) {
		t.Errorf("OrderBy: %d requests, not the stable sort of the %d streamed without it", len(ordered), len(plain))
	}
}
