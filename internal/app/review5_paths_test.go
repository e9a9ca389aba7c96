package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A log reached by a second path — a directory symlink or a hard link beside its own path, as a glob
// over project directories gives when one of them links another — is one file: read twice it counts every
// task twice (twice the window, twice the accumulated evidence, an e-value of two copies of one table).
// The night must decide as with the log named once (the fifth review).
func TestALogReachedTwiceIsReadOnce(t *testing.T) {
	for _, how := range []string{"symlink", "hardlink"} {
		t.Run(how, func(t *testing.T) {
			once, twice := newR5Project(t), newR5Project(t)
			alias := filepath.Join(twice.dir, "alias", ".ldd", "trace.log")
			switch how {
			case "symlink":
				if err := os.Symlink(filepath.Dir(filepath.Dir(twice.log)), filepath.Join(twice.dir, "alias")); err != nil {
					t.Fatal(err)
				}
			case "hardlink":
				appendFile(t, twice.log, nil)
				if err := os.MkdirAll(filepath.Dir(alias), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Link(twice.log, alias); err != nil {
					t.Fatal(err)
				}
			}
			s := newR5Seq(77, r5Regime{base: 0.08, lifted: 0.6, deep: 0.6, days: 6})
			w := refWeights()
			for d := 0; d < 6; d++ {
				text := r5Render(s.day(d), w)
				appendFile(t, once.log, text)
				appendFile(t, twice.log, text)
				once.now = r5Start.Add(time.Duration(d)*24*time.Hour + 20*time.Hour)
				twice.now = once.now
				a := once.night(t)
				out, err := Nightly(twice.env, EvolveOptions{Logs: []string{twice.log, alias}})
				if err != nil {
					t.Fatal(err)
				}
				if out.Tasks != a.Tasks || out.Explain.Accumulated.Eligible != a.Explain.Accumulated.Eligible ||
					out.Explain.Signals[s.sig].A != a.Explain.Signals[s.sig].A {
					t.Fatalf("day %d: the log named twice (%s) gave %d task(s), %d settled eligible, %s a=%d; named once %d, %d, a=%d",
						d, how, out.Tasks, out.Explain.Accumulated.Eligible, s.sig, out.Explain.Signals[s.sig].A,
						a.Tasks, a.Explain.Accumulated.Eligible, a.Explain.Signals[s.sig].A)
				}
			}
		})
	}
}
