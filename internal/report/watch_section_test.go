package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/testutil"
)

// TestWatchSectionGolden: the EVAL report's Watch section — the verdict, the tests with their nulls and
// e-values, the table of moved tasks (a title redacted, the rows cut with a count) and the tasks left
// uncounted.
func TestWatchSectionGolden(t *testing.T) {
	f := &WatchFinding{Version: "v0002", Parent: "v0001", Changes: []string{"contract-rule-hit +1"}, Verdict: "not helping",
		Reason: "14 of the 20 task(s) the change lifted off the low side still regressed", Proposal: "p-0123456789ab",
		Tests: []WatchTest{
			{Name: "not helping", Events: "14/20", Null: 0.2576, Alt: 0.5909, E: 126, Threshold: 40, Basis: "where the change stops paying: 12/20 while low less its break-even excess 0.33 (20 level(s) raised before)"},
			{Name: "harmful: overkill", Events: "0/0", Null: 0.6, E: 1, Threshold: 40, NeedMore: 11, Basis: "L3/L4 overkill 0/0 before, + 10 points"},
		},
		Moved: []WatchMoved{
			{MetaTimestamp: "2026-11-02T00:00:00Z", Task: "rotate the deploy key " + secretKey, Levels: "L1 → L2", Test: "not helping", Against: "regression_followed=true"},
			{MetaTimestamp: "2026-11-02T01:00:00Z", Task: "refund rounding", Levels: "L1 → L2", Test: "not helping"},
		},
		MovedMore: 18, NotCounted: "3 override-down"}
	var b bytes.Buffer
	red := &redactions{}
	proposalWatch(&b, f, red)
	testutil.Golden(t, "proposal/watch-section.md", b.Bytes())
	if strings.Contains(b.String(), secretKey) || red.n != 1 {
		t.Errorf("the title was not redacted (%d redactions)", red.n)
	}
}
