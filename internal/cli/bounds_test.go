package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/tools/genhistory"
	"github.com/ldd-tools/tune/internal/weights"
)

// The two bounds a user sets or meets (docs/decisions.md#parity-price, #drift-bound): the parity budget
// of tune.toml binds the loop, and a single step (tune propose) that would take a weight more than 2
// points from v0001 escalates (exit 3) without measuring or writing anything.
func TestParityBudgetFromConfigAndProposeAtTheDriftBound(t *testing.T) {
	e := newEvolveEnv(t)
	log := e.history("two-step", 1)

	// The two-step history's +2 on layer-crossings (the loss rule's step: +1 lifts none of its tasks) costs
	// 0.020 on the parity prompts before its credit; the regressions it is expected to avoid on the history
	// pay for it (docs/decisions.md#parity-price), so its net price is negative and a budget of 0.01 set in
	// the config file does not stop it: the run reports that budget and keeps the step.
	cfg := filepath.Join(e.root, "budget.toml")
	if err := os.WriteFile(cfg, []byte("[evolve]\nparity_budget = 0.01\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run("evolve", log, "--config", cfg)
	if code != 0 {
		t.Fatalf("evolve under budget 0.01: exit %d: %s%s", code, out, errOut)
	}
	for _, want := range []string{"≤ 0.010", "outcome: converged"} {
		if !strings.Contains(out, want) {
			t.Errorf("evolve under budget 0.01: no %q in\n%s", want, out)
		}
	}
	if code, out, _ := e.run("evolve", log, "--config", cfg, "--json"); code != 0 || !strings.Contains(out, `"parity_budget": 0.01`) {
		t.Errorf("evolve --json under budget 0.01 (exit %d): no parity_budget 0.01", code)
	}
	if code, out, errOut := e.run("evolve", log, "--apply"); code != 0 || !strings.Contains(out, "applied: weights v0002 is now active") {
		t.Fatalf("evolve --apply under the default budget: exit %d: %s%s", code, out, errOut)
	}

	// v0002 has layer-crossings at +4, two points above v0001. Three new regressions that want a third
	// point: -5 -3 +4 = -4 is still L1 under v0002, and layer-crossings is the one signal they share.
	parent, err := weights.Load(filepath.Join(e.weights, "v0002.toml"))
	if err != nil {
		t.Fatal(err)
	}
	h := genhistory.LowOnOneSignal(&parent, time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	drift := filepath.Join(e.root, "drift.log")
	if err := os.WriteFile(drift, h.Render(), 0o644); err != nil {
		t.Fatal(err)
	}
	before := proposalFiles(t, e.weights)
	code, out, errOut = e.run("propose", drift)
	if code != 3 {
		t.Fatalf("propose beyond the drift bound: exit %d, want 3\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out+errOut, "layer-crossings") || !strings.Contains(errOut, "escalation") {
		t.Errorf("propose beyond the drift bound names neither the knob nor the escalation:\n%s%s", out, errOut)
	}
	if after := proposalFiles(t, e.weights); after != before {
		t.Errorf("propose beyond the drift bound wrote a proposal: %s → %s", before, after)
	}
	code, out, _ = e.run("propose", drift, "--json")
	if code != 3 || !strings.Contains(out, `"drift": {`) {
		t.Errorf("propose --json beyond the drift bound: exit %d, no drift object:\n%s", code, out)
	}

	// A human read the page and left layer-crossings at +4. tune.toml says so, and the same stop is held
	// every night after, without a page (docs/escalation.md, "A drift bound a human has read").
	ack := func(body string) {
		p := filepath.Join(e.root, "ack.toml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		e.env = map[string]string{"TUNE_CONFIG": p}
	}
	ack("[evolve.drift_acknowledged]\nlayer-crossings = 4\n")
	code, out, errOut = e.run("propose", drift)
	if code != 0 || !strings.Contains(out, "held: layer-crossings +1 at the drift bound") || !strings.Contains(out, "leaves layer-crossings at +4, its active value") {
		t.Errorf("propose at an acknowledged drift: exit %d, want 0 and a held line\n%s%s", code, out, errOut)
	}
	if after := proposalFiles(t, e.weights); after != before {
		t.Errorf("propose at an acknowledged drift wrote a proposal: %s → %s", before, after)
	}
	code, out, errOut = e.run("evolve", drift)
	if code != 0 || !strings.Contains(out, "outcome: stalled") || !strings.Contains(out, "held: layer-crossings +1 at the drift bound") {
		t.Errorf("evolve at an acknowledged drift: exit %d, want 0, stalled and a held line\n%s%s", code, out, errOut)
	}
	code, out, _ = e.run("evolve", drift, "--json")
	for _, want := range []string{`"drift_held": [`, `"active": 4`, `"drift_acknowledged": {`, `"layer-crossings": 4`} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("evolve --json at an acknowledged drift: exit %d, no %s", code, want)
		}
	}
	// What was acknowledged is a value: the knob at another one is another page.
	ack("[evolve.drift_acknowledged]\nlayer-crossings = 3\n")
	if code, out, errOut := e.run("evolve", drift); code != 3 || !strings.Contains(out+errOut, "drift bound") {
		t.Errorf("evolve with layer-crossings acknowledged at +3, active at +4: exit %d, want 3\n%s%s", code, out, errOut)
	}
	// A knob that does not exist is an error that names the file and the key (a pull request wrote it).
	ack("[evolve.drift_acknowledged]\nlayer-crosings = 4\n")
	if code, _, errOut := e.run("evolve", drift); code != 1 || !strings.Contains(errOut, "ack.toml") || !strings.Contains(errOut, `"layer-crosings" is not a knob`) {
		t.Errorf("a misspelt knob: exit %d, %s", code, errOut)
	}
}

// proposalFiles lists the proposal files of a weights store.
func proposalFiles(t *testing.T, weightsDir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(weightsDir, "proposals", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return strings.Join(m, " ")
}
