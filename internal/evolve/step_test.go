package evolve

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/fixtures"
	"github.com/ldd-tools/tune/internal/scorer"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/tools/genhistory"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// None of the 25 real logs holds a low-side regression (docs/decisions.md#trace-logs): each runs through Detect,
// alone and all together, without a trigger.
func TestRealLogsDoNotTrigger(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(repoRoot(), "testdata", "ldd", "traces", "*.log"))
	if err != nil || len(paths) != 25 {
		t.Fatalf("want the 25 real logs, got %d (%v)", len(paths), err)
	}
	w := refWeights(t)
	for _, p := range paths {
		res, err := traceparse.ReadLast(p, 0)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		det := Detect(DetectInput{Tasks: res.Tasks, Resolver: Resolver{Active: &w}})
		if det.Triggered || det.Proposal != nil {
			t.Errorf("%s: triggered with %d flagged", filepath.Base(p), len(det.Flagged))
		}
	}
	det := Detect(DetectInput{Tasks: testutil.TraceTasks(t, paths...), Resolver: Resolver{Active: &w}})
	if det.Triggered || len(det.Window.Logs) != 19 { // the 6 v0.3.1 logs hold only an unlabelled legacy task
		t.Errorf("all logs: triggered=%v, %d windows", det.Triggered, len(det.Window.Logs))
	}
	// The demo metas are hand-typed and partly inconsistent; that is a warning, never a failure.
	if len(det.Warnings) == 0 {
		t.Error("expected warnings for the inconsistent demo metas")
	}
}

// The half step: the full +1 pushes a scenario over an edge, +0.5 does not, so the step halves.
func TestHalfStepAccepted(t *testing.T) {
	for seed := uint64(1); seed <= 9; seed++ {
		w := refWeights(t)
		h, exp := genhistory.Phase3Gate(seed, &w)
		common := exp.Signal
		alone := map[weights.Signal]string{
			weights.Ambiguous:       "maybe we should cache the token lookups",
			weights.ContractRuleHit: "update the JSON schema for orders",
			weights.LayerCrossings:  "the scorer and the parser disagree on token boundaries",
		}[common]
		// The scenario scores 2 (L2): +2 gives 4 (L3, too high), +1 gives 3 (L2). Three scenarios like it
		// add a loss of 3, more than the +2's expected gain on this 40-task history (~1.9), so the suite
		// refuses the +2 under the stated losses (docs/decisions.md#loss-rule).
		var pinned []fixtures.Scenario
		for _, name := range []string{"alone", "alone-2", "alone-3"} {
			pinned = append(pinned, fixtures.Scenario{Name: name, Prompt: alone, Levels: []weights.Level{weights.L2},
				DispatchSource: fixtures.SourceAuto, Origin: "test"})
		}
		suite := PrepareSuite(pinned)
		// The first flagged task sits at -3 (only +2 lifts it), the others at -2 with
		// unknown-file-territory (+1 lifts them): the loss rule prefers +2, which the scenario refuses, and
		// its half, +1, lifts two (docs/decisions.md#loss-rule).
		n := 0
		for i := range h.Tasks {
			if strings.Contains(h.Tasks[i].Title, "quick patch") {
				h.Tasks[i].Signals = []weights.Signal{weights.ExplicitBugfix, common}
				if n > 0 {
					h.Tasks[i].Signals = append(h.Tasks[i].Signals, weights.UnknownFileTerritory)
				}
				n++
			}
		}
		res, err := Step(StepInput{Tasks: parseLog(t, "h.log", h.Render()).Tasks, Parent: w, Suite: suite})
		if err != nil {
			t.Fatal(err)
		}
		if res.Decision != weights.DecisionHalve || len(res.Attempts) != 2 || res.Change.Delta != weights.Whole(1) {
			t.Fatalf("seed %d: decision %s after %d attempts (%+v; %s)", seed, res.Decision, len(res.Attempts), res.Attempts, res.Reason)
		}
		a := res.Attempts[0]
		if a.Change.Delta != weights.Whole(2) || a.Decision != weights.DecisionRevert || len(a.Worse) != 3 || a.Worse[0].After != 1 || !strings.Contains(a.Reason, "alone 0→1") ||
			a.AddedLoss != 3 || !(float64(a.HistoryGain) < 3) || !strings.Contains(a.Reason, "more than the expected gain") {
			t.Errorf("full step: %+v", a)
		}
		if got := res.Candidate.Signals[common]; got != w.Signals[common]+weights.Whole(1) {
			t.Errorf("candidate %s = %s", common, got)
		}
		if len(res.Lifted) != 2 {
			t.Errorf("lifted %v, want the two flagged tasks at -2", res.Lifted)
		}
		if len(res.Attempts[1].LOO.Flips) != 0 || len(res.Attempts[0].LOO.Flips) != 0 {
			t.Errorf("LOO: full %+v, half %+v", res.Attempts[0].LOO, res.Attempts[1].LOO)
		}
	}
}

// revertThenBucketInput is the history and suite of TestRevertThenBucket: the signal change the test
// supports is refused by the suite and the bucket rule moves the L1 edge.
func revertThenBucketInput(t *testing.T) (weights.Weights, []traceparse.Task, *Suite) {
	t.Helper()
	w := refWeights(t)
	log := ""
	// Three flagged L1 tasks at -2 sharing five signals; the preferred one (contract-rule-hit) is pinned by
	// a scenario on the L2 upper edge, the L1 edge is free.
	for i, ts := range []string{"2026-05-01T00", "2026-05-01T01", "2026-05-01T02"} {
		log += ts + ":00:00Z  meta  L1/diagnostic  dispatch=auto  signals=explicit-bugfix:-5,unknown-file-territory:+1,greenfield:+3,single-file:-3,contract-rule-hit:+2  task=\"t" + string(rune('a'+i)) + "\"  loops=inner\n"
		log += ts + ":00:02Z  inner  close  terminal=complete  loss_final=0.0  regression_followed=true\n"
	}
	// -5+1+3-3+2 = -2: on the L1 upper edge. Thirty unflagged eligible bug fixes are the comparison
	// group; unknown-file-territory, greenfield and single-file fire in 1, 2 and 3 of them, so only
	// contract-rule-hit (in none) passes the accumulated test and no two tables tie.
	extra := []string{",unknown-file-territory:+1", ",greenfield:+3", ",greenfield:+3", ",single-file:-3", ",single-file:-3", ",single-file:-3"}
	fillers := ""
	for i := 0; i < 30; i++ {
		ts := fmt.Sprintf("2026-04-%02dT%02d", 2+i/24, i%24)
		sig := "explicit-bugfix:-5"
		if i < len(extra) {
			sig += extra[i]
		}
		fillers += ts + ":00:00Z  meta  L1/diagnostic  dispatch=auto  signals=" + sig + "  task=\"filler\"  loops=inner\n"
		fillers += ts + ":00:02Z  inner  close  terminal=complete  loss_final=0.0\n"
	}
	log = fillers + log
	scen := []fixtures.Scenario{
		{Name: "minus7", Prompt: "fix the typo in docs/setup.md line 3", History: []string{"README.md"}, Levels: []weights.Level{weights.L0}, DispatchSource: fixtures.SourceAuto, Origin: "t"},
		{Name: "three", Prompt: "design a new service from scratch", Levels: []weights.Level{weights.L2}, DispatchSource: fixtures.SourceAuto, Origin: "t"},
		{Name: "contract-at-3", Prompt: "update the JSON schema for orders in src/a.py, see the R12 validator", History: []string{"x.md"}, Levels: []weights.Level{weights.L2}, DispatchSource: fixtures.SourceAuto, Origin: "t"},
	}
	// Five scenarios like contract-at-3 add a loss of 5 under contract-rule-hit +1: more than its
	// expected gain on this 33-task history (~3.9), so the suite refuses it under the stated losses
	// (docs/decisions.md#loss-rule) and the bucket rule moves the edge.
	for i := 2; i <= 5; i++ {
		scen = append(scen, fixtures.Scenario{Name: fmt.Sprintf("contract-at-3-%d", i), Prompt: scen[2].Prompt, History: scen[2].History, Levels: scen[2].Levels, DispatchSource: fixtures.SourceAuto, Origin: "t"})
	}
	return w, parseLog(t, "e.log", []byte(log)).Tasks, PrepareSuite(scen)
}

func TestRevertThenBucket(t *testing.T) {
	w, tasks, suite := revertThenBucketInput(t)
	res, err := Step(StepInput{Tasks: tasks, Parent: w, Suite: suite})
	if err != nil {
		t.Fatal(err)
	}
	var tried []string
	for _, a := range res.Attempts {
		tried = append(tried, a.Change.String()+":"+string(a.Decision))
	}
	got := strings.Join(tried, " ")
	if !strings.HasSuffix(got, "bucket L1 edge -1:accept") || !strings.Contains(got, "+0.5:revert") {
		t.Fatalf("attempts %s (reason %s)", got, res.Reason)
	}
	if res.Decision != weights.DecisionAccept || res.Change.Kind != weights.ChangeBucket || res.Candidate.Buckets.Edges[weights.L1] != weights.Whole(-3) {
		t.Fatalf("decision %s change %v", res.Decision, res.Change)
	}
	if len(res.Lifted) != 3 {
		t.Errorf("the edge move lifts all 3 flagged tasks to L2, lifted %v", res.Lifted)
	}
}

// An accepted step never turns a contract scenario red: every single change from the reference weights
// (±1 and ±0.5 on each signal, ±1 on each edge), with flagged tasks that move up, is measured on the
// repository suite; whenever it is accepted the 9 contract scenarios stay green.
func TestAcceptedStepKeepsContractGreen(t *testing.T) {
	suite, _ := repoSuite(t)
	base := refWeights(t)
	var changes []Change
	for _, s := range weights.Signals() {
		for _, d := range []weights.Half{2, 1, -1, -2} {
			changes = append(changes, Change{Kind: weights.ChangeSignal, Signal: s, Delta: d})
		}
	}
	for lv := weights.L0; lv <= weights.L3; lv++ {
		changes = append(changes, Change{Kind: weights.ChangeBucket, Edge: lv, Delta: 2}, Change{Kind: weights.ChangeBucket, Edge: lv, Delta: -2})
	}
	accepted := 0
	for _, parent := range []weights.Weights{base, Change{Kind: weights.ChangeSignal, Signal: weights.Ambiguous, Delta: 1}.Apply(base)} {
		before := suite.Losses(&parent)
		for _, c := range changes {
			if !c.Valid(&parent) {
				continue
			}
			// Flagged tasks in which the changed knob fires, so the motivating rule does not block.
			var fired []weights.Signal
			if c.Kind == weights.ChangeSignal {
				fired = []weights.Signal{weights.ExplicitBugfix, c.Signal}
			}
			flagged := []Flagged{{Fired: fired}}
			a, cand := evaluate(c, false, &judge{parent: &parent, suite: suite, before: before, flagged: flagged})
			if !a.Accepted {
				continue
			}
			accepted++
			for _, r := range suite.Score(&cand).Rows {
				if r.Red && strings.HasPrefix(suiteOrigin(suite, r.Name), "contract ") {
					t.Errorf("accepted %v turned contract scenario %s red: %+v", c, r.Name, r)
				}
			}
		}
	}
	if accepted == 0 {
		t.Fatal("no change was accepted; the property was not exercised")
	}
}

func suiteOrigin(s *Suite, name string) string {
	for _, sc := range s.Scenarios {
		if sc.Name == name {
			return sc.Origin
		}
	}
	return ""
}

type parityRecord struct {
	ID      string   `json:"id"`
	Prompt  string   `json:"prompt"`
	History []string `json:"history"`
}

// Property: +1 on any signal never lowers any prompt's final level (parity prompts, several parents).
func TestPlusOneNeverLowersALevel(t *testing.T) {
	f, err := os.Open(filepath.Join(repoRoot(), "testdata", "ldd", "parity.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var dets []scorer.Detection
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r parityRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		dets = append(dets, scorer.Detect(r.Prompt, r.History))
	}
	if len(dets) != 255 {
		t.Fatalf("read %d parity prompts", len(dets))
	}
	base := refWeights(t)
	parents := []weights.Weights{base}
	for _, s := range weights.Signals() { // parents with one weight moved, halves included
		parents = append(parents, Change{Kind: weights.ChangeSignal, Signal: s, Delta: 3}.Apply(base), Change{Kind: weights.ChangeSignal, Signal: s, Delta: -4}.Apply(base))
	}
	for _, parent := range parents {
		for _, s := range weights.Signals() {
			for _, d := range []weights.Half{1, 2} {
				cand := Change{Kind: weights.ChangeSignal, Signal: s, Delta: d}.Apply(parent)
				for i, det := range dets {
					_, _, before, _ := det.Levels(&parent)
					_, _, after, _ := det.Levels(&cand)
					if after < before {
						t.Fatalf("prompt %d: %s %s lowered the level %s → %s", i, s, d, before, after)
					}
				}
			}
		}
	}
}

// Same inputs, same bytes: the step's JSON does not depend on map order or the clock.
func TestStepDeterministicAndGolden(t *testing.T) {
	c, _ := genhistory.CaseByName("phase3-gate")
	var outs [][]byte
	for i := 0; i < 2; i++ {
		_, _, _, step := runCase(t, c, 3)
		b, err := json.MarshalIndent(step, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, b)
	}
	if string(outs[0]) != string(outs[1]) {
		t.Fatal("two runs gave different JSON")
	}
	testutil.Golden(t, "step_phase3_seed3.json", append(outs[0], '\n'))
}

// Windows are per log; flagged tasks from several logs are pooled for the trigger.
func TestWindowsPerLogPooledTrigger(t *testing.T) {
	w := refWeights(t)
	h, exp := genhistory.Phase3Gate(11, &w)
	text := h.Render()
	a := parseLog(t, "a.log", text)
	two, _ := genhistory.TwoRegressions(12, &w)
	b := parseLog(t, "b.log", two.Render())
	tasks := append(append([]traceparse.Task(nil), a.Tasks...), b.Tasks...)
	det := Detect(DetectInput{Tasks: tasks, Resolver: Resolver{Active: &w}})
	if len(det.Window.Logs) != 2 || det.Median != nil {
		t.Fatalf("windows %+v, median %v (want per-log medians only)", det.Window.Logs, det.Median)
	}
	if len(det.Flagged) != len(exp.Flagged)+2 || !det.Triggered {
		t.Fatalf("flagged %d, want %d", len(det.Flagged), len(exp.Flagged)+2)
	}
	sources := map[string]int{}
	for _, f := range det.Flagged {
		sources[f.Source]++
	}
	if sources["a.log"] != 3 || sources["b.log"] != 2 {
		t.Errorf("flagged per source %v", sources)
	}
}

// The loop passes the first Detection back with a new parent and the changes it already tried.
func TestStepReusesDetectionAndExcludes(t *testing.T) {
	w := refWeights(t)
	h, exp := genhistory.Phase3Gate(5, &w)
	suite, holdout := repoSuite(t)
	tasks := parseLog(t, "h.log", h.Render()).Tasks
	first, err := Step(StepInput{Tasks: tasks, Parent: w, Suite: suite, Holdout: holdout})
	if err != nil {
		t.Fatal(err)
	}
	if first.Decision != weights.DecisionAccept || first.Change.Signal != exp.Signal {
		t.Fatalf("first step %s %v", first.Decision, first.Change)
	}
	next, err := Step(StepInput{Detected: first.Detection, Parent: first.Candidate, Suite: suite, Holdout: holdout,
		Exclude: []Change{*first.Change}})
	if err != nil {
		t.Fatal(err)
	}
	// explicit-bugfix fires in the comparison group too: no candidate is left (before the screen was
	// restricted to the eligible tasks, explicit-bugfix was the "next candidate" here).
	if next.Proposal != nil || !strings.Contains(next.Reason, "every passing signal was tried") {
		t.Fatalf("excluded change proposed again: %v (%s)", next.Proposal, next.Reason)
	}
	if len(first.Flagged) != len(next.Flagged) || first.Detection == next.Detection {
		t.Error("the reused detection must keep the flagged tasks and not be modified in place")
	}
}

func TestEmptySuiteIsAnError(t *testing.T) {
	w := refWeights(t)
	if _, err := Step(StepInput{Parent: w}); err == nil {
		t.Fatal("a step without a suite must fail")
	}
}

func TestJSONNumbers(t *testing.T) {
	b, _ := json.Marshal(struct {
		A, B, C Num
		D       weights.Half
		E       Change
		F       Change
	}{Num(0.1234567), Num(nan()), Num(-1e-9), weights.Half(5), Change{Kind: weights.ChangeSignal, Signal: weights.Ambiguous, Delta: 1},
		Change{Kind: weights.ChangeBucket, Edge: weights.L1, Delta: -2}})
	want := `{"A":0.123457,"B":null,"C":0,"D":2.5,"E":{"kind":"signal","signal":"ambiguous","delta":0.5},"F":{"kind":"bucket","edge":"L1","delta":-1}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

func nan() float64 {
	z := 0.0
	return z / z
}

// A window too small for the screen: explicit-bugfix and ambiguous fire in all three flagged tasks, but
// with five closed tasks no count can reach Alpha (the most extreme table gives 1/C(5,3) = 0.1). The reason must say that, not that nothing fired consistently.
func TestNoProposalReasonNamesUnderpoweredConsistentSignal(t *testing.T) {
	w := refWeights(t)
	h := &genhistory.History{Weights: &w, Start: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	for i := 0; i < 5; i++ {
		task := genhistory.NewTask(&w, fmt.Sprintf("task %d", i), 0.1, weights.Components)
		if i%2 == 0 {
			task = genhistory.NewTask(&w, fmt.Sprintf("fix %d", i), 0.1, weights.ExplicitBugfix, weights.Ambiguous)
			task.RegressionFollowed = true
		}
		h.Tasks = append(h.Tasks, task)
	}
	det := Detect(DetectInput{Tasks: parseLog(t, "small.log", h.Render()).Tasks, Resolver: Resolver{Active: &w}})
	if !det.Triggered || det.Proposal != nil {
		t.Fatalf("triggered=%v proposal=%v, want a trigger without a proposal", det.Triggered, det.Proposal)
	}
	for _, want := range []string{"no proposal: no signal passes the accumulated test: ", "explicit-bugfix is underpowered", "ambiguous is underpowered", `"fix 0"`,
		// the counts name their populations: the settled ones the test counted, the titles listed
		"(3 settled eligible task(s), 3 of them flagged); flagged in the windows or settled (3): "} {
		if !strings.Contains(det.Reason, want) {
			t.Errorf("reason %q\nlacks %q", det.Reason, want)
		}
	}
}

// In a loop, a passing signal whose change was tried and reverted is excluded; the reason says so.
func TestNoProposalReasonNamesTriedCandidates(t *testing.T) {
	w := refWeights(t)
	tasks := loopHistory(t, &w, 5, weights.ExplicitBugfix, weights.Ambiguous)
	tried := []Change{{Kind: weights.ChangeSignal, Signal: weights.Ambiguous, Delta: weights.Whole(1)}}
	det := Detect(DetectInput{Tasks: tasks, Resolver: Resolver{Active: &w}, Exclude: tried})
	if det.Proposal != nil {
		t.Fatalf("proposal %v, want none once ambiguous is excluded", det.Proposal)
	}
	if !strings.Contains(det.Reason, "every passing signal was tried and reverted, or is refused on this version (ambiguous)") {
		t.Errorf("reason %q", det.Reason)
	}
}

// A reason names at most maxReasonTitles flagged tasks and says how many more there are: a year of an
// effect never applied holds thousands, which made a 610 KB reason line.
func TestNoProposalReasonBoundsTheTitles(t *testing.T) {
	det := &Detection{Screen: make([]ScreenRow, weights.NumSignals)}
	for i := 0; i < maxReasonTitles+5; i++ {
		det.Flagged = append(det.Flagged, Flagged{MetaTimestamp: fmt.Sprintf("2026-05-01T00:00:%02dZ", i), Title: fmt.Sprintf("task %d", i)})
	}
	r := noProposalReason(det, nil, nil)
	if !strings.Contains(r, fmt.Sprintf("task %d", maxReasonTitles-1)) || strings.Contains(r, fmt.Sprintf("task %d\"", maxReasonTitles)) || !strings.Contains(r, "… 5 more") {
		t.Errorf("reason %q: want the first %d titles and \"… 5 more\"", r, maxReasonTitles)
	}
}
