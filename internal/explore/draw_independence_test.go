package explore

import (
	"math"
	"testing"
	"time"
)

// The draws of consecutive tasks are independent of each other even when their meta timestamps differ
// by the writer's last digit only (one microsecond) and the title repeats: the share raised after a
// raised task and after a control task are both the share, within 99.9 % binomial bounds
// (docs/decisions.md#fourth-review-the-watch-state-and-explore).
func TestDrawsOfConsecutiveTasksAreIndependent(t *testing.T) {
	const n, share = 200_000, 0.2
	start := time.Date(2026, 12, 3, 22, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		step  time.Duration
		title func(i int) string
	}{
		{"same title, 1 µs apart", time.Microsecond, func(int) string { return "fix the bug in the parser" }},
		{"same title, 1 s apart", time.Second, func(int) string { return "fix the bug in the parser" }},
		{"titles differing in one byte, same instant", 0, func(i int) string {
			return "fix the bug in the parser " + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26)) + string(rune('a'+i/17576%26))
		}},
	} {
		var after [2][2]int // [previous raised][this raised]
		prev := -1
		for i := range n {
			stamp := start.Add(time.Duration(i) * c.step).Format("2006-01-02T15:04:05.000000Z")
			cur := 0
			if Unit(stamp, c.title(i)) < share {
				cur = 1
			}
			if prev >= 0 {
				after[prev][cur]++
			}
			prev = cur
		}
		for p := range 2 {
			m := after[p][0] + after[p][1]
			got := float64(after[p][1]) / float64(m)
			bound := 3.29 * math.Sqrt(share*(1-share)/float64(m))
			t.Logf("%s: after a %s task, %.4f raised of %d (share %.2f ± %.4f)", c.name, []string{"control", "raised"}[p], got, m, share, bound)
			if math.Abs(got-share) > bound {
				t.Errorf("%s: after a %s task %.4f of %d raised, want %.2f ± %.4f", c.name, []string{"control", "raised"}[p], got, m, share, bound)
			}
		}
	}
}
