package view

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/tracecmd"
	"github.com/ldd-tools/tune/internal/traceparse"
)

func TestWarningLocations(t *testing.T) {
	tails := NewTails([]traceparse.Tail{{File: "big.log", Offset: 4096}})
	var b bytes.Buffer
	Warnings(&b, []evolve.Warning{
		{Source: "a.log", Line: 3, Reason: "r1"},
		{Source: "big.log", Line: 7, Reason: "r2"},
		{Source: "big.log", Reason: "r3"},
		{Reason: "r4"},
	}, tails)
	tracecmd.Warn(&b, traceparse.Warning{File: "big.log", Line: 2, Offset: 5000, Reason: "cut", Skipped: true}, true)
	want := "tune: warning: a.log:3: r1\n" +
		"tune: warning: big.log: line 7 of the tail read from byte 4096: r2\n" +
		"tune: warning: big.log: r3\n" +
		"tune: warning: r4\n" +
		"tune: warning: big.log: byte 5000 (line 2 of the tail): skipped: cut\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestPrintChoosesJSONOrText(t *testing.T) {
	text := func(w io.Writer, v map[string]string) error {
		_, err := io.WriteString(w, "text "+v["k"]+"\n")
		return err
	}
	for _, c := range []struct {
		json bool
		want string
	}{{true, "{\n  \"k\": \"<v>\"\n}\n"}, {false, "text <v>\n"}} {
		var b bytes.Buffer
		if err := Print(&b, c.json, map[string]string{"k": "<v>"}, text); err != nil || b.String() != c.want {
			t.Errorf("json=%v: got %q, %v; want %q", c.json, b.String(), err, c.want)
		}
	}
}

// verify's closing advice names tune repair and --resign only for the problems they resolve: an edited
// proposal input or a committed cache is not re-signed by --resign.
func TestVerifyNextNamesOnlyWhatHelps(t *testing.T) {
	cases := []struct {
		problems []store.Problem
		want     string
	}{
		{[]store.Problem{{Kind: store.ProblemEdited, File: "v0002.toml"}}, "Next: an intended hand edit of a version file → tune repair --resign; anything else"},
		{[]store.Problem{{Kind: store.ProblemPending, File: ".pending.json"}}, "Next: an interrupted operation → tune repair; anything else"},
		{[]store.Problem{{Kind: store.ProblemEdited, File: "proposals/inputs/p-fc1be2244246.toml"}}, "Next: do what each problem's line says"},
		{[]store.Problem{{Kind: store.ProblemCommitted, File: ".cache/"}}, "Next: do what each problem's line says"},
		// resign refuses these: it re-signs edits, it does not bring files back or record extra ones
		{[]store.Problem{{Kind: store.ProblemExtra, File: "v0007.toml"}}, "Next: do what each problem's line says"},
		{[]store.Problem{{Kind: store.ProblemMissing, File: "v0002.toml"}}, "Next: do what each problem's line says"},
		{[]store.Problem{{Kind: store.ProblemMissing, File: store.HeadFile}}, "Next: an intended hand edit of a version file → tune repair --resign"},
	}
	for _, c := range cases {
		if got := verifyNext(c.problems); !strings.HasPrefix(got, c.want) {
			t.Errorf("%v: %q, want it to start %q", c.problems, got, c.want)
		}
	}
}
