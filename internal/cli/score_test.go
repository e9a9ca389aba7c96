package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/scorecmd"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/tracewrite"
	"github.com/ldd-tools/tune/internal/weights"
)

var scoreTestNow = time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)

// runScoreCmd runs tune in-process with stdin and a fresh store of the reference weights; it returns the
// exit code, stdout and stderr.
func runScoreCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	weightsDir := filepath.Join(t.TempDir(), "weights")
	if err := testutil.CopyReferenceWeights(weightsDir); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	f := &Factory{
		IO:  &IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut},
		Now: func() time.Time { return scoreTestNow },
		Getenv: func(k string) string {
			if k == "TUNE_WEIGHTS_DIR" {
				return weightsDir
			}
			return ""
		},
	}
	code := Run(f, args)
	return code, out.String(), errOut.String()
}

// TestScoreBatchParity feeds the whole parity corpus through `tune score --batch` and compares every
// output line with the reference scorer's recorded JSON, field by field.
func TestScoreBatchParity(t *testing.T) {
	corpus := filepath.Join(repoRoot(), "testdata", "ldd", "parity.jsonl")
	code, out, errOut := runScoreCmd(t, "", "score", "--batch", corpus)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(corpus)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(got) != len(want) || len(want) != 255 {
		t.Fatalf("%d result lines for %d records", len(got), len(want))
	}
	fields := []string{"raw_score", "auto_level", "final_level", "creativity", "dispatch_source", "signals", "clamp_reason",
		"override_fragment", "dispatch_header"}
	matched := 0
	for i := range want {
		var w, g map[string]any
		if err := json.Unmarshal([]byte(want[i]), &w); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(got[i]), &g); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, got[i])
		}
		ok := g["weights_version"] == float64(1)
		for _, k := range fields {
			if !reflect.DeepEqual(w[k], g[k]) {
				t.Errorf("%s: %s = %v, reference %v", w["id"], k, g[k], w[k])
				ok = false
			}
		}
		if ok {
			matched++
		}
	}
	t.Logf("--batch parity: %d/%d", matched, len(want))
}

func TestScoreOutputs(t *testing.T) {
	code, out, _ := runScoreCmd(t, "", "score", "fix the typo in README.md line 12")
	if code != 0 || out != "Dispatched: L0/reflex (signals: explicit-bugfix=-5, single-file=-3)\n" {
		t.Errorf("header: %d %q", code, out)
	}
	// stdin is read as is (no trimming), both without an argument and with "-".
	for _, args := range [][]string{{"score"}, {"score", "-"}, {"score", "--json", "-"}} {
		code, out, errOut := runScoreCmd(t, "LDD+: take your time\n", args...)
		if code != 0 || !strings.Contains(out, `user-bump from L2, fragment: \"LDD+\"`) && !strings.Contains(out, `fragment: "LDD+"`) {
			t.Errorf("%v: %d %q %s", args, code, out, errOut)
		}
	}
	// A prompt that starts with "-" goes after "--".
	if code, out, errOut := runScoreCmd(t, "", "score", "--", "-fix it"); code != 0 || !strings.HasPrefix(out, "Dispatched: L1/") {
		t.Errorf("-- prompt: %d %q %s", code, out, errOut)
	}
}

func TestScoreFlagErrors(t *testing.T) {
	dir := t.TempDir()
	cases := [][]string{
		{"score", "a", "b"},
		{"score", "--batch", "x.jsonl", "prompt"},
		{"score", "--batch", "x.jsonl", "--log", filepath.Join(dir, "t.log")},
		{"score", "--batch", "x.jsonl", "--history", "t.log"},
		{"score", "--task", "t", "prompt"},
		{"score", "--loops", "inner", "prompt"},
		{"score", "--weights", "w.toml", "--weights-dir", dir, "prompt"},
		{"score", "--batch", "-", "-"},
		{"score", "--bogus"},
		// a value that is not a timestamp is a usage error, as a bad --loops is (the trace review)
		{"score", "--log", filepath.Join(dir, "t.log"), "--regression-of", "yesterday", "prompt"},
	}
	for _, args := range cases {
		if code, _, errOut := runScoreCmd(t, "", args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, ExitUsage, errOut)
		}
	}
}

func TestScoreOptions(t *testing.T) {
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
		Now: func() time.Time { return scoreTestNow }, Getenv: func(string) string { return "" }}
	var got *scoreOptions
	cmd := newCmdScore(f, func(o *scoreOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--json", "--log", "t.log", "--task", "", "--loops", "design,inner", "hello"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Prompt != "hello" || got.FromStdin || !got.JSON || got.Log != "t.log" || !got.TaskSet || got.Task != "" ||
		!got.LoopsSet || !reflect.DeepEqual(got.Loops, []string{"design", "inner"}) {
		t.Errorf("%+v", got)
	}
}

func TestScoreBatchErrors(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"{\"prompt\": \"ok\"}\n\nnot json\n":                  ":3: bad JSON",
		"{\"prompt\": \"ok\"}\n{\"history\": []}\n":           `:2: missing "prompt"`,
		"{\"prompt\": 3}\n":                                   ":1: bad JSON",
		"{\"prompt\": \"x\", \"history\": \"a.py\"}\n":        `:1: "history" must be a list`,
		"{\"prompt\": \"x\", \"history\": [1]}\n":             `:1: "history" must be a list`,
		"{\"prompt\": \"fine\"}\n{\"prompt\": \"x\"} trail\n": ":2: bad JSON",
	}
	for in, want := range cases {
		path := filepath.Join(dir, "b.jsonl")
		if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runScoreCmd(t, "", "score", "--batch", path)
		if code != ExitError || out != "" || !strings.Contains(errOut, path+want) {
			t.Errorf("%q: exit %d, out %q, err %q; want %q", in, code, out, errOut, want)
		}
	}
	// stdin batch, blank lines skipped, history null / [] / list, order kept
	in := `{"prompt": "edit src/a.py", "history": ["src/b.py"]}` + "\n\n" +
		`{"prompt": "edit src/a.py", "history": null}` + "\n" + `{"prompt": "edit src/a.py", "history": []}`
	code, out, errOut := runScoreCmd(t, in, "score", "--batch", "-")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != 3 || !strings.Contains(lines[0], "unknown-file-territory") ||
		strings.Contains(lines[1], "unknown-file-territory") || strings.Contains(lines[2], "unknown-file-territory") {
		t.Errorf("%d %q %s", code, out, errOut)
	}
}

func TestScoreHistory(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, ".ldd", "trace.log")
	content := "2026-11-30T10:00:00.000000Z  meta  L1/diagnostic  dispatch=auto  task=\"fix docs/Guide.md typo\"  loops=inner\n" +
		"2026-11-30T10:01:00.000000Z  inner  k=1  skill=x  action=\"edit src/net/client.py and lib/x.go\"  loss=0.000\n" +
		"2026-11-30T10:02:00.000000Z  inner  close  terminal=complete  layer=\"4: app/main.go\"  files=cfg/a.yaml,cfg/b.yaml\n"
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := scorecmd.FileHistory(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"docs/Guide.md", "src/net/client.py", "lib/x.go", "app/main.go", "cfg/a.yaml", "cfg/b.yaml"} {
		found := false
		for _, x := range h {
			found = found || x == p
		}
		if !found {
			t.Errorf("history %q misses %s", h, p)
		}
	}
	for prompt, fires := range map[string]bool{
		"refactor src/net/client.py": false,
		"refactor SRC/NET/CLIENT.PY": false,
		"refactor src/net/server.py": true,
		"refactor the retry logic":   false,
	} {
		code, out, _ := runScoreCmd(t, "", "score", "--history", log, "--json", prompt)
		if code != 0 || strings.Contains(out, "unknown-file-territory") != fires {
			t.Errorf("%q: unknown-file-territory %v, want %v\n%s", prompt, !fires, fires, out)
		}
	}
	// A missing log is an error naming it: a mistyped path must not silently turn the signal off.
	missing := filepath.Join(dir, "none.log")
	if code, out, errOut := runScoreCmd(t, "", "score", "--history", missing, "refactor src/x.py"); code != ExitError || out != "" ||
		!strings.Contains(errOut, "--history "+missing+": no such trace log") {
		t.Errorf("missing log: exit %d, out %q, err %q", code, out, errOut)
	}
}

func TestScoreLog(t *testing.T) {
	log := filepath.Join(t.TempDir(), "proj", ".ldd", "trace.log")
	long := "design a new service integration across the payment layer, covering the runner, scorer and manager; wire it into the settlement schema"
	for _, args := range [][]string{
		{"score", "--log", log, "fix the typo in README.md line 12"},
		{"score", "--log", log, "--task", "clamp case", long},
		{"score", "--log", log, "--loops", "cot", "--json", "LDD[level=L4]: it's \"quoted\""},
	} {
		if code, _, errOut := runScoreCmd(t, "", args...); code != 0 {
			t.Fatalf("%v: %s", args, errOut)
		}
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	// The clock stands still: each task is stamped a microsecond after the one before (a stamp is its
	// task's identity, tracewrite.AppendAt).
	want := `2026-12-01T03:00:00.000000Z  meta  L0/reflex  dispatch=auto  signals=explicit-bugfix:-5,single-file:-3  weights=v0001  task="fix the typo in README.md line 12"  loops=inner
2026-12-01T03:00:00.000001Z  meta  L3/structural  creativity=standard  dispatch=auto  signals=greenfield:+3,cross-layer:+2,layer-crossings:+2,contract-rule-hit:+2  weights=v0001  task="clamp case"  loops=design,inner
2026-12-01T03:00:00.000002Z  meta  L4/method  creativity=standard  dispatch=explicit  signals=  weights=v0001  task='LDD[level=L4]: it'"'"'s "quoted"'  loops=cot
`
	if string(data) != want {
		t.Errorf("log:\n%s\nwant\n%s", data, want)
	}
	// The title defaults to the prompt on one line, cut to 80 characters.
	code, _, _ := runScoreCmd(t, "", "score", "--log", log, long+"\n"+long)
	data, _ = os.ReadFile(log)
	last := lastLine(string(data))
	if code != 0 || !strings.Contains(last, `task="design a new service integration across the payment layer, covering the runner…"`) {
		t.Errorf("default title: %s", last)
	}
}

// TestScoreLogRoundTrip: every --log line reads back through traceparse as the decision that
// `tune score --json` reports for the same prompt: level, dispatch, creativity, signals (half weights
// too), weights version, task title and loops.
func TestScoreLogRoundTrip(t *testing.T) {
	dir := t.TempDir()
	wfile := halfWeightsFile(t, dir, 7)
	log := filepath.Join(dir, "new", ".ldd", "trace.log")
	type run struct{ prompt, task string }
	runs := []run{
		{"fix the typo in README.md line 12", ""},
		{"LDD+: design a new service from scratch across the schema and the validator", "a \"quoted\" title, it's"},
		{"LDD[level=L0]: hook the runner into the R12 contract", ""},
		{"volle Kanne: Schemaänderung im Parser und in der Runtime\n\tzweite Zeile", ""},
		{"prototype a novel paradigm; no known solution", "tab\there  and  spaces"},
		{"   ", ""},
	}
	var want []scoreJSON
	for _, r := range runs {
		args := []string{"score", "--weights", wfile, "--log", log}
		if r.task != "" {
			args = append(args, "--task", r.task)
		}
		if code, _, errOut := runScoreCmd(t, "", append(args, "--", r.prompt)...); code != 0 {
			t.Fatalf("%q: %s", r.prompt, errOut)
		}
		code, out, errOut := runScoreCmd(t, "", "score", "--weights", wfile, "--json", "--", r.prompt)
		var j scoreJSON
		if err := json.Unmarshal([]byte(out), &j); code != 0 || err != nil {
			t.Fatalf("%q: %v %s", r.prompt, err, errOut)
		}
		want = append(want, j)
	}
	res, err := traceparse.ReadLast(log, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) > 0 || len(res.Tasks) != len(runs) {
		t.Fatalf("%d tasks for %d runs, warnings %v", len(res.Tasks), len(runs), res.Warnings)
	}
	short := map[string]string{"auto-level": "auto", "user-explicit": "explicit", "user-bump": "bump", "user-override-down": "override-down"}
	for i, task := range res.Tasks {
		j, r := want[i], runs[i]
		title := r.task
		if title == "" {
			title = tracewrite.Title(r.prompt, scorecmd.TitleRunes)
		}
		creativity, loops := "", []string{"inner"}
		if j.FinalLevel >= "L3" {
			creativity, loops = j.Creativity, []string{"design", "inner"}
		}
		var signals []string
		for _, s := range task.Signals {
			signals = append(signals, s.Name+"="+s.Weight.Plain())
		}
		var wantSignals []string
		for _, s := range j.Signals {
			wantSignals = append(wantSignals, s.Name+"="+s.Weight.String())
		}
		if task.Level != j.FinalLevel || task.Dispatch != short[j.DispatchSource] || task.Creativity != creativity ||
			!task.HasSignals || strings.Join(signals, ",") != strings.Join(wantSignals, ",") || task.WeightsVersion != "v0007" ||
			task.Title != title || !reflect.DeepEqual(task.Loops, loops) {
			t.Errorf("run %d (%q) reads back as level %s dispatch %s creativity %q signals %v weights %s task %q loops %v; want %+v",
				i, r.prompt, task.Level, task.Dispatch, task.Creativity, signals, task.WeightsVersion, task.Title, task.Loops, j)
		}
	}
}

// scoreJSON is the part of the --json payload the round trip compares; weights stay strings.
type scoreJSON struct {
	FinalLevel     string `json:"final_level"`
	Creativity     string `json:"creativity"`
	DispatchSource string `json:"dispatch_source"`
	Signals        []struct {
		Name   string      `json:"name"`
		Weight json.Number `json:"weight"`
	} `json:"signals"`
}

func lastLine(s string) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var l string
	for sc.Scan() {
		l = sc.Text()
	}
	return l
}

// halfWeightsFile writes the reference weights as the given version, with contract-rule-hit at +2.5, to
// dir, and returns the file's path.
func halfWeightsFile(t *testing.T, dir string, version int) string {
	t.Helper()
	w, err := weights.Load(testutil.ReferenceWeightsPath())
	if err != nil {
		t.Fatal(err)
	}
	w.Version, w.Parent = version, 1
	w.Signals[weights.ContractRuleHit] = 5 // +2.5
	path := filepath.Join(dir, weights.VersionName(version)+".toml")
	if err := os.WriteFile(path, w.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestScoreWeights(t *testing.T) {
	path := halfWeightsFile(t, t.TempDir(), 2)
	code, out, errOut := runScoreCmd(t, "", "score", "--weights", path, "--json", "update the schema")
	if code != 0 || !strings.Contains(out, `"raw_score": 2.5`) || !strings.Contains(out, `"weights_version": 2`) ||
		!strings.Contains(out, `contract-rule-hit=+2.5`) {
		t.Errorf("%d %s %s", code, out, errOut)
	}
}

// TestScoreBadWeights: each way a weights file can be wrong is exit 1 with an error naming the file and the
// key, and nothing on stdout.
func TestScoreBadWeights(t *testing.T) {
	ref, err := os.ReadFile(testutil.ReferenceWeightsPath())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct{ name, old, new, want string }{
		{"unknown", "greenfield = 3\n", "greenfield = 3\nfancy = 1\n", "signals.fancy: unknown signal"},
		{"missing", "greenfield = 3\n", "", "signals.greenfield: missing"},
		{"quarter", "contract-rule-hit = 2\n", "contract-rule-hit = 2.25\n", "signals.contract-rule-hit: 2.25 is not a multiple of 0.5"},
		{"unordered", "L1 = -2\n", "L1 = -8\n", "buckets.L1: edge -8 must be above L0 = -7"},
		{"equal", "L3 = 7\n", "L3 = 3\n", "buckets.L3: edge 3 must be above L2 = 3"},
		{"bucket", "L3 = 7\n", "L3 = 7\nL4 = 9\n", "buckets.L4: unknown bucket edge"},
	} {
		edited := strings.Replace(string(ref), c.old, c.new, 1)
		if edited == string(ref) {
			t.Fatalf("%s: the edit does not apply", c.name)
		}
		path := filepath.Join(dir, c.name+".toml")
		if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runScoreCmd(t, "", "score", "--weights", path, "update the schema")
		// the file and the key's line (a missing key has none)
		if code != ExitError || out != "" || !regexp.MustCompile(regexp.QuoteMeta(path)+`(:[0-9]+)?: `+regexp.QuoteMeta(c.want)).MatchString(errOut) {
			t.Errorf("%s: exit %d, out %q, err %q; want exit %d and %q", c.name, code, out, errOut, ExitError, path+":LINE: "+c.want)
		}
	}
}
