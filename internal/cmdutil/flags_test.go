package cmdutil

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/exitcode"
)

// TestCheckFormat: --json is --format json, a --format given with another value conflicts with it,
// and a value outside the declared ones is a usage error naming them.
func TestCheckFormat(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // the format, or the usage error
	}{
		{nil, "text"},
		{[]string{"--format", "csv"}, "csv"},
		{[]string{"--json"}, "json"},
		{[]string{"--json", "--format", "json"}, "json"},
		{[]string{"--json", "--format", "text"}, "--json and --format text conflict"},
		{[]string{"--format", "xml"}, `--format "xml": want text, json or csv`},
	} {
		var format string
		var asJSON bool
		cmd := &cobra.Command{Use: "x", RunE: func(cmd *cobra.Command, _ []string) error { return CheckFormat(cmd) }}
		AddFormatFlags(cmd, &format, &asJSON, []string{"text", "json", "csv"}, "format", "json")
		cmd.SetArgs(c.args)
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		err := cmd.Execute()
		var fe *exitcode.FlagError
		switch {
		case err != nil && (!errors.As(err, &fe) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v, want %s", c.args, err, c.want)
		case err == nil && format != c.want:
			t.Errorf("%v: format %q, want %q", c.args, format, c.want)
		}
	}
	if got := OneOf([]string{"a"}); got != "a" {
		t.Errorf("OneOf(a) = %q", got)
	}
}
