package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/spf13/cobra"
)

// TestHelpFitsTheTerminal: the help of every command, examples and flags included, fits 80 columns
// at COLUMNS=80, and the width it is given when the terminal is wider.
func TestHelpFitsTheTerminal(t *testing.T) {
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.Hidden {
			return
		}
		paths = append(paths, path)
		for _, s := range c.Commands() {
			walk(s, append(append([]string{}, path...), s.Name()))
		}
	}
	walk(NewRootCmd(&Factory{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Getenv: func(string) string { return "" }}), nil)
	if len(paths) < 25 {
		t.Fatalf("%d commands: the walk missed some", len(paths))
	}
	for _, width := range []string{"80", "100", ""} {
		limit := 80 // unknown width (piped, no COLUMNS): 80
		if width == "100" {
			limit = 100
		}
		for _, path := range paths {
			var out, errOut bytes.Buffer
			f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
				Getenv: func(k string) string { return map[string]string{"COLUMNS": width}[k] }}
			if code := Run(f, append(append([]string{}, path...), "--help")); code != ExitOK {
				t.Fatalf("tune %v --help: exit %d: %s", path, code, errOut.String())
			}
			widest := 0
			for i, line := range strings.Split(out.String(), "\n") {
				if n := twwidth.Width(line); n > limit {
					t.Errorf("COLUMNS=%q tune %s --help, line %d is %d wide:\n%s", width, strings.Join(path, " "), i+1, n, line)
				}
				widest = max(widest, twwidth.Width(line))
			}
			if limit == 100 && len(path) == 1 && path[0] == "audit" && widest < 90 {
				t.Errorf("COLUMNS=100 tune audit --help is at most %d wide: the help does not use the width it has", widest)
			}
		}
	}
}
