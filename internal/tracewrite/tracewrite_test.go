package tracewrite

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/ldd-tools/tune/internal/scorer"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// shlexSplit is Python's shlex.split(s, posix=True) with comments off, written out for the tests so the
// round trip does not depend on traceparse's own recovery decisions: separators are space, tab, CR and
// LF; double quotes escape only " and \; single quotes are literal; outside quotes \ escapes anything.
func shlexSplit(s string) ([]string, error) {
	var out []string
	var tok strings.Builder
	inTok := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			if inTok {
				out = append(out, tok.String())
				tok.Reset()
				inTok = false
			}
		case c == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("no escaped character")
			}
			i++
			tok.WriteByte(s[i])
			inTok = true
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("no closing quotation")
			}
			tok.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inTok = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				tok.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("no closing quotation")
			}
			inTok = true
		default:
			tok.WriteByte(c)
			inTok = true
		}
	}
	if inTok {
		out = append(out, tok.String())
	}
	return out, nil
}

// TestQuoteMatchesReferenceWriter checks Quote against the reference TraceStore._kv outputs recorded in
// trace_parse_cases.jsonl.
func TestQuoteMatchesReferenceWriter(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "ldd", "trace_parse_cases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var c struct {
			ID       string          `json:"id"`
			Kind     string          `json:"kind"`
			Input    json.RawMessage `json:"input"`
			Expected json.RawMessage `json:"expected"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if c.Kind != "serialize_kv" {
			continue
		}
		var want string
		var in struct{ Key, Value string }
		if err := json.Unmarshal(c.Expected, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(c.Input, &in); err != nil {
			t.Fatal(err)
		}
		if got := in.Key + "=" + Quote(in.Value); got != want {
			t.Errorf("%s: %q, reference writes %q", c.ID, got, want)
		}
		n++
	}
	if n != 9 {
		t.Fatalf("%d serialize_kv cases, want 9", n)
	}
}

func TestQuoteRoundTrip(t *testing.T) {
	for _, v := range []string{"", "plain", "two words", `has "dq"`, "it's", `it's "both"`, "tab\tsep", `back\slash`,
		`end\`, "nbsp\u00a0end\u00a0", "  lead", "a=b", "Δ±", "#hash", "'", `"`, `\"`, "x\u2028y"} {
		toks, err := shlexSplit("k=" + Quote(v))
		if err != nil || len(toks) != 1 || toks[0] != "k="+v {
			t.Errorf("Quote(%q) = %s reads back as %q (%v)", v, Quote(v), toks, err)
		}
	}
	if got := Quote("line\nbreak\r\nhere\r"); got != `"line break here "` {
		t.Errorf("line breaks: %s", got)
	}
}

// FuzzQuote: whatever the value, the quoted token reads back as key=value (line breaks as spaces).
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "a b", `"`, "'", `\`, "it's \"both\"", "\u00a0", "x\ny"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		q := Quote(v)
		toks, err := shlexSplit("k=" + q)
		want := strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(v)
		if err != nil || len(toks) != 1 || toks[0] != "k="+want {
			t.Fatalf("Quote(%q) = %q reads back as %q (%v)", v, q, toks, err)
		}
		if strings.ContainsAny(q, "\r\n") {
			t.Fatalf("quoted value holds a line break: %q", q)
		}
	})
}

func refWeights(t *testing.T) *weights.Weights {
	t.Helper()
	w, err := weights.Load(testutil.ReferenceWeightsPath())
	if err != nil {
		t.Fatal(err)
	}
	return &w
}

var ts = time.Date(2026, 12, 1, 3, 0, 0, 123456000, time.UTC)

func TestFormatMeta(t *testing.T) {
	w := refWeights(t)
	cases := []struct {
		prompt string
		want   string
	}{
		{"fix the typo in README.md line 12",
			`2026-12-01T03:00:00.123456Z  meta  L0/reflex  dispatch=auto  signals=explicit-bugfix:-5,single-file:-3  weights=v0001  task="fix the typo"  loops=inner`},
		{"hook into the R35 mechanism",
			`2026-12-01T03:00:00.123456Z  meta  L3/structural  creativity=standard  dispatch=auto  signals=cross-layer:+2,contract-rule-hit:+2  weights=v0001  task="fix the typo"  loops=inner`},
		{"LDD[level=L0]: hello", `2026-12-01T03:00:00.123456Z  meta  L0/reflex  dispatch=override-down  signals=  weights=v0001  task="fix the typo"  loops=inner`},
	}
	for _, c := range cases {
		r := scorer.Score(c.prompt, nil, w)
		if got := FormatMeta(ts, r, "fix the typo", []string{"inner"}, nil); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.prompt, got, c.want)
		}
	}
	r := scorer.Score("take your time", nil, w)
	got := FormatMeta(ts, r, `say "hi"`, []string{"design", "inner"}, map[string]string{"store": "tier 0", "task": "ignored", "bad key": "x", "": "y"})
	want := `2026-12-01T03:00:00.123456Z  meta  L3/structural  creativity=standard  dispatch=bump  signals=  weights=v0001  task='say "hi"'  loops=design,inner  store="tier 0"`
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

// TestMetaRoundTrip writes meta lines with Append and reads them back with the trace reader.
func TestMetaRoundTrip(t *testing.T) {
	w := *refWeights(t)
	w.Version = 3
	w.Signals[weights.ContractRuleHit] = 5 // +2.5
	path := filepath.Join(t.TempDir(), "proj", ".ldd", "trace.log")
	prompts := []string{
		"fix the typo in README.md line 12",
		"design a new autonomy sublevel between A2 and A3 for manager-led recursive delegation with shared memory; greenfield, no known pattern fits directly, we want to prototype novel mechanisms",
		"LDD+: take your time with the schema",
		`it's a "quoted" \ title`,
	}
	var results []scorer.Result
	for i, p := range prompts {
		r := scorer.Score(p, nil, &w)
		results = append(results, r)
		line := FormatMeta(ts.Add(time.Duration(i)*time.Second), r, Title(p, 80), []string{"inner"}, map[string]string{"note": "x y"})
		if err := Append(path, line); err != nil {
			t.Fatal(err)
		}
		toks, err := shlexSplit(line)
		if err != nil || toks[1] != "meta" || toks[2] != r.FinalLevel.Label() {
			t.Fatalf("line %d does not split: %v %q", i, err, toks)
		}
	}
	res, err := traceparse.ReadLast(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) > 0 || len(res.Tasks) != len(prompts) {
		t.Fatalf("%d tasks, warnings %v", len(res.Tasks), res.Warnings)
	}
	for i, task := range res.Tasks {
		r := results[i]
		if task.Level != r.FinalLevel.String() || task.Dispatch != ShortDispatch(r.DispatchSource) || task.Title != Title(prompts[i], 80) ||
			task.WeightsVersion != "v0003" || !reflect.DeepEqual(task.Loops, []string{"inner"}) || !task.HasSignals {
			t.Errorf("task %d read back as %+v", i, task)
		}
		wantCreativity := ""
		if r.FinalLevel >= weights.L3 {
			wantCreativity = r.Creativity
		}
		if task.Creativity != wantCreativity {
			t.Errorf("task %d creativity %q, want %q", i, task.Creativity, wantCreativity)
		}
		if len(task.Signals) != len(r.Signals) {
			t.Fatalf("task %d signals %v, want %v", i, task.Signals, r.Signals)
		}
		for j, s := range task.Signals {
			if s.Name != r.Signals[j].Name || s.Weight != r.Signals[j].Weight {
				t.Errorf("task %d signal %d: %+v, want %+v", i, j, s, r.Signals[j])
			}
		}
	}
}

// TestAppendConcurrent runs writers in separate processes, as two agents would be, each appending long
// lines, and checks that every line arrives whole and once. (On a local Linux file system O_APPEND alone
// keeps a single write whole; TestAppendWaitsForLock is what shows that the lock is taken.)
func TestAppendConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "trace.log")
	const writers, each = 4, 50
	var cmds []*exec.Cmd
	for g := range writers {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAppendHelperProcess$")
		cmd.Env = append(os.Environ(), "TRACEWRITE_HELPER="+path, fmt.Sprintf("TRACEWRITE_WRITER=%d", g),
			fmt.Sprintf("TRACEWRITE_LINES=%d", each))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer process: %v", err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != writers*each {
		t.Fatalf("%d lines, want %d", len(lines), writers*each)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		var g, i int
		if _, err := fmt.Sscanf(l, "w%d-%d", &g, &i); err != nil || l != helperLine(g, i) {
			t.Fatalf("torn line: %.60q…", l)
		}
		seen[l[:strings.IndexByte(l, ' ')]] = true
	}
	if len(seen) != writers*each {
		t.Errorf("%d distinct lines", len(seen))
	}
}

// helperLine is the line writer g appends as its i-th: longer than a page, so a write split in two would
// show.
func helperLine(g, i int) string {
	return fmt.Sprintf("w%d-%d %s end", g, i, strings.Repeat("x", 8000))
}

// TestAppendHelperProcess is one writer process of TestAppendConcurrent; it does nothing on its own.
func TestAppendHelperProcess(t *testing.T) {
	path := os.Getenv("TRACEWRITE_HELPER")
	if path == "" {
		t.Skip("helper process for TestAppendConcurrent")
	}
	var g, n int
	fmt.Sscan(os.Getenv("TRACEWRITE_WRITER"), &g)
	fmt.Sscan(os.Getenv("TRACEWRITE_LINES"), &n)
	for i := range n {
		if err := Append(path, helperLine(g, i)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAppendWaitsForLock holds the log's lock as another writer would: Append must wait for it, and write
// once it is released.
func TestAppendWaitsForLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.log")
	other := flock.New(path + ".lock")
	if err := other.Lock(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Append(path, "entry") }()
	select {
	case err := <-done:
		t.Fatalf("Append returned while another writer held the lock (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	if data, _ := os.ReadFile(path); len(data) != 0 {
		t.Fatalf("wrote %q while another writer held the lock", data)
	}
	if err := other.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "entry\n" {
		t.Errorf("after the lock: %q", data)
	}
}

func TestAppendRepairsMissingNewline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.log")
	if err := os.WriteFile(path, []byte("2026-01-01T00:00:00Z  inner  k=1  loss=0.1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Append(path, "next"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != "2026-01-01T00:00:00Z  inner  k=1  loss=0.1\nnext\n" {
		t.Errorf("%q", data)
	}
	if err := Append(path, "two\nlines"); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("a line break must be refused with the path: %v", err)
	}
}

func TestTitle(t *testing.T) {
	cases := map[string]string{
		"fix the\n\ttypo  ":                             "fix the typo",
		strings.Repeat("word ", 30):                     strings.TrimSpace(strings.Repeat("word ", 8)) + "…",
		strings.Repeat("word ", 7) + "abcdefghijklmnop": strings.TrimSpace(strings.Repeat("word ", 7)) + "…",
		strings.Repeat("x", 100):                        strings.Repeat("x", 39) + "…",
		"":                                              "",
	}
	for in, want := range cases {
		if got := Title(in, 40); got != want {
			t.Errorf("Title(%q) = %q, want %q", in, got, want)
		}
	}
}

// The line an append ends is named, so the person who runs the writer can check it: once ended, the
// reader reads it as a task (docs/decisions.md#a-torn-last-line-is-named). The start of the line names
// its task; a start further back than the writer looks is shown by its end. Nothing is named when the
// log ended with its newline.
func TestAppendNamesTheLineItEnds(t *testing.T) {
	long := strings.Repeat("x", unendedLook+10)
	cases := []struct{ before, want string }{
		{"", ""},
		{"2026-01-01T00:00:00Z  inner  k=1\n", ""},
		{"a\n2026-01-01T00:00:00Z  meta  L1/diagnostic  task=\"checkout te", `"2026-01-01T00:00:00Z  meta  L1/diagnostic  task=\"checkout te"`},
		{"2026-01-01T00:00:00Z  meta  L0/reflex  task=\"" + long[:100], `"2026-01-01T00:00:00Z  meta  L0/reflex  task=\"xxxxxxxxxxxxxxx"…`},
		{"2026-01-01T00:00:00Z  meta  L0/reflex  task=" + long, `…"` + strings.Repeat("x", 60) + `"`},
		{"a\n" + long + "tail-end", `…"` + strings.Repeat("x", 52) + `tail-end"`},
		{"a\n\x1b[31mred\xff\u202e", "\"\\x1b[31mred\ufffd\\u202e\""}, // controls and bidi marks escaped
		{"a\n   \r", ""},       // a blank line is skipped, ended or not
		{"a\n# a comment", ""}, // so is a comment
		{"a\n" + strings.Repeat("y", unendedLook), `"` + strings.Repeat("y", 60) + `"…`}, // a start exactly at the window is read
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), "trace.log")
		if err := os.WriteFile(path, []byte(c.before), 0o644); err != nil {
			t.Fatal(err)
		}
		wrote, err := AppendAt(path, nil, func(time.Time) (string, error) { return "next", nil })
		if err != nil {
			t.Fatal(err)
		}
		if wrote.Ended != c.want {
			t.Errorf("after %.40q: Ended %s, want %s", c.before, wrote.Ended, c.want)
		}
	}
}
