package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/tools/genhistory"
	"github.com/ldd-tools/tune/internal/weights"
)

// A night whose evidence wants a change only the frozen holdout refuses says so where a reviewer and a
// script look: the summary's "held" (--json), and the reason of the proposal it writes, which its EVAL
// report carries (docs/escalation.md, "A change the holdout holds"). The history is the partial run's
// (internal/evolve TestLoopPartialKeepsTheStepsThatLifted): six regressing ambiguous bug fixes, three
// lifted by ambiguous +1, the other three needing ambiguous at +4, which the holdout vetoes.
func TestANightSaysWhatTheHoldoutHolds(t *testing.T) {
	p := holdoutConflictProject(t)
	out, err := Nightly(p.env, EvolveOptions{Logs: p.logs})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Held) == 0 || out.Held[0].Change.String() != "ambiguous +2" {
		t.Fatalf("outcome %s (%s): held %+v, want ambiguous +2 first", out.Outcome, out.Reason, out.Held)
	}
	data, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Held []struct {
			Change struct{ Signal string } `json:"change"`
			From   float64                 `json:"from"`
			To     float64                 `json:"to"`
			Worse  []string                `json:"worse"`
		} `json:"held"`
	}
	if err := json.Unmarshal(data, &m); err != nil || len(m.Held) == 0 || m.Held[0].Change.Signal != "ambiguous" || m.Held[0].To != 4 ||
		!strings.Contains(strings.Join(m.Held[0].Worse, ","), "holdout-L2-ambiguous L2 → L3") {
		t.Fatalf("--json held %+v (%v): want ambiguous to +4 with the scenario it makes worse", m.Held, err)
	}
	if out.Stored == nil || !strings.Contains(out.Stored.Reason, "held: ambiguous +2 (+2 → +4; holdout loss 0.000 → 0.250") {
		t.Fatalf("the proposal's reason must say what the holdout holds: %+v", out.Stored)
	}
}

// With [evolve] holdout = "priced" in tune.toml the same night pays the holdout from the history's
// gain: ambiguous reaches +4 in the proposal, nothing is held, and the proposal's reason says the
// holdout's added loss was paid. A value other than "veto" or "priced" is an error naming the file and
// the key.
func TestAPricedHoldoutLetsTheEvidencePay(t *testing.T) {
	p := holdoutConflictProject(t)
	env := p.env
	config := filepath.Join(t.TempDir(), "tune.toml")
	env.Config = config
	for _, bad := range []string{"vetoed", ""} {
		writeHoldoutRule(t, config, bad)
		if _, err := Nightly(env, EvolveOptions{Logs: p.logs}); err == nil || !strings.Contains(err.Error(), config) ||
			!strings.Contains(err.Error(), fmt.Sprintf("evolve.holdout = %q", bad)) {
			t.Fatalf("holdout = %q: %v, want an error naming %s and the key", bad, err, config)
		}
	}
	writeHoldoutRule(t, config, "priced")
	out, err := Nightly(env, EvolveOptions{Logs: p.logs})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Held) != 0 || out.Stored == nil || out.Stored.Candidate.Signals[weights.Ambiguous] != weights.Whole(4) ||
		len(out.HoldoutPaid) != 1 || out.HoldoutPaid[0].String() != "ambiguous +2 (+2 → +4; holdout loss 0.000 → 0.250: holdout-L1-failing-after-change L1 → L2, holdout-L2-ambiguous L2 → L3)" ||
		!strings.Contains(out.Stored.Reason, "; holdout paid: ambiguous +2 (+2 → +4; holdout loss 0.000 → 0.250") {
		t.Fatalf("outcome %s (%s): held %+v, paid %+v, proposal %+v; want ambiguous at +4 with the holdout paid, said in the reason",
			out.Outcome, out.Reason, out.Held, out.HoldoutPaid, out.Stored)
	}
	// The attempt that was kept says what paid for the holdout.
	if a := out.Loop.Steps[0].Attempts[0]; !a.Accepted || !a.Holdout.Paid || !strings.Contains(a.Reason, "and on the holdout (2) is paid for by the expected gain") {
		t.Fatalf("the kept attempt: %+v (%s)", a.Holdout, a.Reason)
	}
}

// tune propose honours the priced holdout as the loop does: the kept change is named in --json
// "holdout_paid" and in the stored proposal's reason, and its EVAL report says the holdout was priced
// and what it paid for, not "as a veto".
func TestProposeNamesThePaidHoldout(t *testing.T) {
	p := holdoutConflictProject(t)
	env := p.env
	env.Config = filepath.Join(t.TempDir(), "tune.toml")
	writeHoldoutRule(t, env.Config, "priced")
	out, err := Propose(env, p.logs)
	if err != nil {
		t.Fatal(err)
	}
	want := "ambiguous +2 (+2 → +4; holdout loss 0.000 → 0.250: holdout-L1-failing-after-change L1 → L2, holdout-L2-ambiguous L2 → L3)"
	if len(out.HoldoutPaid) != 1 || out.HoldoutPaid[0].String() != want || out.ProposalFile == nil {
		t.Fatalf("decision %s, holdout paid %v; want %s", out.Decision, out.HoldoutPaid, want)
	}
	data, err := os.ReadFile(*out.ProposalFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "holdout paid: "+want) {
		t.Errorf("the proposal does not name the paid holdout:\n%s", data)
	}
	var md string
	for _, r := range out.Reports {
		if strings.HasSuffix(r, ".md") {
			b, err := os.ReadFile(r)
			if err != nil {
				t.Fatal(err)
			}
			md = string(b)
		}
	}
	if !strings.Contains(md, "read last, priced: the loss it adds is paid by the history's expected gain, with the suite's): loss 0 → 0.25 — **worse**") ||
		!strings.Contains(md, "- **Holdout paid:** "+want) || strings.Contains(md, "as a veto") {
		t.Errorf("the EVAL report's holdout lines:\n%s", md)
	}
}

// holdoutConflictProject is a project whose one log holds genhistory.HoldoutConflict, read on the night
// of 20 July 2026.
func holdoutConflictProject(t *testing.T) *stateProject {
	t.Helper()
	now := time.Date(2026, 7, 20, 3, 0, 0, 0, time.UTC)
	p := newStateProject(t, &now, 1)
	if err := os.WriteFile(p.logs[0], []byte(genhistory.HoldoutConflict(refWeights()).Render()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeHoldoutRule writes a tune.toml whose [evolve] holdout is rule.
func writeHoldoutRule(t *testing.T, path, rule string) {
	t.Helper()
	if err := os.WriteFile(path, fmt.Appendf(nil, "[evolve]\nholdout = %q\n", rule), 0o644); err != nil {
		t.Fatal(err)
	}
}
