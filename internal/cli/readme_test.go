package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestREADMEExamples runs every `$ tune …` line of the README's console blocks and checks that the lines
// shown below it are the first lines the command prints, so the README cannot drift from the tool.
// Commands piped into other programs are skipped. They run in a scratch directory holding copies of
// weights/ and fixtures/ and links to demo/ and testdata/, with a fixed clock.
func TestREADMEExamples(t *testing.T) {
	root := repoRoot()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	examples := consoleExamples(string(readme))
	if len(examples) < 3 {
		t.Fatalf("found %d README examples; the parser or the README changed", len(examples))
	}
	dir := t.TempDir()
	for _, d := range []string{"weights", "fixtures"} {
		if err := copyDir(filepath.Join(root, d), filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"demo", "testdata"} {
		if err := os.Symlink(filepath.Join(root, d), filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd) //nolint:errcheck // back to the package directory

	for _, ex := range examples {
		var out, errOut bytes.Buffer
		f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			Now:    func() time.Time { return time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC) },
			Getenv: func(string) string { return "" }}
		if code := Run(f, ex.args); code != ExitOK {
			t.Errorf("README: $ tune %s: exit %d: %s", strings.Join(ex.args, " "), code, errOut.String())
			continue
		}
		got := strings.Split(out.String(), "\n")
		if len(got) < len(ex.want) || strings.Join(got[:len(ex.want)], "\n") != strings.Join(ex.want, "\n") {
			t.Errorf("README: $ tune %s\n--- README shows\n%s\n--- tune prints\n%s", strings.Join(ex.args, " "),
				strings.Join(ex.want, "\n"), out.String())
		}
	}
}

// TestREADMEReportExcerpts: every quoted line of the README ("> …") is a line of docs/report-excerpts.md,
// which TestReportExcerpts keeps equal to what the reports print, so the README's excerpts cannot drift.
func TestREADMEReportExcerpts(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	excerpts, err := os.ReadFile(filepath.Join(repoRoot(), "docs", "report-excerpts.md"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, line := range strings.Split(string(excerpts), "\n") {
		have[strings.TrimSpace(line)] = true
	}
	quoted := 0
	for i, line := range strings.Split(string(readme), "\n") {
		text, ok := strings.CutPrefix(line, "> ")
		if !ok {
			continue
		}
		quoted++
		if !have[strings.TrimSpace(text)] {
			t.Errorf("README.md:%d: quoted line is not in docs/report-excerpts.md: %s", i+1, text)
		}
	}
	if quoted == 0 {
		t.Fatal("README.md quotes no report lines; the parser or the README changed")
	}
}

type readmeExample struct {
	args []string
	want []string
}

// consoleExamples collects the `$ tune …` commands of ```console blocks and the output lines under them.
func consoleExamples(md string) []readmeExample {
	var out []readmeExample
	in := false
	var cur *readmeExample
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "```console"):
			in = true
		case in && strings.HasPrefix(line, "```"):
			flush()
			in = false
		case in && strings.HasPrefix(line, "$ "):
			flush()
			cmd := line[2:]
			if i := strings.Index(cmd, "  #"); i >= 0 {
				cmd = strings.TrimSpace(cmd[:i])
			}
			if strings.HasPrefix(cmd, "tune ") && !strings.Contains(cmd, "|") {
				cur = &readmeExample{args: splitCommand(cmd)[1:]}
			}
		case in && cur != nil:
			cur.want = append(cur.want, line)
		}
	}
	return out
}

// splitCommand splits a shell command line on blanks, honouring double and single quotes (all the
// README's examples need).
func splitCommand(s string) []string {
	var args []string
	var b strings.Builder
	var quote rune
	inArg := false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			b.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inArg = r, true
		case r == ' ' || r == '\t':
			if inArg {
				args = append(args, b.String())
				b.Reset()
				inArg = false
			}
		default:
			b.WriteRune(r)
			inArg = true
		}
	}
	if inArg {
		args = append(args, b.String())
	}
	return args
}
