package effort

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/transcript"
)

// A generated transcript corpus: Claude Code's layout (projects/P/S.jsonl, S/subagents/agent-ID.jsonl
// and its meta.json) and record shapes (one line per content block, sharing message.id, requestId
// and usage; a top-level effort on assistant lines of recent builds).

type block map[string]any

func text(s string) block { return block{"type": "text", "text": s} }

func use(name, id string, input map[string]any) block {
	return block{"type": "tool_use", "id": id, "name": name, "input": input}
}

func skill(name, id string) block { return use("Skill", id, map[string]any{"skill": name}) }

func bash(id string) block { return use("Bash", id, map[string]any{"command": "make test"}) }

func task(agentType, id string) block {
	return use("Task", id, map[string]any{"subagent_type": agentType, "description": "d", "prompt": "p"})
}

func thinking(chars int) block {
	return block{"type": "thinking", "thinking": strings.Repeat("t", chars), "signature": "sig"}
}

type session struct {
	id         string
	sidechain  bool
	agentID    string
	entrypoint string
	lines      []string
	clock      time.Time
	n          int
}

func newSession(id string, start time.Time) *session {
	return &session{id: id, clock: start, entrypoint: "cli"}
}

func (s *session) tick() string {
	s.clock = s.clock.Add(7 * time.Second)
	return s.clock.UTC().Format("2006-01-02T15:04:05.000Z")
}

func (s *session) add(rec map[string]any) {
	rec["sessionId"] = s.id
	rec["isSidechain"] = s.sidechain
	rec["version"] = "2.1.283"
	rec["entrypoint"] = s.entrypoint
	rec["timestamp"] = s.tick()
	if s.agentID != "" {
		rec["agentId"] = s.agentID
	}
	b, err := json.Marshal(rec)
	if err != nil {
		panic(err)
	}
	s.lines = append(s.lines, string(b))
}

// prompt is a user prompt: a new turn.
func (s *session) prompt(text string) {
	s.add(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}})
}

// msg is one API response at effort level ("" records none, as older builds), one line per block.
func (s *session) msg(level string, blocks ...block) {
	s.n++
	id := fmt.Sprintf("msg_%s_%03d", s.id[:4], s.n)
	if s.agentID != "" { // ids are unique across files, as the API's are
		id = fmt.Sprintf("msg_%s_%s_%03d", s.id[:4], s.agentID[len(s.agentID)-4:], s.n)
	}
	for _, b := range blocks {
		rec := map[string]any{
			"type": "assistant", "requestId": "req_" + id,
			"message": map[string]any{
				"id": id, "model": "claude-fable-5-1", "role": "assistant", "type": "message",
				"content": []block{b},
				"usage": map[string]any{"input_tokens": 4, "output_tokens": 100 * s.n, "cache_read_input_tokens": 20000,
					"cache_creation_input_tokens": 500},
			},
		}
		if level != "" {
			rec["effort"] = level
		}
		s.add(rec)
	}
}

// result is the tool result of a Task call, naming the subagent that ran it (toolUseResult.agentId).
func (s *session) result(toolID, agentID string) {
	s.add(map[string]any{"type": "user",
		"message":       map[string]any{"role": "user", "content": []block{{"type": "tool_result", "tool_use_id": toolID, "content": "done"}}},
		"toolUseResult": map[string]any{"status": "completed", "agentId": agentID}})
}

// skillText is the skill body Claude Code injects after a Skill call: a meta user record, not a prompt.
func (s *session) skillText() {
	s.add(map[string]any{"type": "user", "isMeta": true, "message": map[string]any{"role": "user", "content": []block{text("Base directory for this skill …")}}})
}

// copyTo repeats the subagent's requests in its parent's file as agent_progress records linked to
// the dispatching call toolID, as Claude Code 2.1.3x–2.1.7x writes them (the nested record at
// data.message).
func (s *session) copyTo(parent *session, toolID string) {
	for _, line := range s.lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			panic(err)
		}
		if rec["type"] != "assistant" {
			continue
		}
		nested := map[string]any{"type": "assistant", "timestamp": rec["timestamp"], "requestId": rec["requestId"],
			"message": rec["message"]}
		if e, ok := rec["effort"]; ok {
			nested["effort"] = e
		}
		parent.add(map[string]any{"type": "progress", "parentToolUseID": toolID, "toolUseID": "agent_msg_" + toolID,
			"data": map[string]any{"type": "agent_progress", "agentId": s.agentID, "message": nested}})
	}
}

// resume starts session id as `claude --resume` does: the earlier session's records repeated under
// the new id (same message ids), then new turns.
func (s *session) resume(id string) *session {
	r := &session{id: id, clock: s.clock, entrypoint: s.entrypoint, n: s.n}
	for _, line := range s.lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			panic(err)
		}
		rec["sessionId"] = id
		b, err := json.Marshal(rec)
		if err != nil {
			panic(err)
		}
		r.lines = append(r.lines, string(b))
	}
	return r
}

func (s *session) subagent(agentID string) *session {
	return &session{id: s.id, sidechain: true, agentID: agentID, clock: s.clock, entrypoint: s.entrypoint}
}

// corpus writes sessions under root/projects/P and returns the transcript files relative to root.
type corpus struct {
	t    testing.TB
	root string
}

func (c *corpus) write(rel string, lines []string) {
	c.t.Helper()
	p := filepath.Join(c.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		c.t.Fatal(err)
	}
}

func (c *corpus) main(s *session) { c.write("projects/-home-dev-shop/"+s.id+".jsonl", s.lines) }

func (c *corpus) sub(s *session, meta string) {
	dir := "projects/-home-dev-shop/" + s.id + "/subagents/agent-" + s.agentID
	c.write(dir+".jsonl", s.lines)
	if meta != "" {
		c.write(dir+".meta.json", []string{`{"agentType":"` + meta + `","spawnDepth":1}`})
	}
}

// files discovers the corpus as tune audit does, with paths relative to the root.
func (c *corpus) files() []string {
	c.t.Helper()
	abs, err := transcript.Discover([]string{c.root})
	if err != nil {
		c.t.Fatal(err)
	}
	rel := make([]string, len(abs))
	for i, p := range abs {
		r, err := filepath.Rel(c.root, p)
		if err != nil {
			c.t.Fatal(err)
		}
		rel[i] = filepath.ToSlash(r)
	}
	return rel
}

func (c *corpus) open(name string) (io.ReadCloser, error) {
	return os.Open(filepath.Join(c.root, filepath.FromSlash(name)))
}

// observe observes files (relative to the root, as files returns them) from the root, so that the
// report names them relative to it whatever the temporary directory; it returns to the test's
// directory before returning (goldens are read from there).
func (c *corpus) observe(files []string, opt Options) (*Observed, error) {
	c.t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := os.Chdir(c.root); err != nil {
		c.t.Fatal(err)
	}
	defer func() {
		if err := os.Chdir(wd); err != nil {
			c.t.Fatal(err)
		}
	}()
	opt.Open = c.open
	return Observe(files, opt)
}

var t0 = time.Date(2026, 9, 28, 11, 0, 0, 0, time.UTC)

// designCorpus covers the acceptance cases of the effort check:
//
//   - session a1b2…: an interactive run: paired shifts down and up, a lone shift, a re-loaded
//     shifter bouncing medium → max → medium, a nested skill (commit-change) shifting to low and the
//     orchestrator (feat) re-asserting its own level; in later turns the nested level superseded by
//     a shifter, and left in force to the end of the turn (not re-asserted); an xhigh shift that lands on high (fallback), a
//     pinned agent on its pin (meta.json), the same agent off its pin (linked by its Task call), an
//     xhigh agent on high, an unpinned built-in inheriting, and a subagent that shifts;
//   - session e0e0…: CLAUDE_CODE_EFFORT_LEVEL=max: every request at max despite paired shifts;
//   - session e5e5…: e0e0 resumed: its history repeated (counted once, in e0e0), then a new turn;
//   - session d1d1…: a headless run (entrypoint sdk-cli) that stays at high;
//   - session f0f0…: the user types /feat (the orchestrator, invoked: no Skill call), a nested skill
//     re-asserted with the shifter at feat's level, and a lone shift down;
//   - session 0a0a…: an older build that records no effort: unknown, never guessed; its Explore
//     subagent has no file, only agent_progress copies in the main file.
//
// The hotfixer on its pin is also repeated in its parent's file as agent_progress copies, counted once.
func designCorpus(t testing.TB) *corpus {
	c := &corpus{t: t, root: t.TempDir()}

	a := newSession("a1b2c3d4-0000-4000-8000-000000000001", t0)
	a.prompt("ship the feature")
	a.msg("high", thinking(400), skill("feat", "tu_00"), text("Planning.")) // the orchestrator: feat, high
	a.msg("high", skill("effort-medium", "tu_01"), bash("tu_02"))           // paired, down
	a.skillText()
	a.msg("medium", skill("effort-max", "tu_03"))                // lone: a no-op
	a.msg("medium", skill("effort-max", "tu_04"), bash("tu_05")) // paired, up
	a.msg("max", thinking(2000), skill("effort-medium", "tu_06"), task("hotfixer", "tu_07"))
	h1 := a.subagent("aa000000000000001") // hotfixer on its pin, known from meta.json
	h1.prompt("fix")
	h1.msg("low", bash("tu_h1"))
	h1.msg("low", text("fixed"))
	h1.copyTo(a, "tu_07") // its requests repeated in the main file: counted once, from its own file
	a.result("tu_07", "aa000000000000001")
	a.msg("medium", skill("effort-max", "tu_08"), bash("tu_09"))    // re-loaded shifter, up again
	a.msg("max", skill("effort-medium", "tu_10"), bash("tu_11"))    // …and back down
	a.msg("medium", skill("commit-change", "tu_12"), bash("tu_13")) // nested skill: low
	a.msg("low", skill("feat", "tu_14"), bash("tu_15"))             // feat re-asserts its own high
	a.msg("high", task("hotfixer", "tu_16"), task("verifier", "tu_17"), task("general-purpose", "tu_18"))
	a.result("tu_16", "aa000000000000002")
	a.result("tu_17", "aa000000000000003")
	a.result("tu_18", "aa000000000000004")
	a.msg("high", skill("effort-medium", "tu_22"), bash("tu_23"))
	a.msg("medium", skill("effort-xhigh", "tu_19"), bash("tu_20")) // lands on high: the fallback
	a.msg("high", text("Done."))
	a.prompt("and the changelog")
	a.msg("high", bash("tu_21")) // a new turn: the session level again
	a.msg("high", skill("feat", "tu_24"), bash("tu_25"))
	a.msg("high", skill("commit-change", "tu_26"), bash("tu_27")) // nested: low…
	a.msg("low", skill("effort-medium", "tu_28"), bash("tu_29"))  // …superseded by an explicit phase
	a.msg("medium", text("Changelog written."))
	a.prompt("and the release notes")
	a.msg("high", skill("feat", "tu_30"), bash("tu_31"))
	a.msg("high", skill("commit-change", "tu_32"), bash("tu_33")) // nested: low, never re-asserted
	a.msg("low", bash("tu_34"))
	a.msg("low", text("Release notes written."))
	c.main(a)

	c.sub(h1, "hotfixer")
	h2 := a.subagent("aa000000000000002") // hotfixer off its pin, known from its Task call
	h2.prompt("fix")
	h2.msg("medium", bash("tu_h2"))
	h2.msg("low", text("fixed"))
	c.sub(h2, "")
	v := a.subagent("aa000000000000003") // verifier pinned xhigh, runs at high; and shifts inside
	v.prompt("verify")
	v.msg("high", skill("effort-max", "tu_v1"), bash("tu_v2"))
	v.msg("high", text("verified"))
	c.sub(v, "verifier")
	g := a.subagent("aa000000000000004") // built-in, unpinned: inherits the main loop's high
	g.prompt("look")
	g.msg("high", text("seen"))
	c.sub(g, "general-purpose")

	e := newSession("e0e0e0e0-0000-4000-8000-000000000002", t0.Add(time.Hour))
	e.prompt("fix the bug")
	e.msg("max", skill("effort-medium", "te_1"), bash("te_2"))
	e.msg("max", skill("effort-low", "te_3"), bash("te_4"))
	e.msg("max", text("done"))
	c.main(e)
	r := e.resume("e5e5e5e5-0000-4000-8000-000000000006") // its 3 requests are e0e0's: counted there only
	r.prompt("and the docs")
	r.msg("max", text("Docs updated."))
	c.main(r)

	d := newSession("d1d1d1d1-0000-4000-8000-000000000003", t0.Add(2*time.Hour))
	d.entrypoint = "sdk-cli"
	d.prompt("run the reconcile")
	d.msg("high", skill("effort-low", "td_1"), bash("td_2"))
	d.msg("high", text("done"))
	c.main(d)

	f := newSession("f0f0f0f0-0000-4000-8000-000000000005", t0.Add(4*time.Hour))
	f.prompt("<command-name>/feat</command-name>\n<command-message>feat</command-message>\n<command-args>the export</command-args>")
	f.msg("high", bash("tf_1"))                                 // phase feat, invoked by the user
	f.msg("high", skill("commit-change", "tf_2"), bash("tf_3")) // nested: low…
	f.msg("low", skill("effort-high", "tf_4"), bash("tf_5"))    // …re-asserted with feat's shifter
	f.msg("high", skill("effort-low", "tf_6"))                  // a lone shift down: a no-op
	f.msg("high", text("Exported."))
	c.main(f)

	o := newSession("0a0a0a0a-0000-4000-8000-000000000004", t0.Add(3*time.Hour))
	o.prompt("old build")
	o.msg("", skill("effort-low", "to_1"), bash("to_2"))
	o.msg("", task("Explore", "to_3"))
	x := o.subagent("ab000000000000005") // no file of its own: known only from its agent_progress copies
	x.prompt("look")
	x.msg("", bash("to_x1"))
	x.msg("", text("seen"))
	x.copyTo(o, "to_3")
	o.result("to_3", "ab000000000000005")
	o.msg("", text("done"))
	c.main(o)
	return c
}

// designCensus is the repository whose pins the corpus is checked against.
func designCensus(t testing.TB) *Census {
	root := writeTree(t, t.TempDir(), designRepo)
	c, err := TakeCensus(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// designRepo is the repository of designCensus.
var designRepo = map[string]string{
	"agents/hotfixer.md":            "---\nname: hotfixer\neffort: low\n---\n",
	"agents/verifier.md":            "---\nname: verifier\neffort: xhigh\n---\n",
	"agents/interviewer.md":         "---\nname: interviewer\n---\n",
	"skills/feat/SKILL.md":          "---\nname: feat\neffort: high\n---\n",
	"skills/commit-change/SKILL.md": "---\nname: commit-change\neffort: low\n---\n",
	"skills/effort-low/SKILL.md":    "---\nname: effort-low\neffort: low\n---\n",
	"skills/effort-medium/SKILL.md": "---\nname: effort-medium\neffort: medium\n---\n",
	"skills/effort-high/SKILL.md":   "---\nname: effort-high\neffort: high\n---\n",
	"skills/effort-xhigh/SKILL.md":  "---\nname: effort-xhigh\neffort: xhigh\n---\n",
	"skills/effort-max/SKILL.md":    "---\nname: effort-max\neffort: max\n---\n",
	"skills/graphify/SKILL.md":      "---\nname: graphify\n---\n",
	"settings.json":                 `{"effortLevel": "high", "env": {"CLAUDE_CODE_EFFORT_LEVEL": "max"}}`,
}
