package effort

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/transcript"
)

func observeDesign(t testing.TB, withCensus bool, workers int) (*Observed, *Census) {
	t.Helper()
	c := designCorpus(t)
	var census *Census
	if withCensus {
		census = designCensus(t)
	}
	o, err := c.observe(c.files(), Options{Census: census, Scan: transcript.Options{Workers: workers}})
	if err != nil {
		t.Fatal(err)
	}
	return o, census
}

func deref(p *string) string {
	if p == nil {
		return "nil"
	}
	return *p
}

func TestShiftVerdicts(t *testing.T) {
	o, _ := observeDesign(t, true, 0)
	var got []string
	for _, s := range o.Shifts {
		te := "nil"
		if s.TookEffect != nil {
			te = fmt.Sprint(*s.TookEffect)
		}
		got = append(got, fmt.Sprintf("%s %s %s→%s next=%s paired=%v took=%s: %s",
			s.Session[:4], s.Skill, deref(s.From), s.To, deref(s.Observed), s.Paired, te, s.Verdict))
	}
	want := []string{
		"a1b2 effort-medium high→medium next=medium paired=true took=true: ok",
		"a1b2 effort-max medium→max next=medium paired=false took=false: no-op: lone call",
		"a1b2 effort-max medium→max next=max paired=true took=true: ok",
		"a1b2 effort-medium max→medium next=medium paired=true took=true: ok",
		"a1b2 effort-max medium→max next=max paired=true took=true: ok",
		"a1b2 effort-medium max→medium next=medium paired=true took=true: ok",
		"a1b2 commit-change medium→low next=low paired=true took=true: ok",
		"a1b2 commit-change high→low next=low paired=true took=true: ok", // nested in the later turns
		"a1b2 commit-change high→low next=low paired=true took=true: ok",
		"a1b2 effort-medium low→medium next=medium paired=true took=true: ok", // supersedes the nested level
		"a1b2 feat high→high next=high paired=false took=true: ok",            // the orchestrator's loads
		"a1b2 feat high→high next=high paired=true took=true: ok",
		"a1b2 feat high→high next=high paired=true took=true: ok",
		"a1b2 feat low→high next=high paired=true took=true: ok",
		"a1b2 effort-medium high→medium next=medium paired=true took=true: ok",
		"a1b2 effort-xhigh medium→xhigh next=high paired=true took=false: unexpected level",
		"e0e0 effort-medium max→medium next=max paired=true took=false: ignored",
		"e0e0 effort-low max→low next=max paired=true took=false: ignored",
		"d1d1 effort-low high→low next=high paired=true took=false: ignored",
		"0a0a effort-low nil→low next=nil paired=true took=nil: unknown",
		"f0f0 commit-change high→low next=low paired=true took=true: ok",
		"f0f0 effort-high low→high next=high paired=true took=true: ok",
		"f0f0 effort-low high→low next=high paired=false took=false: no-op: lone call", // lone, down
	}
	sort.Strings(got)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("shifts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	notes := 0
	for _, s := range o.Shifts {
		if s.File == "" || s.Line == 0 || s.Timestamp == "" || s.MessageID == "" {
			t.Errorf("shift without evidence: %+v", s)
		}
		if s.Note != "" {
			notes++
			if s.To != "xhigh" || !strings.Contains(s.Note, "fallback") {
				t.Errorf("note %q on the %s shift", s.Note, s.To)
			}
		}
	}
	if notes != 1 {
		t.Errorf("%d fallback notes, want 1 (the xhigh shift that ran at high)", notes)
	}

	var sub []string
	for _, s := range o.SubagentShifts {
		sub = append(sub, s.AgentID+" "+s.Skill+" "+s.Verdict)
	}
	if want := []string{"aa000000000000003 effort-max ignored"}; !reflect.DeepEqual(sub, want) {
		t.Errorf("subagent shifts %v, want %v", sub, want)
	}

	var stuck []string
	for _, s := range o.Stuck {
		stuck = append(stuck, s.Session[:4]+" "+s.Level+": "+s.Reason)
	}
	wantStuck := []string{
		"e0e0 max: CLAUDE_CODE_EFFORT_LEVEL=max in settings.json",
		"d1d1 high: headless run (entrypoint sdk-cli): skill-level effort is ignored",
	}
	sort.Strings(stuck)
	sort.Strings(wantStuck)
	if !reflect.DeepEqual(stuck, wantStuck) {
		t.Errorf("stuck %v, want %v", stuck, wantStuck)
	}
}

func TestAgentVerdicts(t *testing.T) {
	o, _ := observeDesign(t, true, 1)
	var runs []string
	for _, r := range o.Runs {
		runs = append(runs, fmt.Sprintf("%s %s(%s) pin=%s disp=%s %s %s", r.AgentID[len(r.AgentID)-1:], r.Agent, r.Source,
			deref(r.Pinned), deref(r.Dispatched), LevelCounts(r.Observed), r.Verdict))
	}
	want := []string{
		"5 Explore(dispatch) pin=nil disp=nil unknown 2 inherits", // copies only, in the old session
		"1 hotfixer(meta) pin=low disp=max low 2 conformant",
		"2 hotfixer(dispatch) pin=low disp=high low 1, medium 1 off its pin",
		"3 verifier(meta) pin=xhigh disp=high high 2 off its pin",
		"4 general-purpose(meta) pin=nil disp=high high 1 inherits",
	}
	if !reflect.DeepEqual(runs, want) {
		t.Errorf("runs:\n%s\nwant:\n%s", strings.Join(runs, "\n"), strings.Join(want, "\n"))
	}
	var agents []string
	for _, a := range o.Agents {
		c := "nil"
		if a.Conformant != nil {
			c = fmt.Sprint(*a.Conformant)
		}
		agents = append(agents, fmt.Sprintf("%s pin=%s %s conformant=%s runs=%d", a.Agent, deref(a.Pinned), a.Verdict, c, a.Runs))
	}
	wantAgents := []string{
		"Explore pin=nil inherits conformant=true runs=1",
		"general-purpose pin=nil inherits conformant=true runs=1",
		"hotfixer pin=low off its pin conformant=false runs=2",
		"verifier pin=xhigh off its pin conformant=false runs=1",
	}
	if !reflect.DeepEqual(agents, wantAgents) {
		t.Errorf("agents:\n%s\nwant:\n%s", strings.Join(agents, "\n"), strings.Join(wantAgents, "\n"))
	}
	if !strings.Contains(o.Agents[2].Evidence, "agent-aa000000000000002.jsonl:") {
		t.Errorf("hotfixer evidence %q does not name the off-pin run", o.Agents[2].Evidence)
	}
	if !strings.Contains(o.Runs[3].Note, "fallback") {
		t.Errorf("verifier note %q does not name the xhigh fallback", o.Runs[3].Note)
	}
	// The run known only from its copies points at them in the parent's file; a run with a file of
	// its own does not.
	if x := o.Runs[0]; !x.Progress || !strings.HasSuffix(x.File, "0a0a0a0a-0000-4000-8000-000000000004.jsonl") || x.Line == 0 {
		t.Errorf("copies-only run %+v: want progress_copies in the main file, with a line", x)
	}
	if o.Runs[1].Progress {
		t.Errorf("hotfixer run %+v: it has its own file", o.Runs[1])
	}
}

// TestOldTranscripts: a build that records no effort gives unknown levels everywhere, never a guess.
func TestOldTranscripts(t *testing.T) {
	o, _ := observeDesign(t, true, 0)
	for _, s := range o.Sessions {
		if !strings.HasPrefix(s.Session, "0a0a") {
			continue
		}
		if len(s.Spans) != 1 || s.Spans[0].Level != Unknown || s.Spans[0].Requests != 3 {
			t.Errorf("old session timeline %+v, want unknown×3", s.Spans)
		}
	}
	// 3 main-loop requests and the 2 of the Explore subagent, known from their progress copies.
	for _, b := range o.ByLevel {
		if b.Key == Unknown && b.Requests != 5 {
			t.Errorf("unknown level has %d requests, want 5", b.Requests)
		}
	}
	if o.Input.Requests-o.Input.WithEffort != 5 {
		t.Errorf("input %+v: want 5 requests without effort", o.Input)
	}
}

func TestPhases(t *testing.T) {
	o, _ := observeDesign(t, true, 0)
	got := map[string]string{}
	for _, b := range o.ByPhase {
		got[b.Key] = LevelCounts(b.Levels)
	}
	want := map[string]string{
		// Turn starts of a1b2, e0e0, d1d1, 0a0a, and the second and third prompts of a1b2.
		"(session level)": "high 5, max 2, unknown 1", // and the resumed session's new turn
		"effort-medium":   "medium 5, max 1",
		"effort-max":      "medium 1, max 2",
		"commit-change":   "low 5",
		"feat":            "high 7", // 2 in f0f0, from the user's /feat on
		"effort-high":     "high 1",
		"effort-xhigh":    "high 1",
		"effort-low":      "high 2, max 1, unknown 2",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("phases %v, want %v", got, want)
	}
}

// TestReasserts: an orchestrator (feat, high) loads a nested skill (commit-change, low); the design
// asks it to reload its own level afterwards.
func TestReasserts(t *testing.T) {
	o, _ := observeDesign(t, true, 0)
	var got []string
	for _, r := range o.Reasserts {
		got = append(got, fmt.Sprintf("%s %s/%s after %s/%s: %s by %q (%s), %d requests", r.Session[:4], r.Orchestrator, r.Level,
			r.Nested, r.NestedLevel, r.Verdict, r.By, r.ByVerdict, r.Requests))
		if r.File == "" || r.Line == 0 || r.Timestamp == "" || r.MessageID == "" {
			t.Errorf("re-assert without evidence: %+v", r)
		}
	}
	want := []string{
		`a1b2 feat/high after commit-change/low: re-asserted by "feat" (ok), 1 requests`,
		`a1b2 feat/high after commit-change/low: superseded by "effort-medium" (ok), 1 requests`,
		`a1b2 feat/high after commit-change/low: not re-asserted by "" (), 2 requests`,
		// The user typed /feat: the orchestrator without a Skill call.
		`f0f0 feat/high after commit-change/low: re-asserted by "effort-high" (ok), 1 requests`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("re-asserts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestWithoutCensus: shifts are recognised by the shifters' names; agents are not judged.
func TestWithoutCensus(t *testing.T) {
	o, _ := observeDesign(t, false, 0)
	for _, s := range o.Shifts {
		if !strings.HasPrefix(s.Skill, "effort-") {
			t.Errorf("shift %s without a census", s.Skill)
		}
	}
	if len(o.Shifts) != 15 {
		t.Errorf("%d shifts, want 15 (23 less commit-change ×4 and feat ×4)", len(o.Shifts))
	}
	if len(o.Reasserts) != 0 {
		t.Errorf("re-asserts %+v without a census: orchestrators are not known", o.Reasserts)
	}
	for _, a := range o.Agents {
		if a.Verdict != AgentUnknown || a.Conformant != nil || a.Pinned != nil {
			t.Errorf("agent %+v judged without a census", a)
		}
	}
}

// TestWorkersAgree: the result does not depend on the number of files parsed in parallel.
func TestWorkersAgree(t *testing.T) {
	a, _ := observeDesign(t, true, 1)
	b, _ := observeDesign(t, true, 4)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	// The corpora live in different temporary directories, but files are named relative to them.
	if !bytes.Equal(ja, jb) {
		t.Error("1 and 4 workers disagree")
	}
}

// TestUnreadableFile: a file that cannot be opened is an error naming it; bad lines are not.
func TestUnreadableFile(t *testing.T) {
	c := designCorpus(t)
	files := append(c.files(), "projects/-home-dev-shop/zzzz.jsonl")
	_, err := c.observe(files, Options{Scan: transcript.Options{Workers: 2}})
	if err == nil || !strings.Contains(err.Error(), "zzzz.jsonl") {
		t.Fatalf("error %v, want one naming zzzz.jsonl", err)
	}
}

// demoDir is the bundled demo of tune effort (README): the design corpus and its repository, kept
// equal to what designCorpus and designRepo generate (go test -update rewrites it).
var demoDir = filepath.Join("..", "..", "testdata", "effort-demo")

func TestDemoData(t *testing.T) {
	c := designCorpus(t)
	want := map[string][]byte{}
	for _, f := range c.files() {
		data, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		want["transcripts/"+f] = data
		meta := strings.TrimSuffix(f, ".jsonl") + ".meta.json"
		if data, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(meta))); err == nil {
			want["transcripts/"+meta] = data
		}
	}
	for name, body := range designRepo {
		want["repo/"+name] = []byte(body)
	}
	for name, data := range want {
		p := filepath.Join(demoDir, filepath.FromSlash(name))
		if *testutil.Update {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s differs from the generated demo (go test -update): %v", p, err)
		}
	}
}

// TestSeveralShiftsInOneMessage: pinned Skill calls that share one assistant message
// (docs/decisions.md#several-shifts-in-one-message). Each is judged on the next request; one whose
// level a later call of the same message replaced is "overridden" (the last one loaded wins), with a
// note naming that call; a first-wins build would show the later call as "unexpected level".
func TestSeveralShiftsInOneMessage(t *testing.T) {
	o := severalShifts(t)
	var got []string
	for _, sh := range o.Shifts {
		got = append(got, fmt.Sprintf("%s %s→%s next=%s paired=%v: %s %s", sh.Skill, deref(sh.From), sh.To, deref(sh.Observed), sh.Paired, sh.Verdict, sh.Note))
	}
	want := []string{
		"effort-low medium→low next=high paired=true: overridden effort-high later in the same message set the level (the last one loaded wins)",
		"effort-high medium→high next=high paired=true: ok ",
		"effort-max high→max next=max paired=true: ok ",
		"effort-low high→low next=max paired=false: no-op: lone call ",
		"effort-medium max→medium next=medium paired=true: ok ",
		"effort-low max→low next=medium paired=true: unexpected level ",
		"effort-high medium→high next=high paired=true: ok ",
		"effort-high medium→high next=high paired=true: ok ",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("shifts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// severalShifts observes one session whose messages hold several pinned Skill calls each.
func severalShifts(t *testing.T) *Observed {
	c := &corpus{t: t, root: t.TempDir()}
	s := newSession("5e5e5e5e-0000-4000-8000-000000000007", t0)
	s.prompt("go")
	s.msg("medium", skill("effort-low", "t1"), skill("effort-high", "t2"), bash("t3")) // both paired: high wins
	s.msg("high", skill("effort-max", "t4"), skill("effort-low", "t5"))                // the second is lone
	s.msg("max", skill("effort-medium", "t6"), skill("effort-low", "t7"), bash("t8"))  // first wins here
	s.msg("medium", skill("effort-high", "t9"), skill("effort-high", "t10"), bash("t11"))
	s.msg("high", text("done"))
	c.main(s)
	o, err := c.observe(c.files(), Options{Census: designCensus(t)})
	if err != nil {
		t.Fatal(err)
	}
	return o
}
