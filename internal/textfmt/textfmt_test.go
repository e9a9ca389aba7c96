package textfmt

import (
	"math"
	"testing"
)

func TestPluralVariants(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Plural(0, "task"), "0 tasks"},
		{Plural(1, "task"), "1 task"},
		{Plural(12345, "task"), "12345 tasks"},
		{PluralGrouped(1, "request"), "1 request"},
		{PluralGrouped(12345, "request"), "12,345 requests"},
		{Form(1, "entry", "entries"), "entry"},
		{Form(2, "entry", "entries"), "entries"},
		{Form(0, "string was", "strings were"), "strings were"},
		{Thousands(0), "0"},
		{Thousands(999), "999"},
		{Thousands(1000), "1,000"},
		{Thousands(-1234567), "-1,234,567"},
		{Thousands(math.MinInt64), "-9,223,372,036,854,775,808"},
		{ThousandsUint(math.MaxUint64), "18,446,744,073,709,551,615"},
		{ThousandsUint(12), "12"},
		{Dash(""), "—"},
		{Dash("x"), "x"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
