package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/tools/genhistory"
	"github.com/ldd-tools/tune/internal/tools/genlive"
	"github.com/ldd-tools/tune/internal/weights"
)

// evolveEnv is a private weights store and fixtures copy plus a directory for generated logs.
type evolveEnv struct {
	t                       *testing.T
	root, weights, fixtures string
	env                     map[string]string // the environment tune sees (COLUMNS in the width tests)
}

func newEvolveEnv(t *testing.T) *evolveEnv {
	t.Helper()
	root := t.TempDir()
	e := &evolveEnv{t: t, root: root, weights: filepath.Join(root, "weights"), fixtures: filepath.Join(root, "fixtures")}
	for _, d := range []string{"weights", "fixtures"} {
		if err := copyDir(filepath.Join(repoRoot(), d), filepath.Join(root, d)); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// history writes a generated history and returns its path.
func (e *evolveEnv) history(name string, seed uint64) string {
	e.t.Helper()
	c, ok := genhistory.CaseByName(name)
	if !ok {
		e.t.Fatalf("no case %s", name)
	}
	w, err := weights.Load(testutil.ReferenceWeightsPath())
	if err != nil {
		e.t.Fatal(err)
	}
	h, _ := c.Build(seed, &w)
	p := filepath.Join(e.root, name+".log")
	if err := os.WriteFile(p, h.Render(), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// run runs tune with a fixed clock; the temp root is replaced by $ROOT in the outputs, for golden files.
func (e *evolveEnv) run(args ...string) (int, string, string) {
	e.t.Helper()
	var out, errOut bytes.Buffer
	f := &Factory{
		IO:     &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Now:    func() time.Time { return time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC) },
		Getenv: func(k string) string { return e.env[k] },
	}
	code := Run(f, append([]string{"--weights-dir", e.weights, "--fixtures-dir", e.fixtures,
		"--reports-dir", filepath.Join(e.root, "reports")}, args...))
	clean := func(s string) string { return strings.ReplaceAll(s, e.root, "$ROOT") }
	return code, clean(out.String()), clean(errOut.String())
}

// Each of the 25 real logs runs through detect without error and without a trigger.
func TestDetectRealLogs(t *testing.T) {
	e := newEvolveEnv(t)
	paths, _ := filepath.Glob(filepath.Join(repoRoot(), "testdata", "ldd", "traces", "*.log"))
	if len(paths) != 25 {
		t.Fatalf("want 25 real logs, got %d", len(paths))
	}
	for _, p := range paths {
		code, out, errOut := e.run("detect", p, "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", p, code, errOut)
		}
		var rep struct {
			Triggered bool `json:"triggered"`
			Proposal  any  `json:"proposal"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if rep.Triggered || rep.Proposal != nil {
			t.Errorf("%s: triggered", filepath.Base(p))
		}
	}
}

// runInRoot runs tune from the temp root, so that logs can be named by relative paths: table widths
// and proposal ids then do not depend on the temp directory's name.
func (e *evolveEnv) runInRoot(args ...string) (int, string, string) {
	e.t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := os.Chdir(e.root); err != nil {
		e.t.Fatal(err)
	}
	defer os.Chdir(wd) //nolint:errcheck // back to the package dir for the golden files
	return e.run(args...)
}

func TestDetectGolden(t *testing.T) {
	e := newEvolveEnv(t)
	log := filepath.Base(e.history("same-area", 2))
	code, out, _ := e.runInRoot("detect", log)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	testutil.Golden(t, "evolve_detect_same_area.txt", []byte(out))
	code, out, _ = e.runInRoot("detect", log, "--json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	testutil.Golden(t, "evolve_detect_same_area.json", []byte(out))
}

func TestProposeGoldenAndIdempotent(t *testing.T) {
	e := newEvolveEnv(t)
	// Relative log paths: the source is part of the proposal's evidence, hence of its id.
	log := filepath.Base(e.history("legacy-v0101", 4))
	inRoot := e.runInRoot
	code, out, errOut := inRoot("propose", log, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	testutil.Golden(t, "evolve_propose_legacy.json", []byte(out))
	files, _ := filepath.Glob(filepath.Join(e.weights, "proposals", "*.json"))
	if len(files) != 1 {
		t.Fatalf("want exactly one proposal, got %v", files)
	}
	first, _ := os.ReadFile(files[0])
	// Re-detected tasks keep their title as the prompt, so apply can harvest them.
	if !bytes.Contains(first, []byte(`"prompt": "`)) {
		t.Error("re-detected flagged tasks should carry their title as the prompt")
	}
	for i := 0; i < 2; i++ {
		if code, _, _ := inRoot("propose", log); code != 0 {
			t.Fatalf("re-run exit %d", code)
		}
	}
	files2, _ := filepath.Glob(filepath.Join(e.weights, "proposals", "*.json"))
	again, _ := os.ReadFile(files[0])
	if len(files2) != 1 || !bytes.Equal(first, again) {
		t.Fatalf("re-running wrote a second proposal or new bytes: %v", files2)
	}
	// Attempts were logged once each. (Legacy tasks re-detect to -3: the +1 reaches only L1's edge and
	// lifts no flagged task, so both the full and the half step are reverted — before the rule that a
	// single step must lift a task out of L0/L1, the +1 was accepted and logged as one accept.)
	var rep struct {
		Attempts []json.RawMessage `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Attempts) == 0 {
		t.Fatalf("attempts in --json: %v (%d)", err, len(rep.Attempts))
	}
	log2, _ := os.ReadFile(filepath.Join(e.weights, "evolution.jsonl"))
	if n := bytes.Count(log2, []byte(`"proposal":"p-`)); n != len(rep.Attempts) {
		t.Errorf("%d attempts logged %d times", len(rep.Attempts), n)
	}
}

func TestReplayGolden(t *testing.T) {
	e := newEvolveEnv(t)
	code, out, _ := e.run("replay", "--holdout")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	testutil.Golden(t, "evolve_replay_holdout.txt", []byte(out))
}

func TestEvolveCommandFlags(t *testing.T) {
	e := newEvolveEnv(t)
	for _, args := range [][]string{{"detect", "--bogus"}, {"replay", "x"}, {"propose", "--nope"}, {"replay", "--weights"}} {
		if code, _, _ := e.run(args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, ExitUsage)
		}
	}
	// runF hooks receive the parsed options.
	f := &Factory{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Getenv: func(string) string { return "" }, WeightsDir: "w"}
	var got *detectOptions
	cmd := newCmdDetect(f, func(o *detectOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"a.log", "b.log", "--json"})
	if err := cmd.Execute(); err != nil || got == nil || !got.JSON || len(got.Logs) != 2 || got.Env.WeightsDir != "w" {
		t.Fatalf("detect options %+v (%v)", got, err)
	}
	var rgot *replayOptions
	rcmd := newCmdReplay(f, func(o *replayOptions) error { rgot = o; return nil })
	rcmd.SetArgs([]string{"--weights", "x.toml", "--holdout"})
	if err := rcmd.Execute(); err != nil || rgot.WeightsFile != "x.toml" || !rgot.Holdout {
		t.Fatalf("replay options %+v (%v)", rgot, err)
	}
	var pgot *proposeOptions
	pcmd := newCmdPropose(f, func(o *proposeOptions) error { pgot = o; return nil })
	pcmd.SetArgs([]string{"l.log"})
	if err := pcmd.Execute(); err != nil || len(pgot.Logs) != 1 || pgot.JSON {
		t.Fatalf("propose options %+v (%v)", pgot, err)
	}
}

// A log with more tasks than the first tail read holds is read from a byte offset; warnings and flagged
// tasks must still name the line an editor shows (they counted from the tail's start before).
func TestDetectNamesFileLinesOfATailRead(t *testing.T) {
	e := newEvolveEnv(t)
	var b strings.Builder
	line := 0
	add := func(format string, args ...any) int {
		line++
		fmt.Fprintf(&b, format+"\n", args...)
		return line
	}
	b.WriteString("2026-01-01T00:00:00Z  inner  k=1  loss=0.1\r\n2026-01-01T00:00:01Z  inner  k=2  loss=0.1\r") // CRLF and a lone CR
	line = 2
	for i := 0; i < 60; i++ {
		add("2026-01-02T%02d:%02d:00Z  meta  L2/deliberate  dispatch=auto  signals=components>=3:+2  task=\"chore %d\"  loops=inner", i/60, i%60, i)
		add("2026-01-02T%02d:%02d:30Z  inner  close  terminal=complete  loss_final=0.100", i/60, i%60)
	}
	var metas []int
	for i := 0; i < 3; i++ {
		metas = append(metas, add("2026-01-03T00:0%d:00Z  meta  L1/diagnostic  dispatch=auto  signals=explicit-bugfix:-5,ambiguous:+2  task=\"fix %d\"  loops=inner", i, i))
		add("2026-01-03T00:0%d:30Z  inner  close  terminal=complete  loss_final=0.200  regression_followed=true", i)
	}
	damaged := add(`2026-01-03T00:09:00Z  inner  k=2  action="unbalanced`)
	p := filepath.Join(e.root, "long.log")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run("detect", p, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := fmt.Sprintf("long.log:%d: quotes do not balance", damaged); !strings.Contains(errOut, want) {
		t.Errorf("stderr %q\nlacks %q", errOut, want)
	}
	var rep struct {
		Flagged []struct {
			Line int `json:"line"`
		} `json:"flagged"`
		Tails []any `json:"tails"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Flagged) != 3 || rep.Tails != nil {
		t.Fatalf("flagged %+v, tails %v", rep.Flagged, rep.Tails)
	}
	for i, f := range rep.Flagged {
		if f.Line != metas[i] {
			t.Errorf("flagged task %d on line %d, want %d", i, f.Line, metas[i])
		}
	}
}

// A run on a store that does not verify (here: a log edit) writes nothing — no orphan proposal file —
// and the next run on the same inputs writes the proposal and logs its attempts once; a further run adds
// nothing.
func TestProposeLogsAttemptsOnceEvenAfterAFailedRun(t *testing.T) {
	e := newEvolveEnv(t)
	logPath := filepath.Join(e.weights, "evolution.jsonl")
	if code, _, errOut := e.run("propose", e.history("phase3-gate", 1)); code != 0 {
		t.Fatalf("first propose: exit %d: %s", code, errOut)
	}
	good, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Replace(good, []byte(`"action":"init"`), []byte(`"action":"init" `), 1)
	if err := os.WriteFile(logPath, tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	second := e.history("phase3-gate", 2)
	if code, out, _ := e.run("propose", second, "--json"); code != 1 || out != "" {
		t.Fatalf("propose on a store that does not verify: exit %d, output %q; want exit 1", code, out)
	}
	if files, _ := filepath.Glob(filepath.Join(e.weights, "proposals", "*.json")); len(files) != 1 {
		t.Fatalf("the refused run left proposal files behind: %v", files)
	}
	if err := os.WriteFile(logPath, good, 0o644); err != nil {
		t.Fatal(err)
	}
	entriesOf := func(id string) int {
		data, _ := os.ReadFile(logPath)
		return bytes.Count(data, []byte(`"proposal":"`+id+`"`))
	}
	_, out, _ := e.run("propose", second, "--json")
	var rep struct {
		ID       string `json:"proposal_id"`
		Created  bool   `json:"created"`
		Attempts []any  `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Created || len(rep.Attempts) == 0 {
		t.Fatalf("re-run: created=%v with %d attempts; want a new proposal (the failed run wrote none)", rep.Created, len(rep.Attempts))
	}
	if got := entriesOf(rep.ID); got != len(rep.Attempts) {
		t.Fatalf("%d log entries for %s, want its %d attempts", got, rep.ID, len(rep.Attempts))
	}
	if code, _, _ := e.run("propose", second); code != 0 || entriesOf(rep.ID) != len(rep.Attempts) {
		t.Fatalf("a further run changed the log: exit %d, %d entries", code, entriesOf(rep.ID))
	}
	if code, out, _ := e.run("verify"); code != 0 {
		t.Fatalf("verify: exit %d\n%s", code, out)
	}
}

// Every log read is accounted for in the table output, also one that holds no labelled task.
func TestDetectNamesALogWithoutWindow(t *testing.T) {
	e := newEvolveEnv(t)
	empty := filepath.Join(e.root, "empty.log")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run("detect", e.history("two-regressions", 1), empty)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"window: the last 20 labelled tasks of $ROOT/two-regressions.log", "window: no task with a level label in $ROOT/empty.log"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A signal the accumulated test supports but whose change does not pay under the stated losses is
// explained, not just refused: detect names its closest step with the excess of the tasks it lifts, the
// break-even and how many more regressions among them it needs, in the text and in --json
// (docs/decisions.md#explained). Before, the reason set the signal's whole-table excess beside the
// lifted tasks' break-even (0.62 "pays from 0.60") and said nothing pays. The history: the live
// harness's moderate regime, seed 7011 (cross-layer planted), 16 nights under the reference weights,
// detected at the night's end: one of the tasks +2 would lift is not settled yet, and the explanation
// says so beside the regressions it needs ("pending_lifted"). (27 nights until the loss rule re-scored
// with the scorer's clamp, docs/decisions.md#the-clamp-in-the-loss-rule: on night 27 the +2 now pays.)
func TestDetectExplainsAChangeThatDoesNotPay(t *testing.T) {
	// At the end of night 16, as the nightly runs it: the last tasks are not settled yet, and one of them
	// is a task the change would lift.
	e := liveLogEnv(t, 7011, genlive.Regime{Base: 0.05, Planted: livePlanted, Carrier: 0.75}, 16)
	code, out, errOut := e.runInRoot("detect", "live.log")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "  cross-layer +") {
			line = l
		}
	}
	if !strings.Contains(out, "loss rule: no change pays for these signals, though the test supports them") || line == "" {
		t.Fatalf("detect does not list cross-layer's closest step:\n%s", out)
	}
	det := e.detectJSON(t)
	if det.Proposal != nil || len(det.Unpaid) != 1 || det.Unpaid[0].Change.Signal != "cross-layer" {
		t.Fatalf("--json: proposal %v, loss_rule_unpaid %+v: want none and cross-layer", det.Proposal, det.Unpaid)
	}
	u := det.Unpaid[0]
	if u.PaysFrom == nil || !(u.Excess < *u.PaysFrom) || u.MoreNeeded < 1 || u.Lifted == 0 {
		t.Fatalf("loss_rule_unpaid %+v: want lifted tasks whose excess is under the break-even and a count of regressions needed", u)
	}
	want := fmt.Sprintf("lifts %d at excess %.2f, pays from %.2f;", u.Lifted, u.Excess, *u.PaysFrom)
	if !strings.Contains(line, want) || !strings.Contains(line, fmt.Sprintf("would pay with %d more regression(s)", u.MoreNeeded)) {
		t.Errorf("text %q does not say what --json says (%s, %d more)", line, want, u.MoreNeeded)
	}
	// The night's last tasks are not settled: the change would lift some of them, and the text says so.
	if pending := fmt.Sprintf("(%d more such task(s) not settled yet)", u.Pending); u.Pending == 0 || !strings.Contains(line, pending) {
		t.Errorf("text %q, pending_lifted %d: want the unsettled tasks it would lift said as %q", line, u.Pending, pending)
	}
}

// Where the carriers regress whatever level they run at (the live harness's level-insensitive regime),
// the carriers that ran at L2+ say so before any change: detect credits the lifted carriers only with
// what they exceed those by, proposes nothing, and says what the excess is net of, in text and --json
// (docs/decisions.md#the-carriers-at-l2). Without that rule the same log proposed contract-rule-hit +2.
func TestDetectNetsTheExcessALevelDoesNotCure(t *testing.T) {
	e := liveLogEnv(t, 11000, genlive.Regime{Base: 0.05, Planted: livePlanted, Carrier: 0.75, LevelInsensitive: true}, 13)
	det := e.detectJSON(t)
	if det.Proposal != nil || len(det.Unpaid) != 1 || det.Unpaid[0].Change.Signal != "contract-rule-hit" || det.Unpaid[0].ExcessAtL2 == nil {
		t.Fatalf("--json: proposal %v, loss_rule_unpaid %+v: want none, and contract-rule-hit net of its excess at L2+", det.Proposal, det.Unpaid)
	}
	code, out, _ := e.runInRoot("detect", "live.log")
	want := fmt.Sprintf("excess %.2f (net of %.2f among the carriers that ran at L2+)", det.Unpaid[0].Excess, *det.Unpaid[0].ExcessAtL2)
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("exit %d; the text does not say %q:\n%s", code, want, out)
	}
}

// livePlanted are the live harness's planted signals (internal/app/live_test.go).
var livePlanted = []weights.Signal{weights.Ambiguous, weights.ContractRuleHit, weights.LayerCrossings, weights.CrossLayer}

// liveLogEnv is a project whose live.log holds the first nights of a genlive sequence dispatched under
// v0001, its clock at the end of the last night (TUNE_NOW), as the nightly runs.
func liveLogEnv(t *testing.T, seed uint64, r genlive.Regime, nights int) *evolveEnv {
	t.Helper()
	e := newEvolveEnv(t)
	w, err := weights.Load(testutil.ReferenceWeightsPath())
	if err != nil {
		t.Fatal(err)
	}
	seq := genlive.NewSequence(seed, r)
	var log []byte
	for night := 1; night <= nights; night++ {
		_, text := seq.Night(night, &w)
		log = append(log, text[0]...)
	}
	if err := os.WriteFile(filepath.Join(e.root, "live.log"), log, 0o644); err != nil {
		t.Fatal(err)
	}
	e.env = map[string]string{"TUNE_NOW": genlive.NightEnd(nights).Format(time.RFC3339)}
	return e
}

// detectJSON is `tune detect live.log --json`'s proposal and loss_rule_unpaid.
func (e *evolveEnv) detectJSON(t *testing.T) (det struct {
	Unpaid []struct {
		Change struct {
			Signal string `json:"signal"`
		} `json:"change"`
		Excess     float64  `json:"excess"`
		ExcessAtL2 *float64 `json:"excess_at_l2"`
		PaysFrom   *float64 `json:"pays_from_excess"`
		MoreNeeded int      `json:"more_needed"`
		Lifted     int      `json:"lifted"`
		Pending    int      `json:"pending_lifted"`
	} `json:"loss_rule_unpaid"`
	Proposal any `json:"proposal"`
}) {
	t.Helper()
	code, js, errOut := e.runInRoot("detect", "live.log", "--json")
	if code != 0 {
		t.Fatalf("--json exit %d: %s", code, errOut)
	}
	if err := json.Unmarshal([]byte(js), &det); err != nil {
		t.Fatal(err)
	}
	return det
}
