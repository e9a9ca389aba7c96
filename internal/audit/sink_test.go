package audit

import (
	"reflect"
	"testing"

	"github.com/ldd-tools/tune/internal/transcript"
)

// TestStreamedEqualsHeld: the Aggregator and the RunBuilder fed by a scan's Sink (requests arrive as
// session groups complete) give exactly what they give on the held request list, for every breakdown.
func TestStreamedEqualsHeld(t *testing.T) {
	root := spotterDir + "/.."
	held := scan(t, transcript.Options{}, root)
	for _, by := range append([]GroupBy{""}, GroupBys...) {
		agg := NewAggregator(by)
		streamed := scan(t, transcript.Options{Sink: agg}, root)
		if got, want := agg.Report(), Aggregate(held.Requests, by); !reflect.DeepEqual(got, want) {
			t.Errorf("by %q: streamed\n%+v\nwant\n%+v", by, got.Totals, want.Totals)
		}
		if !reflect.DeepEqual(InputOf(streamed), InputOf(held)) {
			t.Errorf("by %q: input differs", by)
		}
	}
	rb := NewRunBuilder("a", []string{root})
	streamed := scan(t, transcript.Options{Sink: rb}, root)
	if got, want := rb.Runs(streamed), RunsOf(held, "a", []string{root}); !reflect.DeepEqual(got, want) {
		t.Errorf("runs differ:\n%+v\nwant\n%+v", got, want)
	}
}

// TestRemoveUndoesAdd: adding requests and removing some of them leaves exactly the report of the
// rest — totals, spend, groups (an emptied group disappears) and runs.
func TestRemoveUndoesAdd(t *testing.T) {
	reqs := scan(t, transcript.Options{}, spotterDir).Requests
	var kept, dropped []transcript.Request
	for i, r := range reqs {
		if i%3 == 0 || r.Session == "short" {
			dropped = append(dropped, r)
		} else {
			kept = append(kept, r)
		}
	}
	for _, by := range []GroupBy{"", BySession, ByDay, ByClass} {
		a := NewAggregator(by)
		rb := NewRunBuilder("", nil)
		for i := range reqs {
			a.Add(&reqs[i])
			rb.Add(&reqs[i])
		}
		for i := range dropped {
			a.Remove(&dropped[i])
			rb.Remove(&dropped[i])
		}
		got, want := a.Report(), Aggregate(kept, by)
		// The span is the one thing Remove keeps (a scan re-adds a wider version at once).
		got.First, got.Last = want.First, want.Last
		if !reflect.DeepEqual(got, want) {
			t.Errorf("by %q:\n%+v\nwant\n%+v", by, got, want)
		}
		res := &transcript.Result{Sessions: scan(t, transcript.Options{}, spotterDir).Sessions}
		keptRuns := NewRunBuilder("", nil)
		for i := range kept {
			keptRuns.Add(&kept[i])
		}
		if g, w := rb.Runs(res), keptRuns.Runs(res); !reflect.DeepEqual(g, w) {
			t.Errorf("runs:\n%+v\nwant\n%+v", g, w)
		}
	}
}
