package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// checkRecord compares ParseRecord with a reference built on encoding/json's generic decoding (keys
// matched exactly, as Claude Code writes them) on every record whose fields have the expected types.
func checkRecord(t *testing.T, data []byte) {
	t.Helper()
	if !comparable(data) {
		return // invalid JSON, repeated keys or too deep: no reference answer
	}
	var top map[string]any
	if json.Unmarshal(data, &top) != nil || top == nil {
		return // not an object (encoding/json takes null into a map as nothing): not a record
	}
	obj := func(m map[string]any, k string) map[string]any {
		v, _ := m[k].(map[string]any)
		return v
	}
	str := func(m map[string]any, k string) string {
		v, _ := m[k].(string)
		return v
	}
	var r Record
	err := ParseRecord(data, &r)
	if errors.Is(err, errType) {
		return // a message field ccusage reads has another type: the audit drops such lines too
	}
	if err != nil {
		t.Fatalf("ParseRecord(%s): %v, encoding/json accepts it", data, err)
	}
	eq := func(name string, got []byte, want string) {
		if string(got) != want {
			t.Fatalf("%s = %q, want %q in %s", name, got, want, data)
		}
	}
	msg := obj(top, "message")
	eq("type", r.Type, str(top, "type"))
	eq("timestamp", r.Timestamp, str(top, "timestamp"))
	eq("effort", r.Effort, str(top, "effort"))
	eq("agentId", r.AgentID, str(top, "agentId"))
	eq("message.id", r.MessageID, str(msg, "id"))
	eq("toolUseResult.agentId", r.ResultAgentID, str(obj(top, "toolUseResult"), "agentId"))
	eq("parentToolUseID", r.ParentToolUseID, str(top, "parentToolUseID"))
	if r.Copy.OK {
		// An agent_progress copy: data.message holds the request, its usage has both token counts.
		pm := obj(obj(top, "data"), "message")
		u := obj(obj(pm, "message"), "usage")
		if u == nil || u["input_tokens"] == nil || u["output_tokens"] == nil {
			t.Fatalf("Copy.OK without usable usage in %s", data)
		}
		eq("data.message.message.id", r.Copy.MessageID, str(obj(pm, "message"), "id"))
		eq("data.message.requestId", r.Copy.RequestID, str(pm, "requestId"))
		eq("data.message.effort", r.Copy.Effort, str(pm, "effort"))
		eq("data.message.timestamp", r.Copy.Timestamp, str(pm, "timestamp"))
	}
	if r.Command != nil && !textHasCommand(data) {
		t.Fatalf("command %q read from a record whose text names none: %s", r.Command, data)
	}
	if meta, _ := top["isMeta"].(bool); r.IsMeta != meta {
		t.Fatalf("isMeta = %v in %s", r.IsMeta, data)
	}
	var tools, results int
	_, text := msg["content"].(string)
	blocks, _ := msg["content"].([]any)
	for _, bv := range blocks {
		b, _ := bv.(map[string]any)
		switch str(b, "type") {
		case "tool_use":
			if tools >= len(r.Tools) {
				t.Fatalf("tool %d missing in %s", tools, data)
			}
			got := r.Tools[tools]
			eq("tool id", got.ID, str(b, "id"))
			eq("tool name", got.Name, str(b, "name"))
			eq("input.skill", got.Skill, str(obj(b, "input"), "skill"))
			eq("input.subagent_type", got.SubagentType, str(obj(b, "input"), "subagent_type"))
			tools++
		case "tool_result":
			if results >= len(r.ResultIDs) {
				t.Fatalf("tool result %d missing in %s", results, data)
			}
			eq("tool_use_id", r.ResultIDs[results], str(b, "tool_use_id"))
			results++
		case "text":
			text = true
		}
	}
	if tools != len(r.Tools) || results != len(r.ResultIDs) || text != r.Text {
		t.Fatalf("%d tools, %d results, text %v; want %d, %d, %v in %s", len(r.Tools), len(r.ResultIDs), r.Text, tools, results, text, data)
	}
}

// TestRecordCommand: a typed slash command is read from a string content or a text block, its
// brackets raw or escaped as encoding/json writes them; a tool result's text names none.
func TestRecordCommand(t *testing.T) {
	for line, want := range map[string]string{
		`{"type":"user","message":{"content":"<command-name>/feat</command-name>\n<command-args>x</command-args>"}}`: "feat",
		`{"type":"user","message":{"content":"\u003ccommand-name\u003e/feat\u003c/command-name\u003e"}}`:             "feat",
		`{"type":"user","message":{"content":[{"type":"text","text":"<command-name>/plug:skill</command-name>"}]}}`:  "plug:skill",
		`{"type":"user","message":{"content":[{"type":"tool_result","content":"<command-name>/x</command-name>"}]}}`: "",
		`{"type":"user","message":{"content":"<command-name>/unclosed"}}`:                                            "",
	} {
		var r Record
		if err := ParseRecord([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if string(r.Command) != want {
			t.Errorf("command %q, want %q in %s", r.Command, want, line)
		}
	}
}

func TestParseRecordSample(t *testing.T) {
	files, err := Discover([]string{testdataRoot})
	if err != nil {
		t.Fatal(err)
	}
	skills, tasks, copies := 0, 0, 0
	commands := map[string]int{}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			checkRecord(t, line)
			var r Record
			if ParseRecord(line, &r) == nil {
				if r.Copy.OK {
					copies++
				}
				// A slash command is named exactly when the message holds one.
				if want := string(r.Type) == "user" && textHasCommand(line); want != (r.Command != nil) {
					t.Errorf("command %q in %.200s", r.Command, line)
				}
				if r.Command != nil {
					commands[string(r.Command)]++
				}
				for _, tu := range r.Tools {
					switch string(tu.Name) {
					case "Skill":
						skills++
					case "Task":
						tasks++
					}
				}
			}
		}
	}
	// The sample's Skill and Task calls (grep '"name":"Skill"' and '"name":"Task"' on the main lines).
	if skills == 0 || tasks == 0 {
		t.Errorf("read %d Skill and %d Task calls from the sample, want some of each", skills, tasks)
	}
	// The sample's agent_progress lines with usage (grep -c '"type":"agent_progress"' on the lines
	// with "input_tokens"; transcripts.md §5.3).
	// The sample's user prompts with a <command-name> in their text (not in tool results).
	wantCommands := map[string]int{"compact": 1, "handgemacht:create-beads": 1, "mcp": 1, "test-command": 1}
	if !reflect.DeepEqual(commands, wantCommands) {
		t.Errorf("commands %v, want %v", commands, wantCommands)
	}
	if copies != 121 {
		t.Errorf("read %d agent_progress copies from the sample, want 121", copies)
	}
}

// textHasCommand reports whether a record's message text (a string content or a text block) names a
// slash command, by encoding/json.
func textHasCommand(line []byte) bool {
	var rec struct {
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &rec) != nil {
		return false
	}
	var text string
	if json.Unmarshal(rec.Message.Content, &text) == nil {
		return strings.Contains(text, "<command-name>")
	}
	var blocks []struct{ Type, Text string }
	json.Unmarshal(rec.Message.Content, &blocks)
	for _, b := range blocks {
		if b.Type == "text" && strings.Contains(b.Text, "<command-name>") {
			return true
		}
	}
	return false
}

func FuzzParseRecord(f *testing.F) {
	data, err := os.ReadFile(filepath.Join(spotterDir, "subagent.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	for i, line := range bytes.Split(data, []byte("\n")) {
		if i%5 == 0 {
			f.Add(line)
		}
	}
	f.Add([]byte(`{"type":"assistant","effort":"high","message":{"id":"m","content":[{"type":"tool_use","id":"t1","name":"Skill","input":{"skill":"effort-low"}},{"type":"tool_use","id":"t2","name":"Task","input":{"subagent_type":"hotfixer","prompt":"x"}}],"usage":{"input_tokens":1,"output_tokens":2}}}`))
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"ok"}]},"toolUseResult":{"status":"completed","agentId":"a1"}}`))
	f.Add([]byte(`{"type":"user","isMeta":true,"message":{"content":"text \"quoted\" \u00e9"}}`))
	f.Add([]byte(`{"type":"progress","parentToolUseID":"t2","data":{"type":"agent_progress","agentId":"a1"}}`))
	f.Add([]byte(`{"message":{"content":[{"type":"tool_use","name":5,"input":[1]}]}}`))
	f.Add([]byte(`{"message":{"id":5,"usage":{"input_tokens":"x"}}}`))
	f.Add([]byte(`{"type":"user","message":{"content":"\u003ccommand-name\u003e/feat\u003c/command-name\u003e"}}`))
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"text","text":"<command-name>/plug:skill</command-name><command-args>x</command-args>"}]}}`))
	f.Add([]byte(`{"type":"progress","data":{"type":"agent_progress","agentId":"a1","message":{"type":"assistant","timestamp":"2026-01-01T00:00:00Z","requestId":"r","effort":"low","message":{"id":"m","usage":{"input_tokens":1,"output_tokens":2}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRecord(t, data)
	})
}
