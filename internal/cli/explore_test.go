package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/explore/compare"
)

// TestExploreJSONFieldsLocked: the --json fields of tune explore, at every level, are exactly the ones
// --help documents (a new field needs this test and --help updated). The log is written by tune score
// --log under an [explore] table, then closed as an agent closes its tasks.
func TestExploreJSONFieldsLocked(t *testing.T) {
	dir := t.TempDir()
	cfg, log := filepath.Join(dir, "tune.toml"), filepath.Join(dir, "trace.log")
	if err := os.WriteFile(cfg, []byte("[explore]\nshare = 0.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(now string, args ...string) string {
		t.Helper()
		env := map[string]string{"TUNE_NOW": now, "TUNE_CONFIG": cfg}
		var out, errOut strings.Builder
		f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Getenv: func(k string) string { return env[k] }}
		if code := Run(f, args); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
		}
		return out.String()
	}
	// Raised draws (sha256 under 0.2) come at hours 4, 8 and 9 of these titles (explore.txtar).
	for h := 1; h <= 9; h++ {
		run(fmt.Sprintf("2026-11-02T%02d:00:00Z", h), "score", "-q", "--log", log, "--task", fmt.Sprintf("greenfield fix %d", h),
			fmt.Sprintf("fix the bug %d in the new greenfield module from scratch", h))
		f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "2026-11-02T%02d:01:00.000000Z  inner  close  terminal=complete  loss_final=0.050\n", h)
		f.Close()
	}
	out := run("2026-11-10T00:00:00Z", "explore", "--json", log) // a quiet week later: every task settled
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	keys := func(v any) string { return objectKeys(t, v) }
	edges, _ := m["edges"].([]any)
	if len(edges) != compare.Edges {
		t.Fatalf("%d edges, want %d", len(edges), compare.Edges)
	}
	l1, l3 := edges[1].(map[string]any), edges[3].(map[string]any)
	rate, diff := "hi k lo n rate", "estimate hi lo"
	for _, c := range []struct {
		what string
		v    any
		want string
	}{
		{"top level", m, "alpha config edges extra_levels inconsistent inconsistent_examples lines logs threshold warnings"},
		{"config", m["config"], "margin share"},
		{"edges[1]", l1, "control e_value edge from overkill_difference raised regression_difference to verdict"},
		{"edges[1].control", l1["control"], "overkill recorded regressed settled"},
		{"edges[1].raised.regressed", l1["raised"].(map[string]any)["regressed"], rate},
		{"edges[1].regression_difference", l1["regression_difference"], diff},
		{"edges[3].raised.overkill", l3["raised"].(map[string]any)["overkill"], rate},
		{"edges[3].overkill_difference", l3["overkill_difference"], diff},
	} {
		if got := keys(c.v); got != c.want {
			t.Errorf("%s: fields %q, want %q", c.what, got, c.want)
		}
	}
	if ctl, raised := l1["control"].(map[string]any), l1["raised"].(map[string]any); ctl["settled"] != 6.0 || raised["settled"] != 3.0 || m["extra_levels"] != 3.0 {
		t.Errorf("control %v, raised %v, extra levels %v: want 6 and 3 settled, 3 extra levels", ctl, raised, m["extra_levels"])
	}
	help := NewCmdExplore(&Factory{IO: &IOStreams{}}).Long
	for _, k := range strings.Fields(keys(m) + " " + keys(m["config"]) + " " + keys(l1) + " " + keys(l1["control"]) + " " + diff) {
		if !strings.Contains(help, `"`+k+`"`) {
			t.Errorf("--help does not document the --json field %q", k)
		}
	}
}
