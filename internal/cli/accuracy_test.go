package cli

import (
	"bytes"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/testutil"
)

// accuracyCLI runs tune at a fixed clock (the one the reference values were computed with).
func accuracyCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return accuracyCLIEnv(t, nil, args...)
}

// accuracyCLIEnv is accuracyCLI with more environment (COLUMNS).
func accuracyCLIEnv(t *testing.T, more map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := map[string]string{"TUNE_NOW": "2026-12-02T00:00:00Z"}
	maps.Copy(env, more)
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Getenv: func(k string) string { return env[k] }}
	code := Run(f, append([]string{"--weights-dir", filepath.Join(t.TempDir(), "none")}, args...))
	return code, out.String(), errOut.String()
}

func TestAccuracyFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		logs string
		days int
		json bool
	}{
		{nil, "", 30, false}, // no LOG: the run finds .ldd/trace.log upward (Factory.traceLogs)
		{[]string{"a.log", "b.log", "--days", "90", "--json"}, "a.log b.log", 90, true},
	} {
		var got *accuracyOptions
		f := &Factory{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Getenv: func(string) string { return "" }}
		cmd := newCmdAccuracy(f, func(o *accuracyOptions) error { got = o; return nil })
		cmd.SetArgs(append([]string{}, c.args...))
		if err := cmd.Execute(); err != nil {
			t.Fatal(c.args, err)
		}
		if strings.Join(got.Logs, " ") != c.logs || got.Days != c.days || got.JSON != c.json {
			t.Errorf("%v: options %+v", c.args, got)
		}
	}
	for _, bad := range []string{"0", "-3"} {
		if code, _, errOut := accuracyCLI(t, "accuracy", "--days", bad, "x.log"); code != ExitUsage || !strings.Contains(errOut, "--days") {
			t.Errorf("--days %s: exit %d, stderr %q", bad, code, errOut)
		}
	}
	if code, _, errOut := accuracyCLI(t, "accuracy", filepath.Join(t.TempDir(), "missing.log")); code != 1 || !strings.Contains(errOut, "missing.log") {
		t.Errorf("missing log: exit %d, stderr %q", code, errOut)
	}
}

// TestAccuracyGolden locks the table and the JSON on a log with every kind of task read beyond
// the reference, and checks that --json starts with the reference's fields.
func TestAccuracyGolden(t *testing.T) {
	log := "../accuracy/testdata/quirks.log"
	code, out, errOut := accuracyCLI(t, "accuracy", "--days", "36500", log)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	testutil.Golden(t, "accuracy_quirks.txt", []byte(out))
	code, out, errOut = accuracyCLI(t, "accuracy", "--days", "36500", "--json", log)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	testutil.Golden(t, "accuracy_quirks.json", []byte(out))
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"window_days", "n_tasks_total", "n_tasks_with_level", "per_level", "overall",
		"read_beyond_reference", "intervals", "by_weights_version", "by_dispatch", "by_log", "n_tasks_undated"} {
		if _, ok := m[k]; !ok {
			t.Errorf("--json has no %q", k)
		}
	}
	if len(m) != 11 {
		t.Errorf("--json has %d top-level fields, want 11 (a new field needs this test and --help updated)", len(m))
	}
	// Inside the reference's objects, exactly the reference's fields (tune's additions are top-level).
	var ref struct {
		PerLevel map[string]map[string]json.RawMessage `json:"per_level"`
		Overall  map[string]json.RawMessage            `json:"overall"`
	}
	if err := json.Unmarshal([]byte(out), &ref); err != nil {
		t.Fatal(err)
	}
	fields := func(o map[string]json.RawMessage) string {
		var ks []string
		for k := range o {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return strings.Join(ks, " ")
	}
	if got := fields(ref.Overall); got != "overkill_rate underkill_rate" {
		t.Errorf("overall: fields %q", got)
	}
	for _, lvl := range []string{"L0", "L1", "L2", "L3", "L4"} {
		if got := fields(ref.PerLevel[lvl]); got != "complete_rate median_final_loss median_k n overkill_rate terminals top_signals underkill_rate" {
			t.Errorf("per_level.%s: fields %q", lvl, got)
		}
	}
	var top []map[string]json.RawMessage
	if err := json.Unmarshal(ref.PerLevel["L1"]["top_signals"], &top); err != nil || len(top) == 0 || fields(top[0]) != "n name" {
		t.Errorf("per_level.L1.top_signals: %s (%v)", ref.PerLevel["L1"]["top_signals"], err)
	}
	// The default window (30 days before the clock) holds none of these September tasks.
	code, out, _ = accuracyCLI(t, "accuracy", log)
	if code != 0 || !strings.Contains(out, "last 30 days · 0 tasks closed") {
		t.Errorf("default window: exit %d\n%s", code, out)
	}
}
