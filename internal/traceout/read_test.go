package traceout

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/traceparse"
)

// The JSON document of a whole-log read keeps at most traceparse.MaxWarnings warnings, however many
// lines of garbage the log holds; the counts still count every one.
func TestTraceKeepsBoundedWarnings(t *testing.T) {
	var b strings.Builder
	b.WriteString("2026-05-01T00:00:00Z  meta  L2/deliberate  task=noisy\n")
	n := traceparse.MaxWarnings + 500
	for i := range n {
		fmt.Fprintf(&b, "garbage %d\n", i)
	}
	log := filepath.Join(t.TempDir(), "noisy.log")
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var doc strings.Builder
	res, err := Read(Options{Logs: []string{log}, LastSet: true, KeepWarnings: true, MaxLine: 64}, NewTaskJSON(&doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != traceparse.MaxWarnings || res.NWarn != n || res.Skipped != n || res.Lines.Skipped != n {
		t.Fatalf("%d warnings kept, %d counted, %d skipped, lines %+v", len(res.Warnings), res.NWarn, res.Skipped, res.Lines)
	}
	if last := res.Warnings[len(res.Warnings)-1]; !strings.Contains(last.Reason, "then 500 more warnings, 500 of them for skipped lines") {
		t.Errorf("last warning %+v", last)
	}
}
