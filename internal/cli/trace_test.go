package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/traceparse/tracegen"
	"github.com/ldd-tools/tune/internal/view"
)

// traceCLI runs tune with args and returns the exit code, stdout and stderr.
func traceCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return traceCLIEnv(t, nil, args...)
}

func traceCLIEnv(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Getenv: func(k string) string { return env[k] }}
	code := Run(f, args)
	return code, out.String(), errOut.String()
}

func TestTraceFlags(t *testing.T) {
	for _, c := range []struct {
		args    []string
		logs    []string
		last    int
		lastSet bool
		json    bool
		strict  bool
	}{
		{nil, nil, 0, false, false, false}, // no LOG: the run finds .ldd/trace.log upward (Factory.traceLogs)
		{[]string{"a.log", "b.log", "--last", "5", "--json"}, []string{"a.log", "b.log"}, 5, true, true, false},
		{[]string{"--last", "0", "--strict", "x.log"}, []string{"x.log"}, 0, true, false, true},
	} {
		var got *traceOptions
		f := &Factory{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Getenv: func(string) string { return "" }}
		cmd := newCmdTrace(f, func(o *traceOptions) error { got = o; return nil })
		cmd.SetArgs(append([]string{}, c.args...)) // never nil: cobra would read os.Args
		if err := cmd.Execute(); err != nil {
			t.Fatal(c.args, err)
		}
		if strings.Join(got.Logs, " ") != strings.Join(c.logs, " ") || got.Last != c.last || got.LastSet != c.lastSet || got.JSON != c.json || got.Strict != c.strict {
			t.Errorf("%v: options %+v", c.args, got)
		}
	}
	if code, _, errOut := traceCLI(t, "trace", "--last", "-2"); code != ExitUsage || !strings.Contains(errOut, "--last -2") {
		t.Errorf("--last -2: exit %d, stderr %q", code, errOut)
	}
}

func TestTraceGolden(t *testing.T) {
	code, out, errOut := traceCLI(t, "trace", "../../testdata/ldd/traces/e2e-demos__v013x__merged-view.log")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	testutil.Golden(t, "trace_table.txt", []byte(out))

	// A messy log: BOM, comment, blank line, a legacy task, v0.10.1 meta spellings, a bad signals
	// pair, a value with a newline, a cut last line.
	code, out, errOut = traceCLI(t, "trace", "testdata/trace_messy.log")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	testutil.Golden(t, "trace_messy.txt", []byte(out+"--- stderr\n"+errOut))

	code, out, errOut = traceCLI(t, "trace", "--json", "testdata/trace_messy.log")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	testutil.Golden(t, "trace_messy.json", []byte(out))
	var res struct {
		Tasks []struct {
			Level     string   `json:"level"`
			Dispatch  string   `json:"dispatch"`
			LossFinal *float64 `json:"loss_final"`
			Signals   []struct {
				Name   string  `json:"name"`
				Weight float64 `json:"weight"`
			} `json:"signals"`
		} `json:"tasks"`
		Lines    map[string]int `json:"lines"`
		Warnings []struct {
			File   string `json:"file"`
			Line   int    `json:"line"`
			Reason string `json:"reason"`
		} `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Tasks) != 4 || res.Tasks[0].Level != "" || res.Tasks[0].LossFinal != nil || res.Tasks[1].Level != "L1" || res.Tasks[1].Dispatch != "auto" ||
		len(res.Tasks[1].Signals) != 2 || res.Tasks[1].Signals[0].Weight != -5 || res.Lines["read"] != res.Lines["parsed"]+res.Lines["skipped"] ||
		len(res.Warnings) != 5 || res.Warnings[4].Line != 14 || res.Warnings[4].File != "testdata/trace_messy.log" {
		t.Errorf("--json: %+v", res)
	}
}

func TestTraceStrict(t *testing.T) {
	code, _, errOut := traceCLI(t, "trace", "--strict", "testdata/trace_messy.log")
	if code != ExitError || !strings.Contains(errOut, "tune: --strict: 2 lines skipped") {
		t.Errorf("messy log: exit %d, stderr %q", code, errOut)
	}
	// Blank and comment lines are not a reason to fail.
	path := filepath.Join(t.TempDir(), "trace.log")
	if err := os.WriteFile(path, []byte("# notes\n\n2026-04-22T12:00:00Z  meta  L1/diagnostic  task=t\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := traceCLI(t, "trace", "--strict", path); code != 0 {
		t.Errorf("clean log: exit %d, stderr %q", code, errOut)
	}
}

// A single small log is shown whole; a log of 1 MB or more, or several logs, show their last 20 tasks,
// read from the end.
func TestTraceDefaultWindow(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.log")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tracegen.Write(f, 1<<20, tracegen.DefaultTail); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// firstLine is the file line of the first task shown: past 1 when the log was read from its end
	// (the line numbers are the file's: the part before the tail is counted, see TestTraceLastKeepsFileLines).
	count := func(args ...string) (tasks, firstLine int) {
		code, out, errOut := traceCLI(t, append([]string{"trace", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errOut)
		}
		var res struct {
			Tasks []struct {
				Line int `json:"line"`
			} `json:"tasks"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Tasks) == 0 {
			return 0, 0
		}
		return len(res.Tasks), res.Tasks[0].Line
	}
	if n, first := count(big); n != 20 || first < 1000 {
		t.Errorf("1 MB log: %d tasks from line %d; want the last 20 read from the end", n, first)
	}
	if n, _ := count(big, "--last", "0"); n < 500 {
		t.Errorf("--last 0: %d tasks, want the whole log", n)
	}
	small := "../../testdata/ldd/traces/e2e-demos__v013x__merged-view.log"
	if n, first := count(small, "--last", "2"); n != 2 || first != 6 {
		t.Errorf("--last 2: %d tasks from line %d, want 2 from line 6", n, first)
	}
	if n, _ := count(small, small); n != 6 {
		t.Errorf("two logs: %d tasks, want 3 each", n)
	}
	// A small log of 30 tasks is read whole alone and next to another log: the default window of a
	// log does not depend on how many logs are given (it kept 20 of each once there were two).
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "2026-05-01T09:%02d:00Z  meta  L1/diagnostic  dispatch=auto  task=\"task %d\"  loops=inner\n", i, i)
		fmt.Fprintf(&b, "2026-05-01T09:%02d:01Z  inner  close  terminal=complete  loss_final=0.000\n", i)
	}
	thirty := filepath.Join(t.TempDir(), "thirty.log")
	if err := os.WriteFile(thirty, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, _ := count(thirty); n != 30 {
		t.Errorf("one small log: %d tasks, want 30", n)
	}
	if n, _ := count(thirty, small); n != 33 {
		t.Errorf("a small log next to another: %d tasks, want 30 + 3", n)
	}
}

func TestTraceMissingDefaultLog(t *testing.T) {
	t.Chdir(t.TempDir())
	code, _, errOut := traceCLI(t, "trace")
	if code != ExitError || !strings.Contains(errOut, "no trace log: no .ldd/trace.log in ") || !strings.Contains(errOut, "pass the LOG paths") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// --format jsonl writes exactly --json's tasks, one compact object per line, from a whole-log
// (streamed) read and from a tail read alike; a text view of a huge log shows its last rows.
func TestTraceJSONL(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.log")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tracegen.Write(f, 2<<20, tracegen.DefaultTail); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, args := range [][]string{{big, "--last", "0"}, {big, "--last", "7"}, {"testdata/trace_messy.log"}} {
		code, doc, errOut := traceCLI(t, append([]string{"trace", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errOut)
		}
		var res struct {
			Tasks []json.RawMessage `json:"tasks"`
		}
		if err := json.Unmarshal([]byte(doc), &res); err != nil {
			t.Fatal(err)
		}
		code, out, errOut2 := traceCLI(t, append([]string{"trace", "--format", "jsonl"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errOut2)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != len(res.Tasks) || len(lines) == 0 {
			t.Fatalf("%v: %d lines for %d tasks", args, len(lines), len(res.Tasks))
		}
		for i, line := range lines {
			var want bytes.Buffer
			if err := json.Compact(&want, res.Tasks[i]); err != nil {
				t.Fatal(err)
			}
			if line != want.String() {
				t.Fatalf("%v: line %d differs from --json's task\n%s\n%s", args, i+1, line, want.String())
			}
		}
		if args[0] == "testdata/trace_messy.log" && !strings.Contains(errOut2, "tune: warning:") {
			t.Errorf("jsonl: warnings not on stderr: %q", errOut2)
		}
	}
	code, out, _ := traceCLI(t, "trace", "--last", "0", big)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("the last %d of ", view.MaxTraceRows)) || strings.Count(out, "\n") > view.MaxTraceRows+20 {
		t.Errorf("text view of a big log: exit %d, %d lines, head %q", code, strings.Count(out, "\n"), out[:min(len(out), 200)])
	}
	for _, args := range [][]string{{"trace", "--format", "xml"}, {"trace", "--json", "--format", "jsonl"}} {
		if code, _, errOut := traceCLI(t, args...); code != ExitUsage {
			t.Errorf("%v: exit %d %s", args, code, errOut)
		}
	}
}

// --max-line-mb: a longer line is skipped and reported (and fails --strict); the cap is a usage error
// outside 1..1024 MB.
func TestTraceMaxLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.log")
	log := "2026-04-22T12:00:00Z  meta  L1/diagnostic  dispatch=auto  task=t  loops=inner\n" +
		"2026-04-22T12:00:01Z  inner  k=1  action=\"" + strings.Repeat("x", 2<<20) + "\"  loss=0.5\n" +
		"2026-04-22T12:00:02Z  inner  close  terminal=complete\n"
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := traceCLI(t, "trace", "--max-line-mb", "1", "--last", "0", path)
	if code != 0 || !strings.Contains(errOut, ":2: skipped: line longer than 1 MB") || !strings.Contains(out, "3 lines read: 2 parsed, 1 skipped") {
		t.Errorf("cap 1 MB: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _, _ := traceCLI(t, "trace", "--max-line-mb", "1", "--strict", "--last", "0", path); code != ExitError {
		t.Errorf("--strict: exit %d", code)
	}
	// The default cap is 1 MB too; a cap above the line reads it.
	if code, out, errOut := traceCLI(t, "trace", "--last", "0", path); code != 0 || !strings.Contains(errOut, ":2: skipped: line longer than 1 MB") {
		t.Errorf("default cap: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := traceCLI(t, "trace", "--max-line-mb", "3", "--last", "0", path); code != 0 || !strings.Contains(out, "3 parsed, 0 skipped") {
		t.Errorf("cap 3 MB: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, n := range []string{"0", "2000"} {
		if code, _, _ := traceCLI(t, "trace", "--max-line-mb", n, path); code != ExitUsage {
			t.Errorf("--max-line-mb %s: exit %d", n, code)
		}
	}
}

// A log whose file name holds a newline cannot print a line of its own making: its warnings and the
// detection's window line keep the name on their line (the trace review).
func TestLogNameStaysOnItsLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a\ntune: note: 0 warnings, log verified\n.log")
	if err := os.WriteFile(path, []byte("2026-12-01T10:00:00Z  meta  L0/reflex  dispatch=auto  task=t  loops=inner\n2026-12-01T10:00:01Z  inner  k=1  stray  loss=0.5\n"), 0o644); err != nil {
		t.Skip("this file system refuses the name:", err)
	}
	for _, args := range [][]string{{"trace", path}, {"detect", path}} {
		var o, e bytes.Buffer
		f := NewFactory()
		f.IO = &IOStreams{In: strings.NewReader(""), Out: &o, ErrOut: &e}
		f.Getenv = func(k string) string { return map[string]string{"TUNE_NOW": "2026-12-02T00:00:00Z"}[k] }
		t.Chdir(filepath.Dir(path))
		Run(f, args)
		out, errOut := o.String(), e.String()
		if !strings.Contains(out+errOut, `\ntune: note: 0 warnings`) {
			t.Errorf("%s: the name is not shown escaped:\n%s%s", args[0], out, errOut)
		}
		for _, line := range strings.Split(out+errOut, "\n") {
			if strings.HasPrefix(line, "tune: note: 0 warnings") || strings.HasPrefix(line, ".log") {
				t.Errorf("%s: a line made by the file name:\n%s%s", args[0], out, errOut)
			}
		}
	}
}
