package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// usageHint is the line every usage error ends with.
const usageHint = "Run 'tune --help' or 'tune <command> --help' for usage.\n"

// TestErrorsInTheUsersWords: each error names what is wrong in the user's words (the flag and the form
// its value takes, the arguments a command wants), with its exit code: 2 for what the command line
// got wrong, 1 for what could not be done.
func TestErrorsInTheUsersWords(t *testing.T) {
	log := filepath.Join(repoRoot(), "testdata/ldd/traces/e2e-demos__v013x__merged-view.log")
	for _, c := range []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stderr string
	}{
		{"last not a number", "", []string{"trace", "--last", "abc", log}, ExitUsage,
			`tune: invalid argument "abc" for --last: want a number of tasks, e.g. --last 20 (0 for all)` + "\n" + usageHint},
		{"limit not a number", "", []string{"history", "--limit", "x"}, ExitUsage,
			`tune: invalid argument "x" for --limit: want a number of entries, e.g. --limit 5 (0 for all)` + "\n" + usageHint},
		{"an int flag without its own words", "", []string{"audit", "--max-line-bytes", "1MB"}, ExitUsage,
			`tune: invalid argument "1MB" for --max-line-bytes: want a whole number, e.g. --max-line-bytes 10` + "\n" + usageHint},
		{"diff without arguments", "", []string{"diff"}, ExitUsage,
			"tune: tune diff A B: want two versions or proposals, e.g. tune diff active weights/proposals/p-….json\n" + usageHint},
		{"diff with one", "", []string{"diff", "v0001"}, ExitUsage,
			"tune: tune diff A B: want two versions or proposals, e.g. tune diff active weights/proposals/p-….json\n" + usageHint},
		{"score with two prompts", "", []string{"score", "a", "b"}, ExitUsage,
			`tune: tune score [PROMPT | -]: want one prompt (quote it), or - for stdin, e.g. tune score "fix the typo in README.md"` + "\n" + usageHint},
		{"score on empty stdin", "", []string{"score"}, ExitUsage,
			`tune: tune score: stdin held no prompt; give the prompt as an argument or pipe it in, e.g. echo "fix the typo" | tune score` + "\n" + usageHint},
		{"score on blank stdin", " \n\n", []string{"score", "-"}, ExitUsage,
			`tune: tune score: stdin held no prompt; give the prompt as an argument or pipe it in, e.g. echo "fix the typo" | tune score` + "\n" + usageHint},
		{"nothing readable", "", []string{"audit", "/dev/zero"}, ExitError,
			"tune: /dev/zero: nothing readable: transcripts: /dev/zero is a character device, not a regular file: tune opens only regular files\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			f := &Factory{IO: &IOStreams{In: strings.NewReader(c.stdin), Out: &out, ErrOut: &errOut},
				Getenv: func(k string) string { return map[string]string{"HOME": t.TempDir()}[k] }}
			code := Run(f, append([]string{"--weights-dir", filepath.Join(repoRoot(), "weights")}, c.args...))
			if code != c.code || errOut.String() != c.stderr {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", code, errOut.String(), c.code, c.stderr)
			}
			if out.Len() > 0 {
				t.Errorf("stdout %q, want nothing", out.String())
			}
		})
	}
}

// TestTraceLastKeepsFileLines: the tasks of a --last read carry the file's own line numbers, the lines
// an editor shows, not lines counted from where the tail read started.
func TestTraceLastKeepsFileLines(t *testing.T) {
	log := filepath.Join(repoRoot(), "testdata/ldd/traces/e2e-demos__v013x__merged-view.log")
	var out, errOut bytes.Buffer
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Getenv: func(string) string { return "" }}
	if code := Run(f, []string{"trace", "--last", "2", "--wide", log}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var lines []string
	for _, l := range strings.Split(out.String(), "\n") {
		if fields := strings.Fields(l); len(fields) > 2 && fields[0] == "|" && fields[1] != "Line" {
			lines = append(lines, fields[1])
		}
	}
	// the whole log's tasks start on lines 1, 6 and 11 (tune trace without --last)
	if strings.Join(lines, ",") != "6,11" || strings.Contains(out.String(), "count from there") {
		t.Errorf("task lines %v, want 6,11 (the file's):\n%s", lines, out.String())
	}
}
