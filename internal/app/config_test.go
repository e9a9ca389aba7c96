package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bound written as 0 would silently become the default in code (0 means "not set" in the loop and
// the watch): readConfig refuses it and names the key; a left-out key and a positive one still load.
func TestConfigRefusesAnExplicitZero(t *testing.T) {
	dir := t.TempDir()
	load := func(body string) error {
		path := filepath.Join(dir, "tune.toml")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := readConfig(Env{Config: path}, "")
		return err
	}
	for _, k := range []string{"evolve.max_steps", "evolve.stall_bound", "evolve.parity_budget",
		"watch.min_tasks", "watch.overkill_bound", "watch.min_recurrences", "watch.alpha"} {
		table, key, _ := strings.Cut(k, ".")
		err := load("[" + table + "]\n" + key + " = 0\n")
		if err == nil || !strings.Contains(err.Error(), k+" = 0 would be read as the default") {
			t.Errorf("%s = 0: %v", k, err)
		}
	}
	if err := load("[evolve]\nparity_budget = 0.01\n[watch]\noverkill_bound = 0.2\n"); err != nil {
		t.Errorf("positive bounds: %v", err)
	}
	if err := load("[watch]\n"); err != nil {
		t.Errorf("an empty table: %v", err)
	}
}
