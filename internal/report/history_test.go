package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/accuracy"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/traceparse"
)

func TestHistoryGolden(t *testing.T) {
	in := sampleHistory()
	files, err := RenderHistory(in)
	if err != nil {
		t.Fatal(err)
	}
	base := HistoryBase(in)
	want := []string{base + ".md", base + "-loss.svg", base + "-weights.svg"}
	if len(files) != len(want) {
		t.Fatalf("got %d files, want %v", len(files), want)
	}
	for i, f := range files {
		if f.Name != want[i] {
			t.Errorf("file %d is %s, want %s", i, f.Name, want[i])
		}
		// The hash in the name changes with the input; the goldens are stored under fixed names.
		testutil.Golden(t, "history/"+strings.Replace(f.Name, base, "history", 1), f.Data)
	}
	md := string(files[0].Data)
	if bytes.Contains(files[0].Data, []byte("hunter2")) {
		t.Error("a password in a version reason was written")
	}
	for _, s := range []string{"**v0004** (active)", "v0003 → v0004 (= v0002)", "contract-rule-hit 3 → 2", "| ambiguous | contract-rule-hit |"} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	svg := string(files[1].Data)
	for _, s := range []string{"accepted (half step)", "reverted", "rolled back (tune rollback)", "applied (new version)", "active weights"} {
		if !strings.Contains(svg, ">"+s+"<") {
			t.Errorf("loss chart lacks legend entry %q", s)
		}
	}
}

func TestHistoryNameFollowsInput(t *testing.T) {
	a := sampleHistory()
	b := sampleHistory()
	if HistoryBase(a) != HistoryBase(b) {
		t.Fatal("equal inputs, different names")
	}
	b.Entries = b.Entries[:len(b.Entries)-1]
	if HistoryBase(a) == HistoryBase(b) {
		t.Fatal("a new log entry must give a new report name")
	}
}

func TestHistoryFreshStore(t *testing.T) {
	in := HistoryReport{Active: 1, Versions: sampleHistory().Versions[:1]}
	files, err := RenderHistory(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("a fresh store has nothing to chart, got %d files", len(files))
	}
	md := string(files[0].Data)
	for _, s := range []string{"_No measured attempt in the log yet._", "_The evolution log is empty._", "_No weight has changed since v0001._"} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q:\n%s", s, md)
		}
	}
}

// calibrationLog is a trace log of closed tasks under three weights versions with a known
// mis-dispatch pattern: per version v and level, ten tasks of which mis[v][level] are underkill
// (L0/L1: failed) or overkill (L3/L4: complete in one iteration at loss 0); v0003 ran no task at L4.
func calibrationLog() string {
	mis := map[int][5]int{1: {4, 3, 0, 1, 0}, 2: {1, 1, 0, 3, 5}, 3: {0, 2, 0, 2, -1}}
	names := [5]string{"reflex", "diagnostic", "deliberate", "structural", "method"}
	var b strings.Builder
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for v := 1; v <= 3; v++ {
		for lvl := range 5 {
			if mis[v][lvl] < 0 {
				continue
			}
			for i := range 10 {
				at = at.Add(time.Hour)
				ts := at.Format(time.RFC3339)
				fmt.Fprintf(&b, "%s  meta  L%d/%s  dispatch=auto  weights=v%04d  task=\"v%d L%d task %d\"  loops=inner\n", ts, lvl, names[lvl], v, v, lvl, i)
				bad := i < mis[v][lvl]
				k, loss, terminal := 2, "0.300", "complete"
				switch {
				case bad && lvl < 2:
					terminal = "failed"
				case bad:
					k, loss = 1, "0.000"
				}
				for j := 1; j <= k; j++ {
					fmt.Fprintf(&b, "%s  inner  k=%d  skill=s  action=a  loss=%s\n", ts, j, loss)
				}
				fmt.Fprintf(&b, "%s  inner  close  terminal=%s  loss_final=%s\n", ts, terminal, loss)
			}
		}
	}
	return b.String()
}

// sampleHistoryAccuracy is sampleHistory with the accuracy of calibrationLog by weights version.
func sampleHistoryAccuracy() HistoryReport {
	res, err := traceparse.Parse(strings.NewReader(calibrationLog()), "trace.log")
	if err != nil {
		panic(err)
	}
	in := sampleHistory()
	b := accuracy.NewBuilder(accuracy.Options{Days: 36500, Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)})
	for i := range res.Tasks {
		b.Add(&res.Tasks[i])
	}
	in.Accuracy = b.Report().ByWeightsVersion
	return in
}

// TestHistoryAccuracyGolden: the accuracy section and its calibration chart (golden SVG, byte for
// byte: the charts are deterministic) for three versions with known rates.
func TestHistoryAccuracyGolden(t *testing.T) {
	in := sampleHistoryAccuracy()
	render := func() []File {
		files, err := RenderHistory(in)
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	files := render()
	base := HistoryBase(in)
	if len(files) != 4 || files[3].Name != base+"-calibration.svg" {
		t.Fatalf("files %v, want the report, two charts and %s-calibration.svg", names(files), base)
	}
	testutil.Golden(t, "history/history-accuracy.md", files[0].Data)
	testutil.Golden(t, "history/history-calibration.svg", files[3].Data)
	if again := render(); !bytes.Equal(again[3].Data, files[3].Data) {
		t.Error("the calibration chart differs between two renders of the same input")
	}
	md := string(files[0].Data)
	for _, s := range []string{
		"| v0001 | 50 | 50 | 4/10 (40%, 17–69%) | 3/10 (30%, 11–60%) | 1/10 (10%, 2–40%) | 0/10 (0%, 0–28%) | 7/50 (14%, 7–26%) | 1/50 (2%, 0–10%) |",
		"| v0003 | 40 | 40 | 0/10 (0%, 0–28%) | 2/10 (20%, 6–51%) | 2/10 (20%, 6–51%) | — |",
		"calibration.svg)",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	// One legend entry and one line per version; one error bar per point (v0003 has no L4 point).
	svg := string(files[3].Data)
	for _, v := range []string{"v0001", "v0002", "v0003"} {
		if !strings.Contains(svg, ">"+v+"<") {
			t.Errorf("calibration chart lacks legend entry %s", v)
		}
	}
}

func names(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Name)
	}
	return out
}
