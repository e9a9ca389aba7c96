package transcript

import (
	"testing"
)

// A token count no request can hold (2^63-1) drops its line as invalid-usage instead of wrapping the
// totals (two such counts summed to 28) or turning a cost negative (docs/decisions.md#hostile-files-issue-25).
func TestHugeTokenCountsDropTheLine(t *testing.T) {
	huge := 1<<63 - 1
	res := scanTree(t, daily, map[string]string{"projects/p/s.jsonl": encode(t,
		assistant("m1", "r1", 0, usage(huge, 1, 0, 0)),
		assistant("m2", "r2", 1, usage(huge, 1, 0, 0)),
		assistant("m3", "r3", 2, usage(1, 1, huge, 0)),
		assistant("m4", "r4", 3, usage(MaxTokens, 1, 0, 0)),
	)})
	if len(res.Requests) != 1 || res.Requests[0].InputTokens != MaxTokens {
		t.Fatalf("requests %+v", res.Requests)
	}
	if res.Skipped[ReasonInvalidUsage] != 3 {
		t.Errorf("skipped %v, want 3 invalid-usage", res.Skipped)
	}
}
