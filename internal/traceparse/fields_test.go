package traceparse_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/ldd-tools/tune/internal/traceparse"
)

// sameJSONAsMap checks that Fields encode exactly as the map[string]string they replaced, with and
// without HTML escaping (tune trace --json uses an encoder without it).
func sameJSONAsMap(t *testing.T, f traceparse.Fields) {
	t.Helper()
	m := f.Map()
	for _, escapeHTML := range []bool{true, false} {
		enc := func(v any) string {
			var buf bytes.Buffer
			e := json.NewEncoder(&buf)
			e.SetEscapeHTML(escapeHTML)
			e.SetIndent("", "  ")
			if err := e.Encode(v); err != nil {
				t.Fatal(err)
			}
			return buf.String()
		}
		if got, want := enc(struct{ F traceparse.Fields }{f}), enc(struct{ F map[string]string }{m}); got != want {
			t.Errorf("escapeHTML=%v:\n got %s\nwant %s", escapeHTML, got, want)
		}
	}
}

func TestFieldsReadAsTheMapTheyReplace(t *testing.T) {
	line := `2026-04-22T12:00:00Z  inner  k=1  b="<a & b>"  a='x\y'  b=2  z="q\"uote"  l=a` + "\u2028" + `b  k=3  empty=  tab="a	b"` + "\n"
	res := parseString(t, line)
	got := entries(res)
	if len(got) != 1 {
		t.Fatalf("entries %+v", got)
	}
	f := got[0].Fields
	want := map[string]string{"k": "3", "b": "2", "a": `x\y`, "z": `q"uote`, "l": "a\u2028b", "empty": "", "tab": "a\tb"}
	if !maps.Equal(f.Map(), want) || f.Len() != len(want) {
		t.Errorf("fields %v, want %v", f.Map(), want)
	}
	var keys []string
	for k := range f.All() {
		keys = append(keys, k)
	}
	if order := []string{"k", "b", "a", "z", "l", "empty", "tab"}; !slices.Equal(keys, order) {
		t.Errorf("order %q, want first appearance %q", keys, order)
	}
	if v, ok := f.Get("empty"); !ok || v != "" {
		t.Errorf("Get(empty) = %q, %v", v, ok)
	}
	if v, ok := f.Get("missing"); ok || v != "" || f.Value("missing") != "" {
		t.Errorf("Get(missing) = %q, %v", v, ok)
	}
	sameJSONAsMap(t, f)
	sameJSONAsMap(t, traceparse.Fields{})
	sameJSONAsMap(t, traceparse.FieldsFrom(map[string]string{"\x01<": "\xff", "é": "\u2029"}))

	var back traceparse.Fields
	js, _ := json.Marshal(f)
	if err := json.Unmarshal(js, &back); err != nil || !reflect.DeepEqual(back.Map(), want) {
		t.Errorf("round trip %v (%v)", back.Map(), err)
	}
}
