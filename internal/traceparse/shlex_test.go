package traceparse

import (
	"slices"
	"testing"
)

// The expected tokens were produced by Python 3.11's shlex.split(s, posix=True); nil means shlex raised
// ValueError. (A differential run over 200,000 random strings found no difference.)
func TestSplitPOSIXMatchesPythonShlex(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"a b", []string{"a", "b"}},
		{"a\"\"b", []string{"ab"}},
		{"\"\"", []string{""}},
		{"''", []string{""}},
		{"a\\", nil},
		{"\"a\\x\"", []string{"a\\x"}},
		{"\"a\\\"b\"", []string{"a\"b"}},
		{"\"a\\\\b\"", []string{"a\\b"}},
		{"'a\\b'", []string{"a\\b"}},
		{"a\\ b", []string{"a b"}},
		{"a'b c'd", []string{"ab cd"}},
		{"\"x y\"z", []string{"x yz"}},
		{"k=1\u00a0l=2", []string{"k=1\u00a0l=2"}},
		{"k=1\u000bl=2", []string{"k=1\u000bl=2"}},
		{"k=1\fl=2", []string{"k=1\fl=2"}},
		{"#c d", []string{"#c", "d"}},
		{"a\t\tb", []string{"a", "b"}},
		{"x=\"", nil},
		{"it's", nil},
		{"\"\\", nil},
		{"\u00e9\"\u00fc \u00f6\"", []string{"\u00e9\u00fc \u00f6"}},
		{"'it'\"'\"'s'", []string{"it's"}},
		{"\\\"", []string{"\""}},
		{"\\\\", []string{"\\"}},
		{"a\"b\"'c'd", []string{"abcd"}},
		{"\"a b\" \"c d\"", []string{"a b", "c d"}},
		{"  lead trail  ", []string{"lead", "trail"}},
		{"k=\"a=b\"", []string{"k=a=b"}},
		{"\"\"x\"\"", []string{"x"}},
		{"\\é", []string{"é"}},
	}
	for _, c := range cases {
		got, err := splitPOSIX(c.in, nil)
		if c.want == nil {
			if err == nil {
				t.Errorf("%q: got %q, want a quoting error", c.in, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q: got %q (%v), want %q", c.in, got, err, c.want)
		}
	}
}

func TestFallbackSplit(t *testing.T) {
	line := `ts inner action="say "hi" 'it' don't`
	var a arena
	a.reserve(3 * len(line))
	a.WriteString(line)
	var got []string
	for _, sp := range fallbackSplit(line, &a, 0, nil) {
		got = append(got, a.String()[sp.start:sp.end])
	}
	want := []string{"ts", "inner", `action="say`, "hi", "it", "don't"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// trimPy strips what Python's str.strip() strips (checked against str.isspace over every code point):
// NBSP, U+3000 and the 0x1C–0x1F separators go; the BOM and zero-width space stay.
func TestTrimPy(t *testing.T) {
	for in, want := range map[string]string{
		"\u00a0 x \u3000":     "x",
		"\x1cx\x1f":           "x",
		"\ufeffx":             "\ufeffx",
		"\u200bx\u200b":       "\u200bx\u200b",
		"\u2028x\u2029\u0085": "x",
		"  ":                  "",
		"x\u00a0y":            "x\u00a0y",
		"\t\v\fé\r\n":         "é",
		"\xff\xfe x \xff\xfe": "\xff\xfe x \xff\xfe",
	} {
		if got := trimPy(in); got != want {
			t.Errorf("trimPy(%q) = %q, want %q", in, got, want)
		}
	}
}
