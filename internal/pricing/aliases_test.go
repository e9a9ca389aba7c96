package pricing

import (
	"maps"
	"strings"
	"testing"
)

// TestParseAliases: the forms ccusage 20.0.24 accepts in CCUSAGE_MODEL_ALIASES, checked against its
// executable (docs/decisions.md#cost-and-date-views-in-the-audit-issue-13).
func TestParseAliases(t *testing.T) {
	for _, c := range []struct {
		in   string
		want map[string]string
	}{
		{"", nil},
		{"a=b,c=d", map[string]string{"a": "b", "c": "d"}},
		{"a=b;c=d", map[string]string{"a": "b", "c": "d"}},
		{" a = b , c=d ", map[string]string{"a": "b", "c": "d"}},
		{`{"a":"b","c":"d"}`, map[string]string{"a": "b", "c": "d"}},
		{`{"a":"b",`, nil}, // not JSON: nothing
		{`{"a":5}`, nil},   // not strings: nothing
		{"a=b=c", map[string]string{"a": "b=c"}},
		{"a=,=b,c", nil},
		{"a:b", nil},
		{"a=b,a=c", map[string]string{"a": "c"}},
		{"A=b", map[string]string{"A": "b"}},
	} {
		if got := ParseAliases(c.in); !maps.Equal(got, c.want) {
			t.Errorf("ParseAliases(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestAliasNamesAndPrices: an alias renames a model (and its -fast label), prices a model the table
// lacks, and leaves a priced model at its own price.
func TestAliasNamesAndPrices(t *testing.T) {
	tab := Embedded().WithAliases(ParseAliases("claude-mystery-9=claude-sonnet-4-5,claude-haiku-4-5=claude-opus-4-6,x-fast=y"))
	for label, want := range map[string]string{
		"claude-mystery-9": "claude-sonnet-4-5", "claude-mystery-9-fast": "claude-sonnet-4-5-fast",
		"x-fast": "y", "x": "x", "claude-opus-4-6": "claude-opus-4-6",
	} {
		if got := tab.Name(label); got != want {
			t.Errorf("Name(%q) = %q, want %q", label, got, want)
		}
	}
	sonnet, _ := Embedded().Lookup("claude-sonnet-4-5")
	if p, ok := tab.Lookup("claude-mystery-9"); !ok || p != sonnet {
		t.Errorf("alias price: %v %v, want sonnet's %v", p, ok, sonnet)
	}
	haiku, _ := Embedded().Lookup("claude-haiku-4-5")
	if p, _ := tab.Lookup("claude-haiku-4-5"); p != haiku {
		t.Errorf("a priced model keeps its price: %v, want %v", p, haiku)
	}
	if _, ok := Embedded().Lookup("claude-mystery-9"); ok {
		t.Error("the embedded table itself must not know claude-mystery-9")
	}
	if !strings.Contains(tab.Describe(""), "3 model aliases from CCUSAGE_MODEL_ALIASES") {
		t.Errorf("Describe: %s", tab.Describe(""))
	}
}

func FuzzParseAliases(f *testing.F) {
	for _, s := range []string{"a=b,c=d", " a = b ; c=d ", `{"a":"b"}`, `{"a":5}`, "a=b=c", "=,;", `{"":""}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for k, v := range ParseAliases(s) {
			if k == "" || v == "" || k != strings.TrimSpace(k) || v != strings.TrimSpace(v) {
				t.Fatalf("%q: alias %q=%q", s, k, v)
			}
		}
	})
}
