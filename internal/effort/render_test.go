package effort_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/effort"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/view"
)

// tune effort's rendering lives in internal/view, which imports this package: these tests render
// through it from package effort_test, on this package's corpora and goldens (export_test.go hands
// them the helpers).

// TestGolden locks the table view and the JSON of the whole report on the design corpus.
func TestGolden(t *testing.T) {
	o, census := effort.ObserveDesign(t, true, 0)
	rep := effort.NewReport("repo", census)
	rep.AddObserved(o)
	var text, js bytes.Buffer
	if err := view.EffortText(&text, rep); err != nil {
		t.Fatal(err)
	}
	if err := view.EffortJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "design.txt", text.Bytes())
	testutil.Golden(t, "design.json", js.Bytes())
	// At 80 and 100 columns no line is wider (docs/decisions.md#table-width); the shift table drops
	// time, paired and from before it goes vertical, and its call keeps the line number.
	for _, w := range testutil.TermWidths {
		var b bytes.Buffer
		if err := view.EffortText(termtable.WithWidth(&b, w), rep); err != nil {
			t.Fatal(err)
		}
		testutil.GoldenFit(t, "design.txt", w, b.Bytes())
	}
}

// TestJSONFields locks the field names of --json, the contract scripts rely on (issue 14's shape).
func TestJSONFields(t *testing.T) {
	o, census := effort.ObserveDesign(t, true, 0)
	rep := effort.NewReport("repo", census)
	rep.AddObserved(o)
	var js bytes.Buffer
	if err := view.EffortJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"":               {"agents", "by_level", "by_phase", "pins", "reasserts", "repo", "runs", "sessions", "settings", "shifts", "stuck_sessions", "subagent_shifts", "transcripts", "unpinned", "warnings"},
		"reasserts":      {"by", "by_verdict", "file", "level", "line", "message_id", "nested", "nested_level", "orchestrator", "requests", "session", "timestamp", "verdict"},
		"pins":           {"effort", "file", "kind", "line", "name"},
		"shifts":         {"file", "from", "line", "message_id", "note", "observed", "observed_at", "paired", "session", "skill", "timestamp", "to", "took_effect", "verdict"},
		"agents":         {"agent", "conformant", "evidence", "observed", "pinned", "runs", "verdict"},
		"runs":           {"agent", "agent_id", "dispatched", "file", "line", "note", "observed", "pinned", "progress_copies", "session", "shifts", "source", "timestamp", "verdict"},
		"stuck_sessions": {"entrypoint", "level", "reason", "session", "shifts"},
		"by_level":       {"cost_usd", "key", "levels", "output_tokens", "requests", "share", "thinking_tokens", "weighted_spend"},
		"transcripts":    {"bytes", "files", "requests", "sessions", "skipped", "with_effort"},
	}
	keysOf := func(raw json.RawMessage) []string {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			var list []map[string]json.RawMessage
			if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
				t.Fatalf("%s: not an object or a non-empty list", raw)
			}
			// The union over the list: optional fields show up on some elements.
			m = map[string]json.RawMessage{}
			for _, e := range list {
				for k, v := range e {
					m[k] = v
				}
			}
		}
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	for field, keys := range want {
		raw := js.Bytes()
		if field != "" {
			raw = doc[field]
		}
		if got := keysOf(raw); !reflect.DeepEqual(got, keys) {
			t.Errorf("%q keys %v, want %v", field, got, keys)
		}
	}
}

// TestSummaryCountsOverridden: the summary counts a shift another call of its message overrode.
func TestSummaryCountsOverridden(t *testing.T) {
	rep := effort.NewReport("repo", effort.DesignCensus(t))
	rep.AddObserved(effort.SeveralShifts(t))
	var text bytes.Buffer
	if err := view.EffortText(&text, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "overridden 1") {
		t.Errorf("the summary does not count the overridden shift:\n%s", text.String())
	}
}
