package explore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ldd-tools/tune/internal/scorer"
	"github.com/ldd-tools/tune/internal/testutil"
)

// BenchmarkScoreLogDraw is what tune score --log adds per task with an [explore] table: finding the
// project two directories up, reading and parsing tune.toml (the init template with the table set), and
// the draw (docs/decisions.md#explore-a-randomized-share-of-near-edge-tasks).
func BenchmarkScoreLogDraw(b *testing.B) {
	root := b.TempDir()
	wd := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(wd, 0o755); err != nil {
		b.Fatal(err)
	}
	toml := "[evolve]\nmax_steps = 8\nstall_bound = 2\n\n[watch]\nmin_tasks = 10\nalpha = 0.05\n\n[explore]\nshare = 0.1\nmargin = 1\n"
	if err := os.WriteFile(filepath.Join(root, "tune.toml"), []byte(toml), 0o644); err != nil {
		b.Fatal(err)
	}
	w := testutil.ReferenceWeights()
	r := scorer.Score("fix the bug in the new greenfield module from scratch", nil, &w)
	b.ReportAllocs()
	for b.Loop() {
		c, err := ReadConfig(wd, "")
		if err != nil {
			b.Fatal(err)
		}
		if _, ok := c.Draw(&r, &w, "2026-11-02T01:00:00.000000Z", "greenfield fix 1"); !ok {
			b.Fatal("not drawn")
		}
	}
}
