package front_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/cli"
	"github.com/ldd-tools/tune/internal/front"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/traceparse/tracegen"
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func TestWants(t *testing.T) {
	cases := map[string]string{
		"score x":                               "score",
		"score":                                 "score",
		"--weights-dir w score x":               "score",
		"--weights-dir=w --reports-dir r score": "score",
		"trace x":                               "trace",
		"trace --format jsonl x":                "trace",
		"trace --format jsonl x --help":         "",
		"trace -h":                              "",
		"trace -- x":                            "",
		"":                                      "",
		"--help score":                          "",
		"-h":                                    "",
		"--weights-dir score trace":             "trace", // "score" is the flag's value
		"help score":                            "",
		"scores":                                "",
		"audit x":                               "",
		"score --json --jq .final_level x":      "", // gojq is tune-full's
		"trace --template={{.lines}} x":         "",
		"score -- --jq":                         "score", // a prompt, not the flag
		"score --help":                          "",      // help is wrapped by tune-full
		"score -- --help":                       "score",
	}
	for line, want := range cases {
		if got := front.Wants(strings.Fields(line)); got != want {
			t.Errorf("Wants(%q) = %q, want %q", line, got, want)
		}
	}
}

// TestScoreMatchesTheFullTree runs the same command lines through the light front end and through the
// full command tree: exit code, stdout, stderr and any --log line must be the same.
func TestScoreMatchesTheFullTree(t *testing.T) {
	root := repoRoot()
	weights := filepath.Join(t.TempDir(), "weights")
	if err := testutil.CopyReferenceWeights(weights); err != nil {
		t.Fatal(err)
	}
	parity := filepath.Join(root, "testdata", "ldd", "parity.jsonl")
	// [explore] tables (docs/decisions.md#explore-a-randomized-share-of-near-edge-tasks): the draw and a
	// refused value must be the same in both trees.
	exploreOn, exploreBad := filepath.Join(t.TempDir(), "on.toml"), filepath.Join(t.TempDir(), "bad.toml")
	for f, doc := range map[string]string{exploreOn: "[explore]\nshare = 0.2\n", exploreBad: "[explore]\nshare = 0.5\n"} {
		if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nearEdge := "fix the bug in the new greenfield module from scratch" // −2, on the L1 edge
	cases := []struct {
		args  []string
		stdin string
		env   map[string]string
		log   string // what the --log line must hold, when set
	}{
		{args: []string{"score", "fix the typo in README.md line 12"}},
		{args: []string{"score", "--json", "design a new service from scratch"}},
		{args: []string{"--weights-dir", weights, "score", "--json", "LDD+: take your time"}},
		{args: []string{"score", "--batch", parity}, env: map[string]string{"TUNE_WEIGHTS_DIR": weights}},
		{args: []string{"score"}, stdin: "refactor the parser and the runtime\n"},
		{args: []string{"score", "--log", "LOG", "--task", "t", "wire the scorer into the runner"}, env: map[string]string{"TUNE_NOW": "2026-12-01T03:00:00Z"}},
		// Raised (sha256 under 0.2), then control, then a bad table: nothing written.
		{args: []string{"score", "--log", "LOG", "--task", "greenfield fix 4", nearEdge}, env: map[string]string{"TUNE_NOW": "2026-11-02T04:00:00Z", "TUNE_CONFIG": exploreOn},
			log: "  L2/deliberate  dispatch=explore  "},
		{args: []string{"score", "--log", "LOG", "--task", "greenfield fix 5", nearEdge}, env: map[string]string{"TUNE_NOW": "2026-11-02T05:00:00Z", "TUNE_CONFIG": exploreOn},
			log: "  explore=control  explore_level=L1  explore_share=0.2\n"},
		{args: []string{"score", "--log", "LOG", nearEdge}, env: map[string]string{"TUNE_CONFIG": exploreBad}},
		{args: []string{"score", "--bogus"}},
		{args: []string{"score", "a", "b"}},
		{args: []string{"score", "--weights-dir", "MISSING", "x"}},
		{args: []string{"score", "--history", "MISSING", "x"}},
		{args: []string{"score", "x"}, env: map[string]string{"TUNE_NOW": "yesterday"}},
		// (score --help is tune-full's: Wants hands it over, TestWants)
	}
	for _, c := range cases {
		run := func(light bool) (int, string, string, string) {
			dir := t.TempDir()
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(strings.ReplaceAll(a, "LOG", filepath.Join(dir, "trace.log")), "MISSING", filepath.Join(dir, "missing"))
			}
			getenv := func(k string) string { return c.env[k] }
			var out, errOut bytes.Buffer
			var code int
			if light {
				code = front.Score(args, strings.NewReader(c.stdin), &out, &errOut, getenv)
			} else {
				f := cli.NewFactory()
				f.IO = &cli.IOStreams{In: strings.NewReader(c.stdin), Out: &out, ErrOut: &errOut}
				f.Getenv = getenv
				code = cli.Run(f, args)
			}
			log, _ := os.ReadFile(filepath.Join(dir, "trace.log"))
			norm := func(s string) string { return strings.ReplaceAll(s, dir, "DIR") }
			return code, norm(out.String()), norm(errOut.String()), string(log)
		}
		lc, lo, le, ll := run(true)
		fc, fo, fe, fl := run(false)
		if lc != fc || lo != fo || le != fe || ll != fl {
			t.Errorf("%q: light and full differ\nlight: %d %q %q log %q\nfull:  %d %q %q log %q", c.args, lc, lo, le, ll, fc, fo, fe, fl)
		}
		if lo == "" && le == "" {
			t.Errorf("%q: no output at all", c.args)
		}
		if !strings.Contains(ll, c.log) {
			t.Errorf("%q: log %q lacks %q", c.args, ll, c.log)
		}
	}
}

// TestTraceMatchesTheFullTree runs trace command lines through the light front end and through the full
// command tree: where the front end runs one (JSON of named logs), exit code, stdout and stderr are the
// same; every other one it leaves to tune-full without writing anything.
func TestTraceMatchesTheFullTree(t *testing.T) {
	root := repoRoot()
	messy := filepath.Join(root, "internal", "cli", "testdata", "trace_messy.log")
	merged := filepath.Join(root, "testdata", "ldd", "traces", "e2e-demos__v013x__merged-view.log")
	var big bytes.Buffer // several parallel batches
	if _, err := tracegen.Write(&big, 1<<20, tracegen.DefaultTail); err != nil {
		t.Fatal(err)
	}
	bigLog := filepath.Join(t.TempDir(), "big.log")
	if err := os.WriteFile(bigLog, big.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args  []string
		light bool // the front end runs it
		env   map[string]string
	}{
		{args: []string{"trace", "--last", "0", "--format", "jsonl", messy, merged}, light: true},
		{args: []string{"trace", "--json", messy}, light: true},
		{args: []string{"trace", "--format=json", "--last", "2", merged, messy}, light: true},
		{args: []string{"trace", "--last", "0", "--format", "jsonl", bigLog}, light: true},
		{args: []string{"trace", "--last", "3", "--format", "jsonl", bigLog}, light: true},
		{args: []string{"--weights-dir", "w", "trace", "--format", "jsonl", "--strict", messy}, light: true},
		{args: []string{"trace", "--format", "jsonl", "--max-line-mb", "0", messy}, light: true},
		{args: []string{"trace", "--last", "-2", "--format", "jsonl", messy}, light: true},
		{args: []string{"trace", "--format", "jsonl", "--bogus", messy}, light: true},
		{args: []string{"trace", "--format", "jsonl", filepath.Join(t.TempDir(), "missing.log")}, light: true},
		{args: []string{"trace", "--format", "jsonl", "--out", "x.parquet", messy}, light: true},
		{args: []string{"trace", "--format", "yaml", messy}, light: true},
		{args: []string{"trace", messy}},
		{args: []string{"trace", "--format", "jsonl"}}, // the default log is looked for by tune-full
		{args: []string{"trace", "--format", "parquet", "--out", filepath.Join(t.TempDir(), "t.parquet"), messy}},
		{args: []string{"trace", "--format", "jsonl", messy}, env: map[string]string{"TUNE_NOW": "yesterday"}},
	}
	for _, c := range cases {
		getenv := func(k string) string { return c.env[k] }
		var lo, le bytes.Buffer
		lc, ran := front.Trace(c.args, strings.NewReader(""), &lo, &le, getenv)
		if ran != c.light {
			t.Errorf("%q: the front end ran it: %v, want %v", c.args, ran, c.light)
			continue
		}
		if !ran {
			if lo.Len()+le.Len() > 0 {
				t.Errorf("%q: left to tune-full after writing %q %q", c.args, lo.String(), le.String())
			}
			continue
		}
		var fo, fe bytes.Buffer
		f := cli.NewFactory()
		f.IO = &cli.IOStreams{In: strings.NewReader(""), Out: &fo, ErrOut: &fe}
		f.Getenv = getenv
		fc := cli.Run(f, c.args)
		if lc != fc || lo.String() != fo.String() || le.String() != fe.String() {
			t.Errorf("%q: light and full differ\nlight: %d %.300q %.300q\nfull:  %d %.300q %.300q", c.args, lc, lo.String(), le.String(), fc, fo.String(), fe.String())
		}
		if lo.Len()+le.Len() == 0 {
			t.Errorf("%q: no output at all", c.args)
		}
	}
}

func TestFindFull(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "tune")
	t.Setenv("PATH", t.TempDir()) // an empty PATH: only the sibling can be found
	if _, err := front.FindFull(self); err == nil || !strings.Contains(err.Error(), "tune-full not found") || !strings.Contains(err.Error(), "go install") {
		t.Errorf("missing tune-full: %v", err)
	}
	full := filepath.Join(dir, front.FullName)
	if runtime.GOOS == "windows" {
		full += ".exe"
	}
	if err := os.WriteFile(full, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := front.FindFull(self); err != nil || got != full {
		t.Errorf("FindFull = %q, %v; want %q", got, err, full)
	}
	// A directory of that name is not the binary.
	other := t.TempDir()
	if err := os.Mkdir(filepath.Join(other, front.FullName), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := front.FindFull(filepath.Join(other, "tune")); err == nil {
		t.Error("a directory named tune-full was taken for the binary")
	}
}

// TestFrontLinksNoPlotting guards the point of the front end: cmd/tune must not link the plotting stack
// or the table library, whose package initialisation would run on every `tune score`.
func TestFrontLinksNoPlotting(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool:", err)
	}
	cmd := exec.Command(goTool, "list", "-deps", "./cmd/tune")
	cmd.Dir = repoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"gonum.org/v1/plot", "github.com/olekukonko/tablewriter", "github.com/ldd-tools/tune/internal/cli", "github.com/ldd-tools/tune/internal/report",
			"github.com/parquet-go/parquet-go", "github.com/ldd-tools/tune/internal/export", "github.com/ldd-tools/tune/internal/app"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("cmd/tune links %s", dep)
			}
		}
	}
}

// TestBuildIsStatic guards the other half of the start-up: `make build` links both binaries without cgo.
// Built with cgo, the net package (linked through pflag) makes the binary dynamic, and the dynamic
// loader and libc cost `tune score` about a third of its process time
// (docs/decisions.md#score-start-up).
func TestBuildIsStatic(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	recipe, ok := strings.CutPrefix(string(data)[strings.Index(string(data), "\nbuild:\n")+1:], "build:\n")
	if !ok {
		t.Fatal("the Makefile has no build target")
	}
	builds := 0
	for _, line := range strings.Split(recipe, "\n") {
		if !strings.HasPrefix(line, "\t") {
			break // the end of the recipe
		}
		if strings.Contains(line, " build ") {
			builds++
			if !strings.HasPrefix(line, "\tCGO_ENABLED=0 ") {
				t.Errorf("make build runs %q without CGO_ENABLED=0", strings.TrimSpace(line))
			}
		}
	}
	if builds != 2 {
		t.Errorf("make build runs %d go builds, want 2 (tune and tune-full)", builds)
	}
}

// The two binaries, as processes: a trace log whose title carries DEL, a right-to-left override and
// ESC gives the same bytes from the light front end (a named log) and from tune-full, and the JSON is
// valid (the trace review: tune-full wrote DEL as \x7f, not JSON; the light binary wrote U+202E raw).
func TestBinariesPrintTheSameEscapedJSON(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool:", err)
	}
	bin := t.TempDir()
	build := exec.Command(goTool, "build", "-o", bin+string(filepath.Separator), "./cmd/tune", "./cmd/tune-full")
	build.Dir = repoRoot()
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	log := filepath.Join(t.TempDir(), "trace.log")
	title := "fix the typo\x7f in \u202eREADME.md \x1b[2J now"
	data := "2026-12-01T10:00:00Z  meta  L0/reflex  dispatch=auto  task=\"" + title + "\"  loops=inner\n" +
		"2026-12-01T10:00:01Z  inner  close  terminal=complete  loss_final=0\n"
	if err := os.WriteFile(log, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) string {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Env = append(os.Environ(), "TUNE_NOW=2026-12-02T00:00:00Z")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %q: %v", name, args, err)
		}
		return string(out)
	}
	for _, format := range [][]string{{"--json"}, {"--format", "jsonl"}} {
		args := append(append([]string{"trace", "--last", "0"}, format...), log)
		light, full := run("tune", args...), run("tune-full", args...)
		if light != full {
			t.Errorf("%q: the binaries differ\nlight: %q\nfull:  %q", args, light, full)
		}
		for _, doc := range strings.Split(strings.TrimSpace(full), "\n") {
			if format[0] == "--json" {
				doc = full
			}
			if !json.Valid([]byte(doc)) {
				t.Errorf("%q: not JSON: %q", args, doc)
			}
			if format[0] == "--json" {
				break
			}
		}
		if strings.ContainsAny(full, "\x7f\x1b\u202e") {
			t.Errorf("%q: a control character reached stdout raw: %q", args, full)
		}
	}
}
