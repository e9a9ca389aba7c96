package app

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/traceparse/tracegen"
)

// TestNightCost is issue 28's cost measurement (docs/live-harness.md#cost), run only with
// TUNE_HARNESS=cost: it builds the two binaries, writes a 256 MB log with the project's trace generator
// (internal/traceparse/tracegen, as `gentrace` does; TUNE_COST_MB changes the size) into a temporary
// project, and times whole processes: a whole-log `tune accuracy`, a first `tune nightly`, and a second
// nightly after a night's tasks are appended. It reports times and peak RSS as ratios; it asserts only
// that the commands ran, never a time (a shared machine's timings are no test).
func TestNightCost(t *testing.T) {
	if os.Getenv("TUNE_HARNESS") != "cost" {
		t.Skip("TUNE_HARNESS=cost measures the cost of a night on a 256 MB log")
	}
	mb := 256
	if v := os.Getenv("TUNE_COST_MB"); v != "" {
		if _, err := fmt.Sscan(v, &mb); err != nil {
			t.Fatalf("TUNE_COST_MB=%q: %v", v, err)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	for _, c := range []string{"tune", "tune-full"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(bin, c), "./cmd/"+c)
		cmd.Dir, cmd.Env = testutil.RepoRoot(), append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", c, err, out)
		}
	}
	proj := filepath.Join(dir, "project")
	run := func(now string, args ...string) (procStats, string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "tune"), args...)
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
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		return procStats{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), rssKB: ru.Maxrss}, out.String()
	}
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	run("2027-01-02T00:00:00Z", "init", proj)
	log := filepath.Join(proj, ".ldd", "trace.log")
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	size, err := tracegen.Write(f, int64(mb)<<20, tracegen.DefaultTail)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

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
	night1 := "2027-01-02T00:00:00Z"
	acc := median("accuracy --days 100000 (whole log)", night1, "accuracy", "--days", "100000", log)
	// The first nightly writes the night's state (a proposal, a report); running it again is the
	// idempotent re-run, which the median reports.
	first, out := run(night1, "nightly", "--logs", log)
	t.Logf("%-40s %s", "nightly, first run", first)
	again := median("nightly, same night again", night1, "nightly", "--logs", log)

	// The next night: a night's tasks appended, then nightly from the previous night's state.
	var b []byte
	for j := range 20 {
		b = tracegen.AppendTask(b, uint64(1<<41+j), time.Date(2027, 1, 2, 8, j, 0, 0, time.UTC))
	}
	lf, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lf.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := lf.Close(); err != nil {
		t.Fatal(err)
	}
	second, _ := run("2027-01-03T00:00:00Z", "nightly", "--logs", log)
	t.Logf("%-40s %s", "nightly, next night (20 new tasks)", second)

	ratio := func(a, b procStats) string {
		return fmt.Sprintf("time %.2f×, cpu %.2f×, peak RSS %.2f×", a.wall.Seconds()/b.wall.Seconds(), a.cpu.Seconds()/b.cpu.Seconds(), float64(a.rssKB)/float64(b.rssKB))
	}
	report := fmt.Sprintf("log %d MB (%d bytes)\naccuracy (whole log): %s\nnightly first: %s\nnightly again: %s\nnightly next night: %s\n"+
		"nightly first / accuracy: %s\nnightly next night / accuracy: %s\nfirst nightly: %s",
		mb, size, acc, first, again, second, ratio(first, acc), ratio(second, acc), outcomeLine(out))
	t.Log("\n" + report)
	if p := os.Getenv("TUNE_COST_OUT"); p != "" {
		if err := os.WriteFile(p, []byte(report), 0o644); err != nil {
			t.Error(err)
		}
	}
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
