package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/tools/genhistory"
)

// Warnings once (docs/decisions.md#warnings-once): a nightly run whose loop takes two steps listed each
// detection warning once per step in the EVAL report, left the reader's warnings out of it, and said an
// unknown signal twice on stderr (the reader's and the detector's words). The report's warnings are now
// the list the command printed, each line once.
func TestWarningsOnce(t *testing.T) {
	dir, w := bundledProject(t)
	h, _ := genhistory.TwoStep(1, &w)
	lines := strings.SplitAfter(string(h.Render()), "\n")
	// An unknown weights version and an unknown signal on the first meta line, and a stray line.
	lines[0] = strings.Replace(lines[0], " meta ", " meta  weights=v0099 ", 1)
	lines[0] = strings.Replace(lines[0], "signals=", "signals=made-up:+1,", 1)
	lines = append(lines[:2], append([]string{"stray words\n"}, lines[2:]...)...)
	t.Chdir(dir)
	if err := os.WriteFile("two.log", []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	// Since issue 28 the two-step history converges in one +2; its deep twin keeps the loop going.
	if err := os.WriteFile("deep.log", genhistory.DeepStep(1, &w).Render(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := storeRun(t, "weights", "fixtures", nil, "--reports-dir", "reports", "nightly", "--logs", "two.log", "--logs", "deep.log")
	if code != 0 {
		t.Fatalf("nightly: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "\n| 2    | ") {
		t.Fatalf("the loop should take two steps (each re-detects the window):\n%s", out)
	}
	printed := map[string]int{}
	for _, l := range strings.Split(errOut, "\n") {
		if r, ok := strings.CutPrefix(l, "tune: warning: "); ok {
			printed[r]++
		}
	}
	for _, want := range []string{`two.log:1: signals: "made-up" is not a scorer signal`,
		"two.log:1: task 2026-05-03T13:00:00.000000Z: weights=v0099 is not in the store; using the active v0001",
		"two.log:3: does not start with a timestamp"} {
		n := 0
		for l, c := range printed {
			if strings.HasPrefix(l, want) {
				n += c
			}
		}
		if n != 1 {
			t.Errorf("stderr says %q %d times, want once:\n%s", want, n, errOut)
		}
	}
	if strings.Contains(errOut, "made-up\" in signals=") {
		t.Errorf("the detector repeats the reader's unknown-signal warning:\n%s", errOut)
	}
	report := regexp.MustCompile(`report: (\S+\.md)`).FindStringSubmatch(out)
	if report == nil {
		t.Fatalf("nightly wrote no report:\n%s", out)
	}
	md, err := os.ReadFile(report[1])
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(md), "## Warnings\n\n")
	if !ok {
		t.Fatalf("report has no warnings:\n%s", md)
	}
	section, _, _ = strings.Cut(section, "\n\n")
	listed := map[string]int{}
	for _, l := range strings.Split(section, "\n") {
		listed[strings.TrimPrefix(l, "- ")]++
	}
	for l, n := range listed {
		if n != 1 {
			t.Errorf("report lists %q %d times", l, n)
		}
		if printed[l] == 0 {
			t.Errorf("report lists %q, which the command did not print", l)
		}
	}
	for l := range printed {
		if listed[l] == 0 {
			t.Errorf("the command printed %q, which the report leaves out", l)
		}
	}
}
