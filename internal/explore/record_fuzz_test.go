package explore

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// FuzzRecordOf: whatever a meta line says of a draw, RecordOf never panics, and a record it accepts
// is one tune score could have written: a known arm, a level below L4 that the task ran at (control) or
// one below it (raised, dispatch=explore), and a share, when given, in (0, MaxShare].
func FuzzRecordOf(f *testing.F) {
	for _, meta := range []string{
		"L1/diagnostic  dispatch=auto  task=x  loops=inner  explore=control  explore_level=L1  explore_share=0.2",
		"L2/deliberate  dispatch=explore  task=x  loops=inner  explore=raised  explore_level=L1  explore_share=0.05",
		"L3/structural  creativity=standard  dispatch=explore  task=x  loops=design,inner  explore=raised  explore_level=L2",
		"L1/diagnostic  dispatch=auto  task=x  loops=inner  explore=raised  explore_level=L4  explore_share=NaN",
		"L1/diagnostic  dispatch=bump  task=x  explore=both  explore_level=L1  explore_share=1e309",
		"L1/diagnostic  dispatch=auto  task=x",
	} {
		f.Add(meta)
	}
	f.Fuzz(func(t *testing.T, meta string) {
		if strings.ContainsAny(meta, "\r\n") {
			return
		}
		res, err := traceparse.Parse(strings.NewReader("2026-11-01T10:00:00.000000Z  meta  "+meta+"\n"), "f.log")
		if err != nil || len(res.Tasks) != 1 {
			return
		}
		task := &res.Tasks[0]
		rec, ok, err := RecordOf(task)
		if !ok || err != nil {
			return
		}
		ran, perr := weights.ParseLevel(task.Level)
		switch {
		case perr != nil || rec.Level >= weights.L4:
			t.Fatalf("%q: accepted with level %q and explore_level %v", meta, task.Level, rec.Level)
		case rec.Arm == Raised && (task.Dispatch != "explore" || ran != rec.Level+1):
			t.Fatalf("%q: a raised record at %s with dispatch %q", meta, task.Level, task.Dispatch)
		case rec.Arm == Control && (task.Dispatch != "auto" || ran != rec.Level):
			t.Fatalf("%q: a control record at %s with dispatch %q", meta, task.Level, task.Dispatch)
		case rec.Arm != Raised && rec.Arm != Control:
			t.Fatalf("%q: arm %q accepted", meta, rec.Arm)
		}
		if rec.Share != "" {
			v, err := strconv.ParseFloat(rec.Share, 64)
			if err != nil || !(v > 0 && v <= MaxShare) {
				t.Fatalf("%q: share %q accepted", meta, rec.Share)
			}
		}
	})
}
