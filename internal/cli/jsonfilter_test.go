package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestJQAndTemplate: --jq and --template filter the JSON of the commands that print it, as gh's do
// (strings raw, other values as compact JSON), and their mistakes are usage errors.
func TestJQAndTemplate(t *testing.T) {
	log := filepath.Join(repoRoot(), "testdata/ldd/traces/e2e-demos__v013x__merged-view.log")
	weightsDir := filepath.Join(repoRoot(), "weights")
	transcripts := filepath.Join(repoRoot(), "testdata/transcripts/claude-code-log/test/test_data/edge_cases.jsonl")
	for _, c := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"trace", log, "--jq", ".tasks[].level"}, ExitOK, "L1\nL4\nL3\n", ""},
		{[]string{"trace", log, "--jq", "[.tasks[] | {line, level}] | .[0]"}, ExitOK, `{"level":"L1","line":1}` + "\n", ""},
		{[]string{"history", "--jq", ".active"}, ExitOK, "v0001\n", ""},
		{[]string{"weights", "show", "--template", "{{.version}} {{len .signals}}\n"}, ExitOK, "v0001 9\n", ""},
		{[]string{"diff", "v0001", "active", "--jq", ".rows | length"}, ExitOK, "0\n", ""},
		{[]string{"audit", transcripts, "--jq", ".totals.requests"}, ExitOK, "", ""},
		{[]string{"trace", log, "--jq", ".["}, ExitUsage, "", "tune: --jq \".[\": unexpected EOF\n" + usageHint},
		{[]string{"trace", log, "--jq", ".", "--template", "x"}, ExitUsage, "", "tune: --jq and --template: give one of them\n" + usageHint},
		{[]string{"trace", log, "--jq", ".", "--format", "jsonl"}, ExitUsage, "", "tune: --jq filters JSON: it does not go with --format jsonl\n" + usageHint},
		{[]string{"trace", log, "--jq", `error("boom")`}, ExitError, "", "tune: --jq: error: boom\n"},
	} {
		var out, errOut bytes.Buffer
		f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Getenv: func(string) string { return "" }}
		code := Run(f, append([]string{"--weights-dir", weightsDir, "--quiet"}, c.args...))
		if c.args[0] == "audit" { // the count is the corpus's: only its form is checked
			if code != ExitOK || strings.Trim(out.String(), "0123456789") != "\n" {
				t.Errorf("%v: exit %d, stdout %q, stderr %s; want a number", c.args, code, out.String(), errOut.String())
			}
			continue
		}
		if code != c.code || out.String() != c.stdout || errOut.String() != c.stderr {
			t.Errorf("%v: exit %d, stdout %q, stderr %q\nwant exit %d, stdout %q, stderr %q", c.args, code, out.String(), errOut.String(), c.code, c.stdout, c.stderr)
		}
	}
}

// TestEveryJSONCommandFilters: every command that prints JSON takes --jq and --template.
func TestEveryJSONCommandFilters(t *testing.T) {
	f := &Factory{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Getenv: func(string) string { return "" }}
	n := 0
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup("json") != nil || c.InheritedFlags().Lookup("json") != nil {
			n++
			for _, name := range []string{"jq", "template"} {
				if c.Flags().Lookup(name) == nil && c.InheritedFlags().Lookup(name) == nil {
					t.Errorf("%s has --json but no --%s", c.CommandPath(), name)
				}
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(NewRootCmd(f))
	if n < 15 {
		t.Errorf("%d commands with --json, want every one of them (15 or more)", n)
	}
}
