package app

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/tools/genlive"
	"github.com/ldd-tools/tune/internal/traceparse/tracegen"
	"github.com/ldd-tools/tune/internal/weights"
)

// TestNightCost is issue 28's cost measurement (docs/live-harness.md#cost), run only with
// TUNE_HARNESS=cost: it builds the two binaries, writes a 256 MB log with the project's trace generator
// (internal/traceparse/tracegen, as `gentrace` does; TUNE_COST_MB changes the size) into a temporary
// project, plays live nights on it until a change is applied (so the watch has a version to judge; at most
// TUNE_COST_NIGHTS nights, default 6; TUNE_COST_APPLY=1 applies layer-crossings +1 by hand when none was), and
// times whole processes (GNU time for the peak RSS): a whole-log `tune accuracy`, `tune nightly` on the next night, and nightly on
// the night after that, which starts from the previous night's state. It reports times and peak RSS as ratios; it asserts only
// that the commands ran, never a time (a shared machine's timings are no test).
func TestNightCost(t *testing.T) {
	if os.Getenv("TUNE_HARNESS") != "cost" {
		t.Skip("TUNE_HARNESS=cost measures the cost of a night on a 256 MB log")
	}
	mb := envMB(t, "TUNE_COST_MB", 256)
	// TUNE_COST_DIR keeps the project and binaries there (a new directory) for a profiler to look at.
	dir := t.TempDir()
	if keep := os.Getenv("TUNE_COST_DIR"); keep != "" {
		if err := os.Mkdir(keep, 0o755); err != nil {
			t.Fatalf("TUNE_COST_DIR: %v (it must name a new directory)", err)
		}
		dir = keep
	}
	bin := filepath.Join(dir, "bin")
	for _, c := range []string{"tune", "tune-full"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bin, c), "./cmd/"+c)
		cmd.Dir, cmd.Env = testutil.RepoRoot(), append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", c, err, out)
		}
	}
	proj := filepath.Join(dir, "project")
	// Peak RSS comes from /usr/bin/time (GNU time's %M), which forks tune itself: the rusage of a child
	// of this test process would report this process's own peak, because Linux carries the parent's
	// high-water mark across the clone and exec that os/exec uses.
	gnuTime := "/usr/bin/time"
	if _, err := os.Stat(gnuTime); err != nil {
		t.Skip("the cost measurement needs GNU time at /usr/bin/time for the peak RSS of tune alone")
	}
	run := func(now string, args ...string) (procStats, string) {
		t.Helper()
		statsFile := filepath.Join(dir, "time.out")
		cmd := exec.Command(gnuTime, append([]string{"-f", "%M %U %S", "-o", statsFile, filepath.Join(bin, "tune")}, args...)...)
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), "TUNE_NOW="+now, "COLUMNS=200")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		code := 0
		if err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatalf("tune %s: %v", strings.Join(args, " "), err)
			}
			code = ee.ExitCode()
		}
		// nightly: 0 quiet, 1 alert, 3 page (docs/nightly.md); every other command: 0.
		if code != 0 && !(args[0] == "nightly" && (code == 1 || code == 3)) {
			t.Fatalf("tune %s: exit %d\n%s", strings.Join(args, " "), code, out.String())
		}
		data, err := os.ReadFile(statsFile)
		if err != nil {
			t.Fatal(err)
		}
		var s procStats
		var user, sys float64
		// GNU time appends its line after any "Command exited with non-zero status" line.
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if _, err := fmt.Sscan(lines[len(lines)-1], &s.rssKB, &user, &sys); err != nil {
			t.Fatalf("time output %q: %v", data, err)
		}
		s.wall, s.cpu = wall, time.Duration((user+sys)*float64(time.Second))
		return s, out.String()
	}
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	run("2026-01-01T00:00:00Z", "init", proj)
	// The history: the trace generator's filler tasks (a year's worth of tasks, dated a second apart from
	// 1 January 2026), then live nights from 1 June (genlive, a strong planted effect) played in-process
	// until a change is applied, so that the measured nights have a version for the watch to judge, as a
	// live project does.
	log := writeGeneratedLog(t, proj, mb)
	var now time.Time
	env := Env{Now: func() time.Time { return now }, WeightsDir: filepath.Join(proj, "weights"),
		FixturesDir: filepath.Join(proj, "fixtures"), ReportsDir: filepath.Join(proj, "reports")}
	seq := genlive.NewSequence(1, genlive.Regime{Base: 0.05, Planted: []weights.Signal{weights.LayerCrossings}, Carrier: 0.95})
	night, appliedAt := 0, 0
	// appendNight appends the next night's tasks, dispatched under the active weights.
	appendNight := func() {
		night++
		text := nightUnder(t, env.WeightsDir, seq, night)
		appendFile(t, log, text[0])
	}
	// At most 6 nights (TUNE_COST_NIGHTS): a night that reads the whole log costs seconds here, and the
	// measurement does not depend on which night applied (without an apply the watch has nothing to
	// judge, and the report says so; more set-up nights make an apply, and the watch's cost, likelier).
	maxNights := 6
	if v := os.Getenv("TUNE_COST_NIGHTS"); v != "" {
		if _, err := fmt.Sscan(v, &maxNights); err != nil || maxNights < 1 {
			t.Fatalf("TUNE_COST_NIGHTS=%q: want a positive number of nights", v)
		}
	}
	for night < maxNights && appliedAt == 0 {
		appendNight()
		now = genlive.NightEnd(night)
		out, err := Nightly(env, EvolveOptions{Logs: []string{log}})
		if err != nil {
			t.Fatal(err)
		}
		if out.Stored != nil && out.Stored.Applicable() {
			if _, err := Apply(env, out.Stored.ID, -1); err != nil {
				t.Fatal(err)
			}
			appliedAt = night
		}
	}
	if appliedAt == 0 && os.Getenv("TUNE_COST_APPLY") != "" {
		// No night applied a change: apply layer-crossings +1 by hand (proposed, logged and applied
		// through the store as tune apply does), so that the measured nights carry the watch's cost. It
		// carries the newest proposal's evidence, as a night's own proposal would: every counted flagged
		// task, which each later night's store reads meet again (a proposal without it hid that cost).
		applyCarrying(t, env, now, weights.LayerCrossings, 1, newestEvidence(t, env))
		appliedAt = night
	}
	// The measured night: one more night of tasks under the applied version.
	appendNight()
	st, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	size := st.Size()
	setup := fmt.Sprintf("%d live nights before the measured one; a change applied on night %d (0: none, the watch has nothing to judge)", night-1, appliedAt)
	t.Log(setup)

	// Each command three times (the page cache warm after the first); the median is reported.
	median := func(label, now string, args ...string) procStats {
		var runs []procStats
		for range 3 {
			s, _ := run(now, args...)
			runs = append(runs, s)
		}
		slices.SortFunc(runs, func(a, b procStats) int { return int(a.wall - b.wall) })
		t.Logf("%-40s %s", label, runs[1])
		return runs[1]
	}
	night1 := genlive.NightEnd(night).Add(time.Hour).Format(time.RFC3339)
	acc := median("accuracy --days 100000 (whole log)", night1, "accuracy", "--days", "100000", log)
	// The first nightly writes the night's state (a proposal, a report); running it again is the
	// idempotent re-run, which the median reports.
	first, out := run(night1, "nightly", "--logs", log)
	t.Logf("%-40s %s", "nightly, first run", first)
	again := median("nightly, same night again", night1, "nightly", "--logs", log)

	// The next night: a night's tasks appended, then nightly from the previous night's state.
	appendNight()
	second, _ := run(genlive.NightEnd(night).Add(time.Hour).Format(time.RFC3339), "nightly", "--logs", log)
	t.Logf("%-40s %s", "nightly, next night (one night appended)", second)

	ratio := func(a, b procStats) string {
		return fmt.Sprintf("time %.2f×, cpu %.2f×, peak RSS %.2f×", a.wall.Seconds()/b.wall.Seconds(), a.cpu.Seconds()/b.cpu.Seconds(), float64(a.rssKB)/float64(b.rssKB))
	}
	report := fmt.Sprintf("log %d MB (%d bytes); %s\naccuracy (whole log): %s\nnightly first: %s\nnightly again: %s\nnightly next night: %s\n"+
		"nightly first / accuracy: %s\nnightly next night / accuracy: %s\nfirst nightly: %s",
		mb, size, setup, acc, first, again, second, ratio(first, acc), ratio(second, acc), outcomeLine(out))
	t.Log("\n" + report)
	if p := os.Getenv("TUNE_COST_OUT"); p != "" {
		if err := os.WriteFile(p, []byte(report), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// newestEvidence is the evidence of the newest proposal in the store (none when there is none).
func newestEvidence(t *testing.T, env Env) []store.FlaggedTask {
	t.Helper()
	s, err := env.OpenStore()
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.NewestProposal()
	if err != nil {
		return nil // none yet
	}
	return p.Evidence
}

type procStats struct {
	wall, cpu time.Duration
	rssKB     int64
}

func (s procStats) String() string {
	return fmt.Sprintf("wall %6.3f s, cpu %6.3f s, peak RSS %6.1f MB", s.wall.Seconds(), s.cpu.Seconds(), float64(s.rssKB)/1024)
}

// outcomeLine is nightly's "outcome:" line (what the night decided), "" when there is none.
func outcomeLine(out string) string {
	for l := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(l, "outcome:") {
			return l
		}
	}
	return ""
}

// envMB reads a size in megabytes from the environment variable name (def when unset).
func envMB(tb testing.TB, name string, def int) int {
	mb := def
	if v := os.Getenv(name); v != "" {
		if _, err := fmt.Sscan(v, &mb); err != nil {
			tb.Fatalf("%s=%q: %v", name, v, err)
		}
	}
	return mb
}

// writeGeneratedLog writes mb megabytes of the project's trace generator (tracegen, what gentrace runs)
// to the project's .ldd/trace.log and returns its path.
func writeGeneratedLog(tb testing.TB, proj string, mb int) string {
	log := filepath.Join(proj, ".ldd", "trace.log")
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		tb.Fatal(err)
	}
	f, err := os.Create(log)
	if err != nil {
		tb.Fatal(err)
	}
	_, err = tracegen.Write(f, int64(mb)<<20, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatal(err)
	}
	return log
}
