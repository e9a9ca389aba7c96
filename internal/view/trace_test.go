package view

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/ldd-tools/tune/internal/traceparse"
)

// TestTraceRowsKeepsTheLastRows: a whole-log text view keeps a ring of MaxTraceRows rows and draws the
// last tasks, oldest first, saying how many came before; below the cap it draws every task.
func TestTraceRowsKeepsTheLastRows(t *testing.T) {
	lineCell := regexp.MustCompile(`(?m)^\|\s+(\d+)\s+\|`)
	for _, n := range []int{3, MaxTraceRows, MaxTraceRows + 1, 2*MaxTraceRows + 537} {
		r := NewTraceRows(false)
		for i := 1; i <= n; i++ {
			task := traceparse.Task{Line: i, Level: "L1", Title: fmt.Sprintf("task %d", i), Closed: true}
			if err := r.Task(&task); err != nil {
				t.Fatal(err)
			}
		}
		if len(r.rows) > MaxTraceRows || r.Tasks() != n {
			t.Fatalf("n=%d: %d rows kept, %d tasks counted", n, len(r.rows), r.Tasks())
		}
		var out bytes.Buffer
		if err := r.Render(&out); err != nil {
			t.Fatal(err)
		}
		var lines []int
		for _, m := range lineCell.FindAllStringSubmatch(out.String(), -1) {
			v, _ := strconv.Atoi(m[1])
			lines = append(lines, v)
		}
		first := max(1, n-MaxTraceRows+1)
		if len(lines) != n-first+1 {
			t.Fatalf("n=%d: %d rows drawn, want %d", n, len(lines), n-first+1)
		}
		for i, v := range lines {
			if v != first+i {
				t.Fatalf("n=%d: row %d is task %d, want %d (the last tasks in order)", n, i, v, first+i)
			}
		}
		head := fmt.Sprintf("the last %d of %d tasks", MaxTraceRows, n)
		if got := bytes.Contains(out.Bytes(), []byte(head)); got != (n > MaxTraceRows) {
			t.Errorf("n=%d: %q said: %v", n, head, got)
		}
	}
}
