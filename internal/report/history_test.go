package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/testutil"
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
