package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"unicode/utf8"
)

// fields is lineFields with strings, for comparison and readable failures.
type fields struct {
	Type, Subtype, Timestamp, RequestID, Version, SessionID, Effort, AgentID string
	HasRequestID, HasVersion, HasSessionID, Sidechain, NullField             bool
	DurationMs                                                               float64
	HasDuration, HasMessage                                                  bool
	Message                                                                  msg
	DataType, DataAgentID                                                    string
	HasProgress                                                              bool
	PType, PTimestamp, PRequestID, PEffort                                   string
	PHasRequestID, PSidechain, PHasMessage                                   bool
	PMessage                                                                 msg
}

type msg struct {
	ID, Model, Speed string
	HasID, HasModel  bool
	HasUsage         bool
	Usage            usageFields
	Blocks           int
	Chars            int64
}

func toMsg(m *messageFields) msg {
	return msg{string(m.ID), string(m.Model), string(m.Speed), m.HasID, m.HasModel, m.HasUsage, m.Usage, m.ThinkingBlocks, m.ThinkingChars}
}

func toFields(l *lineFields) fields {
	return fields{
		Type: string(l.Type), Subtype: string(l.Subtype), Timestamp: string(l.Timestamp), RequestID: string(l.RequestID),
		Version: string(l.Version), SessionID: string(l.SessionID), Effort: string(l.Effort), AgentID: string(l.AgentID),
		HasRequestID: l.HasRequestID, HasVersion: l.HasVersion, HasSessionID: l.HasSessionID, Sidechain: l.Sidechain,
		NullField: l.NullField, DurationMs: l.DurationMs, HasDuration: l.HasDuration, HasMessage: l.HasMessage,
		Message: toMsg(&l.Message), DataType: string(l.DataType), DataAgentID: string(l.DataAgentID),
		HasProgress: l.HasProgress, PType: string(l.Progress.Type), PTimestamp: string(l.Progress.Timestamp),
		PRequestID: string(l.Progress.RequestID), PEffort: string(l.Progress.Effort),
		PHasRequestID: l.Progress.HasRequestID, PSidechain: l.Progress.Sidechain, PHasMessage: l.Progress.HasMessage,
		PMessage: toMsg(&l.Progress.Message),
	}
}

// reference extracts the same fields with encoding/json into generic maps: slow and obviously
// right. Its rules mirror the scanner's documented ones (ccusage's fields must have their types;
// the audit's own fields are read when they have the expected type).
func reference(data []byte) (fields, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil || top == nil {
		return fields{}, errSyntax
	}
	var f fields
	r := refReader{}
	f.Type = r.loose(top, "type")
	f.Subtype = r.loose(top, "subtype")
	f.Timestamp, _ = r.opt(top, "timestamp", false)
	f.RequestID, f.HasRequestID = r.opt(top, "requestId", true)
	f.Version, f.HasVersion = r.opt(top, "version", true)
	f.SessionID, f.HasSessionID = r.opt(top, "sessionId", true)
	f.Effort = r.loose(top, "effort")
	f.AgentID = r.loose(top, "agentId")
	f.Sidechain = r.boolean(top, "isSidechain", false)
	r.boolean(top, "isApiErrorMessage", true)
	if v, ok := top["cwd"]; ok && v == nil {
		r.null = true
	}
	if v, ok := top["costUSD"]; ok {
		if v == nil {
			r.null = true
		} else if _, isNum := v.(json.Number); !isNum {
			r.err = errType
		}
	}
	if n, ok := top["durationMs"].(json.Number); ok {
		if v, err := n.Float64(); err == nil {
			f.DurationMs, f.HasDuration = v, true
		}
	}
	if m, ok := top["message"].(map[string]any); ok {
		f.HasMessage = true
		f.Message = r.message(m)
	}
	if d, ok := top["data"].(map[string]any); ok {
		f.DataType = r.loose(d, "type")
		f.DataAgentID = r.loose(d, "agentId")
		if p, ok := d["message"].(map[string]any); ok {
			f.HasProgress = true
			f.PType = r.loose(p, "type")
			f.PTimestamp, _ = r.opt(p, "timestamp", false)
			f.PRequestID, f.PHasRequestID = r.opt(p, "requestId", true)
			f.PSidechain = r.boolean(p, "isSidechain", false)
			f.PEffort = r.loose(p, "effort")
			if m, ok := p["message"].(map[string]any); ok {
				f.PHasMessage = true
				f.PMessage = r.message(m)
			}
		}
	}
	f.NullField = r.null
	return f, r.err
}

type refReader struct {
	err  error
	null bool
}

func (r *refReader) loose(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func (r *refReader) opt(m map[string]any, k string, nullable bool) (string, bool) {
	v, ok := m[k]
	if !ok {
		return "", false
	}
	if v == nil {
		r.null = r.null || nullable
		return "", false
	}
	s, isStr := v.(string)
	if !isStr {
		r.err = errType
		return "", false
	}
	return s, true
}

func (r *refReader) boolean(m map[string]any, k string, nullable bool) bool {
	v, ok := m[k]
	if !ok {
		return false
	}
	if v == nil {
		r.null = r.null || nullable
		return false
	}
	b, isBool := v.(bool)
	if !isBool {
		r.err = errType
	}
	return b
}

func (r *refReader) uint(m map[string]any, k string, nullable bool) (uint64, bool) {
	v, ok := m[k]
	if !ok {
		return 0, false
	}
	if v == nil {
		r.null = r.null || nullable
		return 0, false
	}
	n, isNum := v.(json.Number)
	if !isNum {
		r.err = errType
		return 0, false
	}
	u, err := strconv.ParseUint(string(n), 10, 64)
	if err != nil || u > MaxTokens {
		r.err = errType
		return 0, false
	}
	return u, true
}

func (r *refReader) message(m map[string]any) msg {
	var out msg
	var s string
	s, out.HasID = r.opt(m, "id", true)
	out.ID = s
	out.Model, out.HasModel = r.opt(m, "model", true)
	if u, ok := m["usage"]; ok && u != nil {
		out.HasUsage = true
		um, isObj := u.(map[string]any)
		if !isObj {
			r.err = errType
		} else {
			us := &out.Usage
			us.Input, us.HasInput = r.uint(um, "input_tokens", false)
			us.Output, us.HasOutput = r.uint(um, "output_tokens", false)
			us.CacheCreation, _ = r.uint(um, "cache_creation_input_tokens", true)
			us.CacheRead, _ = r.uint(um, "cache_read_input_tokens", true)
			if cc, ok := um["cache_creation"]; ok && cc != nil {
				if ccm, isObj := cc.(map[string]any); isObj {
					us.HasSplit = true
					us.Cache5m, _ = r.uint(ccm, "ephemeral_5m_input_tokens", false)
					us.Cache1h, _ = r.uint(ccm, "ephemeral_1h_input_tokens", false)
				} else {
					r.err = errType
				}
			}
			out.Speed, _ = r.opt(um, "speed", true)
			if d, ok := um["output_tokens_details"].(map[string]any); ok {
				if n, ok := d["thinking_tokens"].(json.Number); ok {
					if v, err := strconv.ParseUint(string(n), 10, 64); err == nil && v <= MaxTokens {
						us.Thinking, us.HasThinking = v, true
					}
				}
			}
		}
	}
	if blocks, ok := m["content"].([]any); ok {
		for _, b := range blocks {
			bm, ok := b.(map[string]any)
			if !ok {
				continue
			}
			switch bm["type"] {
			case "thinking":
				out.Blocks++
				if text, ok := bm["thinking"].(string); ok {
					out.Chars += int64(utf8.RuneCountInString(text))
				}
			case "redacted_thinking":
				out.Blocks++
			}
		}
	}
	return out
}

// comparable reports whether the reference's answer is defined for data: valid JSON, no repeated
// key in an object (encoding/json keeps the last; the scanner merges nested objects), and nesting
// within the scanner's limit.
func comparable(data []byte) bool {
	if !json.Valid(data) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		keys  map[string]bool
		isObj bool
		key   bool // next string token in an object is a key
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return true
		}
		if len(stack) > maxDepth-2 {
			return false
		}
		top := len(stack) - 1
		isKey := top >= 0 && stack[top].isObj && stack[top].key
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				if top >= 0 && stack[top].isObj {
					stack[top].key = true
				}
				stack = append(stack, frame{keys: map[string]bool{}, isObj: true, key: true})
			case '[':
				if top >= 0 && stack[top].isObj {
					stack[top].key = true
				}
				stack = append(stack, frame{})
			default:
				stack = stack[:top]
				if top-1 >= 0 && stack[top-1].isObj {
					stack[top-1].key = true
				}
			}
		case string:
			if isKey {
				if stack[top].keys[v] {
					return false
				}
				stack[top].keys[v] = true
				stack[top].key = false
				continue
			}
			if top >= 0 && stack[top].isObj {
				stack[top].key = true
			}
		default:
			if top >= 0 && stack[top].isObj {
				stack[top].key = true
			}
		}
	}
}

func checkAgainstReference(t *testing.T, data []byte) {
	var lf lineFields
	err := parseLine(data, &lf)
	if !comparable(data) {
		return
	}
	want, wantErr := reference(data)
	if errors.Is(wantErr, errSyntax) {
		return // not an object
	}
	if err != wantErr {
		t.Fatalf("error %v, reference %v on %q", err, wantErr, data)
	}
	if err != nil {
		return
	}
	if got := toFields(&lf); !reflect.DeepEqual(got, want) {
		t.Fatalf("fields differ on %q\n got %+v\nwant %+v", data, got, want)
	}
}

// FuzzRecord checks the fast field reader against encoding/json: on every valid record it extracts
// the same fields and reports the same type errors; on anything else it does not panic.
func FuzzRecord(f *testing.F) {
	for _, path := range []string{
		filepath.Join(spotterDir, "short.jsonl"),
		filepath.Join(spotterDir, "subagent.jsonl"),
		edgeCases,
	} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for i, line := range bytes.Split(data, []byte("\n")) {
			if i%7 == 0 || bytes.Contains(line, []byte(`"usage"`)) && i%3 == 0 {
				f.Add(line)
			}
		}
	}
	f.Add([]byte(`{"message":{"id":"m","content":[{"type":"thinking","thinking":"a\u00e9\ud83d\ude00\n\"b"}],"usage":{"input_tokens":1,"output_tokens":2,"output_tokens_details":{"thinking_tokens":7}}}}`))
	f.Add([]byte(`{"type":"progress","data":{"type":"agent_progress","agentId":"a1","message":{"requestId":"r","timestamp":"2026-01-01T00:00:00.000Z","message":{"id":"m","model":"x","usage":{"input_tokens":1,"output_tokens":2,"speed":null}}}}}`))
	f.Add([]byte(`{"requestId":5,"message":{"usage":{"input_tokens":1.5,"output_tokens":-2,"cache_creation":{"ephemeral_1h_input_tokens":3}}}}`))
	for _, c := range keyFilterCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgainstReference(t, data)
		checkKeyFilters(t, data)
	})
}

// keyFilterCases are records on which the parse decides ccusage's byte filters: escaped quotes in
// keys and strings, spaces around the colon, nulls at any depth, the patterns inside strings.
var keyFilterCases = []string{
	`{"message":{"usage":{"input_tokens":1}}}`,
	`{"message":{"usage" :{"input_tokens":1}}}`,
	`{"message":{"x\"usage":{"input_tokens":1}}}`,
	`{"message":{"usage\"":{"input_tokens":1}}}`,
	`{"text":"\"usage\":{","usage":[1]}`,
	`{"a":{"b":[{"id":null}]},"usage":{}}`,
	`{"a":{"b":[{"id" : ` + "	" + `null}]}}`,
	`{"x\"model":null,"message":{"usage":{"input_tokens":1}}}`,
	`{"i\u0064":null}`,
	`{"t":"\"id\":null","u":"a\":null"}`,
	`{"id":"null","model":[null],"costUSD":nullx}`,
	`{"speed":null}`,
	`{"cache_read_input_tokens":null,"usage":{"input_tokens":1}}`,
	`{"usage":{"input_tokens":"1"},"id":null}`,
	`{"usage":{"input_tokens":1}} {"id":null}`,
}

// checkKeyFilters: on every record that parses, the filters the parse decides equal ccusage's byte
// rules (`"usage":{` present, hasNullField).
func checkKeyFilters(t *testing.T, data []byte) {
	t.Helper()
	var lf lineFields
	if parseLineOpts(data, &lf, nil, true) != nil {
		return // judged on its bytes by usageRecord
	}
	if want := bytes.Contains(data, markUsageStrict); lf.UsageKey != want {
		t.Errorf("%s: usage key %v, want %v", data, lf.UsageKey, want)
	}
	if want := hasNullField(data); lf.NullKey != want {
		t.Errorf("%s: null key %v, want %v", data, lf.NullKey, want)
	}
}

// TestKeyFiltersMatchByteRules runs checkKeyFilters on the tricky cases, and checks that they do
// exercise both answers of both filters.
func TestKeyFiltersMatchByteRules(t *testing.T) {
	var usage, null [2]int
	for _, c := range keyFilterCases {
		checkKeyFilters(t, []byte(c))
		var lf lineFields
		if parseLineOpts([]byte(c), &lf, nil, true) == nil {
			usage[b2i(lf.UsageKey)]++
			null[b2i(lf.NullKey)]++
		}
	}
	if usage[0] == 0 || usage[1] == 0 || null[0] == 0 || null[1] == 0 {
		t.Errorf("cases cover usage %v, null %v", usage, null)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestParseSampleMatchesReference runs the differential check over every line of the sample.
func TestParseSampleMatchesReference(t *testing.T) {
	files, err := Discover([]string{testdataRoot})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) > 0 {
				checkAgainstReference(t, line)
				checkKeyFilters(t, line)
				n++
			}
		}
	}
	if n < 10000 {
		t.Errorf("checked only %d lines", n)
	}
}

func TestEscapedRuneCount(t *testing.T) {
	for _, s := range []string{"", "abc", "é€😀", "a\nb\t\"c\\", "\x00\x1f", "\xff\xfe bad utf8", "\U0001F600", "\uFFFD"} {
		quoted, _ := json.Marshal(s)
		raw := quoted[1 : len(quoted)-1]
		var decoded string
		if err := json.Unmarshal(quoted, &decoded); err != nil {
			t.Fatal(err)
		}
		if got, want := escapedRuneCount(raw), utf8.RuneCountInString(decoded); got != want {
			t.Errorf("%q: %d runes, want %d", raw, got, want)
		}
	}
	// Escaped surrogate pairs and lone surrogates, as other writers produce them.
	for raw, want := range map[string]int{`\ud83d\ude00`: 1, `\ud83d`: 1, `\ud83dx`: 2, `\ude00\ud83d`: 2, `\u00e9\u0041`: 2} {
		if got := escapedRuneCount([]byte(raw)); got != want {
			t.Errorf("%s: %d runes, want %d", raw, got, want)
		}
	}
}

func TestParseLineErrors(t *testing.T) {
	for _, c := range []struct {
		in   string
		want error
	}{
		{`{"a":1}`, nil},
		{`{"a":1} x`, errSyntax},
		{`{"a":`, errTruncated},
		{`{"a":"abc`, errTruncated},
		{`{"a":tru}`, errSyntax},
		{`{"a":01}`, errSyntax},
		{`{"message":{"usage":{"input_tokens":"1"}}}`, errType},
		{`{"message":{"usage":{"input_tokens":1e3}}}`, errType},
		{`{"message":{"usage":{"input_tokens":18446744073709551616}}}`, errType},
		{`{"isSidechain":"yes"}`, errType},
		{`{"effort":5,"agentId":[1]}`, nil}, // the audit's own fields are read loosely
	} {
		var lf lineFields
		if got := parseLine([]byte(c.in), &lf); got != c.want {
			t.Errorf("%s: %v, want %v", c.in, got, c.want)
		}
	}
	var lf lineFields
	deep := bytes.Repeat([]byte("["), maxDepth+10)
	if err := parseLine(append([]byte(`{"a":`), deep...), &lf); err == nil {
		t.Error("deep nesting accepted")
	}
}
