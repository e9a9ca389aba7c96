package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/weights"
)

var storeTestNow = time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)

// storeTestDirs copies the shipped weights into a temp dir and returns the weights and fixtures dirs.
func storeTestDirs(t *testing.T) (weightsDir, fixturesDir string) {
	t.Helper()
	root := t.TempDir()
	weightsDir, fixturesDir = filepath.Join(root, "weights"), filepath.Join(root, "fixtures")
	if err := copyDir(filepath.Join(repoRoot(), "weights"), weightsDir); err != nil {
		t.Fatal(err)
	}
	return weightsDir, fixturesDir
}

// storeRun runs tune with a fixed clock and the given store directories; it returns the exit code,
// stdout and stderr.
func storeRun(t *testing.T, weightsDir, fixturesDir string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &Factory{
		IO:     &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Now:    func() time.Time { return storeTestNow },
		Getenv: func(k string) string { return env[k] },
	}
	code := Run(f, append([]string{"--weights-dir", weightsDir, "--fixtures-dir", fixturesDir}, args...))
	return code, out.String(), errOut.String()
}

// storeTestProposal is +1 on ambiguous against v0001 with full screen statistics and three flagged
// tasks, two of which kept their prompt.
func storeTestProposal(t *testing.T) *store.Proposal {
	t.Helper()
	w, err := weights.Load(testutil.ReferenceWeightsPath())
	if err != nil {
		t.Fatal(err)
	}
	cand := w
	cand.Signals[weights.Ambiguous] += weights.Whole(1)
	p, holm := 0.0123, 0.0984
	return &store.Proposal{
		Created:   storeTestNow.Add(-time.Hour),
		Parent:    1,
		Decision:  weights.DecisionAccept,
		Candidate: cand,
		Steps: []store.ProposalStep{{
			Kind: "signal", Signal: "ambiguous", Delta: weights.Whole(1), Decision: weights.DecisionAccept,
			SuiteLossBefore: 0.4, SuiteLossAfter: 0.3, Counts: &store.TwoByTwo{A: 3, B: 2, C: 0, D: 15},
			FisherP: &p, HolmP: &holm, Confidence: "provisional",
		}},
		Evidence: []store.FlaggedTask{
			{MetaTimestamp: "2026-11-20T10:00:00Z", Title: "tidy the settings page", Level: "L1", Source: "proj/.ldd/trace.log",
				Evidence: []string{"regression_followed"}, Prompt: "tidy up the settings page somehow, not sure what is best"},
			{MetaTimestamp: "2026-11-22T09:30:00Z", Title: "adjust <auth> retry", Level: "L0", Source: "proj/.ldd/trace.log",
				Evidence: []string{"regression_of"}, Prompt: "maybe adjust the auth retry thing"},
			{MetaTimestamp: "2026-11-25T16:05:00Z", Title: "fix flaky export", Level: "L1", Source: "proj/.ldd/trace.log",
				Evidence: []string{"same-area-loss"}},
		},
		SuiteLossBefore: 0.4,
		SuiteLossAfter:  0.3,
		Reason:          "+1 ambiguous: 3 low-side regressions in 20 tasks",
		Confidence:      "provisional",
	}
}

func writeTestProposal(t *testing.T, weightsDir string, p *store.Proposal) string {
	t.Helper()
	if err := logTestDecision(weightsDir, p, func() time.Time { return storeTestNow }); err != nil {
		t.Fatal(err)
	}
	path, _, err := store.WriteProposal(filepath.Join(weightsDir, store.ProposalsDir), p)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// logTestDecision logs the decision of a hand-made proposal as tune propose does (one accept entry per
// change from its parent, with the proposal's id and content hash), so that apply accepts it. A proposal
// that is not accept/halve, or whose decision is logged already, adds nothing.
func logTestDecision(weightsDir string, p *store.Proposal, now func() time.Time) error {
	s, err := store.Open(weightsDir, now)
	if err != nil || !p.Applicable() {
		return err
	}
	entries, err := s.Entries()
	if err != nil {
		return err
	}
	id := p.ComputeID()
	for _, e := range entries {
		if e.Proposal == id && (e.Action == store.ActionAccept || e.Action == store.ActionHalve) {
			return nil
		}
	}
	parent, err := s.Version(p.Parent)
	if err != nil {
		return err
	}
	for _, c := range store.Changes(&parent, &p.Candidate) {
		change := c.Name + " " + c.Delta().String()
		if c.Kind == "bucket" {
			change = "bucket " + c.Name + " edge " + c.Delta().String()
		}
		err := s.Log(store.LogEntry{Action: string(p.Decision), Parent: p.Parent, Proposal: id, ProposalSHA256: p.ContentSHA256(),
			Change: change, Decision: p.Decision, SuiteLossBefore: store.Loss(p.SuiteLossBefore), SuiteLossAfter: store.Loss(p.SuiteLossAfter),
			Reason: "logged by the test"})
		if err != nil {
			return err
		}
	}
	return nil
}

func TestApplyNewestPendingHarvestsAndRefusesStale(t *testing.T) {
	wd, fd := storeTestDirs(t)
	code, _, errOut := storeRun(t, wd, fd, nil, "apply")
	if code != 0 || !strings.Contains(errOut, "nothing to do: no proposals") {
		t.Fatalf("apply without proposals: %d %q", code, errOut)
	}
	reverted := storeTestProposal(t)
	reverted.Decision = weights.DecisionRevert
	reverted.Reason = "reverted attempt"
	writeTestProposal(t, wd, reverted)
	older := storeTestProposal(t)
	older.Reason = "older"
	older.Created = older.Created.Add(-time.Hour)
	// ambiguous +2: once the newest (+1) is applied, older asks for other weights than the active ones,
	// so it is stale (one asking for the active weights is nothing to do: TestNightlyReportsTheWatchsRollback)
	older.Candidate.Signals[weights.Ambiguous] += weights.Whole(1)
	older.Steps[0].Delta = weights.Whole(2)
	writeTestProposal(t, wd, older)
	newest := storeTestProposal(t)
	writeTestProposal(t, wd, newest)

	code, out, errOut := storeRun(t, wd, fd, nil, "apply", "--json")
	if code != 0 {
		t.Fatalf("apply: %d %s", code, errOut)
	}
	for _, want := range []string{`"applied": true`, `"proposal": "` + newest.ID + `"`, `"version": "v0002"`, `"change": "ambiguous +1"`} {
		if !strings.Contains(out, want) {
			t.Errorf("apply --json lacks %s:\n%s", want, out)
		}
	}
	harvested, _ := filepath.Glob(filepath.Join(fd, "harvested", "*.toml"))
	if len(harvested) != 2 {
		t.Fatalf("harvested %v, want the 2 tasks with a prompt", harvested)
	}
	var levels []string
	for _, h := range harvested {
		data, _ := os.ReadFile(h)
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "levels = ") {
				levels = append(levels, line)
			}
		}
	}
	if strings.Join(levels, ";") != `levels = ["L1"];levels = ["L2"]` && strings.Join(levels, ";") != `levels = ["L2"];levels = ["L1"]` {
		t.Errorf("harvested levels %v, want one above L0 and L1", levels)
	}
	// the older proposal was measured against v0001, which is no longer active
	code, _, errOut = storeRun(t, wd, fd, nil, "apply")
	if code != 1 || !strings.Contains(errOut, "measured against v0001, but the active version is v0002") {
		t.Errorf("stale proposal: %d %s", code, errOut)
	}
	// the reverted one is refused by id
	code, _, errOut = storeRun(t, wd, fd, nil, "apply", reverted.ID)
	if code != 1 || !strings.Contains(errOut, `decision "revert"`) {
		t.Errorf("reverted proposal: %d %s", code, errOut)
	}
	// a stale expected serial is refused
	writeTestProposal(t, wd, func() *store.Proposal {
		p := storeTestProposal(t)
		p.Parent = 2
		p.Candidate.Signals[weights.Greenfield]++
		return p
	}())
	// the log: init, two accepts, the apply, the accept of this proposal
	code, _, errOut = storeRun(t, wd, fd, nil, "apply", "--expect-serial", "4")
	if code != 1 || !strings.Contains(errOut, "expected the evolution log at serial 4, but it is at serial 5") {
		t.Errorf("stale serial: %d %s", code, errOut)
	}
	if code, _, errOut = storeRun(t, wd, fd, nil, "apply", "--expect-serial", "5"); code != 0 {
		t.Errorf("fresh serial: %d %s", code, errOut)
	}
	if code, out, _ = storeRun(t, wd, fd, nil, "verify"); code != 0 {
		t.Errorf("verify: %s", out)
	}
}

func TestStoreCommandFlagErrors(t *testing.T) {
	wd, fd := storeTestDirs(t)
	for _, args := range [][]string{
		{"diff", "v0001"},
		{"diff", "v0001", "v0001", "--format", "html"},
		{"rollback", "--to", "vx"},
		{"repair", "--abort", "--resign"},
		{"repair", "--reason", "x"},
		{"repair", "--resign"},                  // a hand edit enters the history only with a reason
		{"repair", "--resign", "--reason", " "}, // …that says something
		{"apply", "a", "b"},
		{"apply", "--expect-serial", "-5"},
		{"apply", "--expect-serial", "-1"}, // the internal "not given" value is not a serial either
		{"rollback", "--expect-serial", "-1"},
		{"nightly", "--apply"},                               // nightly never applies: the hidden shared flag was accepted and ignored
		{"nightly", "--declined", "tune/v0001-0123456789ab"}, // a pull request's no means nothing without --branch
	} {
		if code, _, errOut := storeRun(t, wd, fd, nil, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errOut)
		}
	}
}
