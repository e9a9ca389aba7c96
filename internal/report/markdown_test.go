package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ldd-tools/tune/internal/testutil"
)

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	err := WriteTable(&b, []Column{Text("signal"), Num("old → new"), Num("Δ"), Text("task")}, [][]string{
		{"ambiguous", "2 → 3", "+1", "fix a | b\nacross lines"},
		{"components>=3", "2", "±0", ""},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if !strings.Contains(got, "| signal ") || strings.Contains(got, "SIGNAL") {
		t.Errorf("headers must be printed as given:\n%s", got)
	}
	if !strings.Contains(got, "-:|") || !strings.Contains(got, "|:-") {
		t.Errorf("want right-aligned numeric and left-aligned text separators:\n%s", got)
	}
	if strings.Count(got, "\n") != 4 {
		t.Errorf("a newline in a cell broke the row:\n%s", got)
	}
	testutil.Golden(t, "table.md", b.Bytes())

	if err := WriteTable(&b, []Column{Text("a")}, [][]string{{"x", "y"}}); err == nil {
		t.Error("a row with too many cells was accepted")
	}
}

func TestFormatting(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{fmtLoss(0.5), "0.5"}, {fmtLoss(2), "2"}, {fmtLoss(4.0 / 3), "1.333"}, {fmtLoss(-0.0001), "0"}, {fmtLoss(math.NaN()), "–"},
		{fmtDelta(1), "+1"}, {fmtDelta(-0.5), "−0.5"}, {fmtDelta(0), "±0"},
		{fmtP(0.0004), "<0.001"}, {fmtP(0.04321), "0.043"}, {fmtP(1), "1.000"},
		{fmtPct(0.5312), "53.1 %"}, {fmtInt(77423878), "77,423,878"}, {fmtInt(-1234), "−1,234"}, {fmtInt(999), "999"},
		{fmtNum(195801), "195,801"}, {fmtNum(2.5), "2.5"}, {fmtNum(1.234), "1.23"}, {fmtNum(93294.8), "93,294.8"},
		{fmtNum(4369.714), "4,369.71"}, {fmtNum(9.999), "10"}, {fmtNum(-1234.5), "−1,234.5"}, {fmtNum(0), "0"}, {fmtFloat(-0.001), "0.00"},
		{compactNumber(50000, 50000), "50k"}, {compactNumber(1.5e6, 2e6), "1.5M"}, {compactNumber(0.30000000000000004, 1), "0.3"},
		{compactNumber(2500, 2500), "2500"}, {compactNumber(8000, 16000), "8k"}, {compactNumber(0, 16000), "0"},
		{Escape("a*b [c](d) <e> `f`"), "a\\*b [c]\\(d) \\<e> \\`f\\`"},
		{Escape("regression_followed _x_ ~~s~~ p < 0.05 a\\b"), `regression_followed \_x\_ \~\~s\~\~ p < 0.05 a\\b`},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// A title from a trace log reaches the EVAL report and the pull request's body. An entity there made a
// raw U+202E (reversing what the reviewer reads), '$' starts GitHub math, and in the body "@name"
// notifies people and "fixes #1" closes an issue on merge (the review of the reports).
func TestEscapeEntitiesMathMentionsAndRefs(t *testing.T) {
	for in, want := range map[string]string{
		"a &#x202E; b":          `a \&#x202E; b`,
		"fish &amp; chips":      `fish \&amp; chips`,
		"R&D, a & b":            `R\&D, a & b`, // `\&` renders as "&"
		"cost $x^2$":            `cost \$x^2\$`,
		"@octocat fixes #1":     `@octocat fixes #1`,
		"![](http://t/p.gif)":   `![]\(http://t/p.gif)`,
		"mail a@b.c, issue#12":  `mail a@b.c, issue#12`,
		"r\u200bm -rf, \ufeffx": `r\u200bm -rf, \ufeffx`, // shown, not invisible
		"family 👨\u200d👩":       "family 👨\u200d👩",       // a joiner stays
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"@octocat and @org/team fixes #1": "@&#8203;octocat and @&#8203;org/team fixes #&#8203;1",
		"fix flaky export":                "fix flaky export",
		"mail a@b.c, #x, @ , prefix":      "mail a@b.c, #x, @ , prefix",
		// the second re-review: a cross-repository reference, GH-N, an issue URL after a closing
		// keyword, a mention after a non-ASCII letter, single tildes
		"Closes o/r#12 and GH-7, resolved https://github.com/o/r/issues/3": "Closes o/r#&#8203;12 and GH-&#8203;7, r&#8203;esolved https://github.com/o/r/issues/3",
		"cc é@alice ~struck~": `cc é@&#8203;alice \~struck\~`,
		"a | b &#x202E;":      `a \| b \&#x202E;`,
		`already \|`:          `already \\\|`,
	} {
		if got := EscapeBody(in); got != want {
			t.Errorf("EscapeBody(%q) = %q, want %q", in, got, want)
		}
	}
}

// A backtick in a path is kept in its code span (it was shown as ', a path that does not exist).
func TestCodeSpanKeepsBackticks(t *testing.T) {
	for in, want := range map[string]string{
		"logs/a/trace.log": "`logs/a/trace.log`",
		"logs/a`b/t.log":   "``logs/a`b/t.log``",
		"a``b":             "```a``b```",
		"`lead":            "`` `lead ``",
	} {
		if got := CodeSpan(in); got != want {
			t.Errorf("CodeSpan(%q) = %q, want %q", in, got, want)
		}
	}
}

// A title in the watch's table of moved tasks is cut and cannot split the row (the second re-review: a
// title with pipes made eight cells of five, and 50 rows of 440 KB titles a 7 MB report).
func TestWatchRowsAreCutAndKeepTheirCells(t *testing.T) {
	var r redactions
	cell := r.title("a | b | c " + strings.Repeat("A", 5000))
	if strings.Count(cell, "|") != strings.Count(cell, `\|`) {
		t.Errorf("an unescaped pipe in %.60q", cell)
	}
	if n := utf8.RuneCountInString(strings.ReplaceAll(cell, `\|`, "|")); n > MaxTitleRunes+10 {
		t.Errorf("the cell holds %d runes", n)
	}
}

// At a list item's start, block syntax stays text: a checkbox GitHub counts, a heading, a quote.
func TestListItemStartIsText(t *testing.T) {
	for in, want := range map[string]string{
		"[x] done":          `\[x] done`,
		"# big":             `\# big`,
		"> quoted":          `\> quoted`,
		"1. first":          `\1. first`,
		"logs/a/trace.log":  "logs/a/trace.log",
		"+1 ambiguous, a+b": `\+1 ambiguous, a+b`,
	} {
		if got := ListItem(in); got != want {
			t.Errorf("ListItem(%q) = %q, want %q", in, got, want)
		}
	}
}
