package app

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/weights"
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

// Every tune.toml the docs show (a ```toml block in README.md or docs/*.md) is one the config accepts,
// and the acknowledgement the escalation playbook shows reads as the knobs and values it names.
func TestDocsConfigBlocksAreConfigs(t *testing.T) {
	root := testutil.RepoRoot()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```toml\n(.*?)```")
	n := 0
	for _, f := range append(files, filepath.Join(root, "README.md")) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllSubmatch(data, -1) {
			n++
			cfg, err := parseConfig(f, m[1])
			if err != nil {
				t.Errorf("%s: a tune.toml the docs show is refused: %v\n%s", f, err, m[1])
			}
			if filepath.Base(f) == "escalation.md" {
				want := evolve.DriftAcks{"layer-crossings": weights.Whole(4), "L1 edge": weights.Whole(3)}
				if !maps.Equal(cfg.driftAcks, want) {
					t.Errorf("the playbook's acknowledgement reads as %v, want %v", cfg.driftAcks, want)
				}
			}
		}
	}
	if n < 3 {
		t.Fatalf("%d toml blocks in the docs; the test reads none of what it should", n)
	}
}
