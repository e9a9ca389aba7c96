package evolve

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/traceparse"
)

// A log's task warnings are listed up to MaxTaskWarnings of a kind, then counted in one warning about
// the log (docs/decisions.md#warnings-once), and a detection that takes up a log from a state made at
// any point, before or after the cap, lists and counts them as a read of the whole log does.
func TestTaskWarningsListedThenCounted(t *testing.T) {
	w := refWeights(t)
	tasks := parseLog(t, "a.log", []byte(mixedLog(&w, 5, 400))).Tasks
	r := &Resolver{Active: &w}
	all := 0
	for i := range tasks {
		if tasks[i].Level != "" {
			_, ws := resolveTask(&tasks[i], r)
			all += len(ws)
		}
	}
	whole := Detect(DetectInput{Tasks: tasks, Resolver: *r})
	if all <= MaxTaskWarnings+5 || len(whole.Warnings) != MaxTaskWarnings+1 {
		t.Fatalf("setup: %d task warnings, the detection lists %d", all, len(whole.Warnings))
	}
	for i, x := range whole.Warnings[:MaxTaskWarnings] {
		if x.Line == 0 || !strings.Contains(x.Reason, "but its signals sum to") || i > 0 && x.Line <= whole.Warnings[i-1].Line {
			t.Errorf("listed warning %d: %+v", i, x)
		}
	}
	want := fmt.Sprintf("%d more tasks whose recorded level is not the bucket of its signals (%d in all; the first %d are listed)", all-MaxTaskWarnings, all, MaxTaskWarnings)
	if last := whole.Warnings[MaxTaskWarnings]; last != (Warning{Source: "a.log", Reason: want}) {
		t.Errorf("summary %+v, want %q", last, want)
	}
	for _, k := range []int{45, 60, 300} { // a state with fewer than the cap listed, about the cap, past it (45: a state holds the last WindowSize tasks and heldContext counted ones, so 39 would hold them all)
		prefix := Detect(DetectInput{Tasks: tasks[:k], Resolver: *r})
		data, err := json.Marshal(prefix.States()[0])
		if err != nil {
			t.Fatal(err)
		}
		var st LogState
		if err := json.Unmarshal(data, &st); err != nil || st.Check() != nil {
			t.Fatalf("prefix %d: the state does not come back: %v %v", k, err, st.Check())
		}
		var rest []traceparse.Task
		for _, x := range tasks {
			if x.Offset >= st.Offset {
				rest = append(rest, x)
			}
		}
		got := Detect(DetectInput{Tasks: rest, Resolver: *r, Resume: map[string]*LogState{"a.log": &st}})
		if !reflect.DeepEqual(got.Warnings, whole.Warnings) || got.Accumulated != whole.Accumulated || len(rest) >= len(tasks) {
			t.Errorf("prefix %d: from the state (%d tasks read) %d warnings %+v, %+v; whole read %d, %+v", k, len(rest), len(got.Warnings), got.Warnings, got.Accumulated, len(whole.Warnings), whole.Accumulated)
		}
	}
}
