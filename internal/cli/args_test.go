package cli

import (
	"bytes"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/cmdutil"
)

// An I/O error wrapping EINVAL reads "invalid argument", as cobra's flag errors do; it is a failure
// (exit 1), not a usage error: only a *FlagError exits 2.
func TestEINVALExitsOneAndUsageErrorsExitTwo(t *testing.T) {
	newRoot := func(errOut *bytes.Buffer) *cobra.Command {
		f := &Factory{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: errOut}, Getenv: func(string) string { return "" }}
		root := NewRootCmd(f)
		root.AddCommand(&cobra.Command{Use: "einval", Args: cobra.NoArgs, RunE: func(*cobra.Command, []string) error {
			return fmt.Errorf("read trace: %w", &fs.PathError{Op: "read", Path: "x.log", Err: syscall.EINVAL})
		}})
		cmdutil.TypeUsageErrors(root)
		return root
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"einval"}, ExitError, "invalid argument"},
		{[]string{"einval", "extra"}, ExitUsage, `unknown command "extra"`},
		{[]string{"bogus"}, ExitUsage, `unknown command "bogus" for "tune"`},
		{[]string{"weights", "bogus"}, ExitUsage, `unknown command "bogus" for "tune weights"`},
		{[]string{"diff", "v1"}, ExitUsage, "tune diff A B: want two versions or proposals"},
		{[]string{"history", "x"}, ExitUsage, "unknown command"},
		{[]string{"trace", "--last", "x"}, ExitUsage, "invalid argument"},
		{[]string{"trace", "--nope"}, ExitUsage, "unknown flag"},
		// an unset variable in an agent's hook: before, nothing was logged (or no evidence) and exit 0
		{[]string{"score", "--log", "", "fix a.go"}, ExitUsage, "--log is empty"},
		{[]string{"score", "--log", "t.log", "--regression-of", "", "fix a.go"}, ExitUsage, "--regression-of is empty"},
		{[]string{"score", "--log", "t.log", "--regression-of-last", "", "fix a.go"}, ExitUsage, "--regression-of-last is empty"},
		{[]string{"score", "--history", "", "fix a.go"}, ExitUsage, "--history is empty"},
		{[]string{"score", "--log", "t.log", "--loops", "", "fix a.go"}, ExitUsage, "--loops is empty"},
		// cobra's own commands, typed like the others: they printed help and exited 0
		{[]string{"help", "nosuch"}, ExitUsage, `unknown help topic "nosuch"`},
		{[]string{"help", "weights", "nosuch"}, ExitUsage, `unknown help topic "weights nosuch"`},
		{[]string{"completion", "nosh"}, ExitUsage, `unknown command "nosh"`},
	} {
		var errOut bytes.Buffer
		code := execute(newRoot(&errOut), c.args, &errOut)
		if code != c.code || !strings.Contains(errOut.String(), c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errOut.String(), c.code, c.msg)
		}
		if hint := strings.Contains(errOut.String(), "for usage"); hint != (c.code == ExitUsage) {
			t.Errorf("%v: usage hint printed %v, want %v", c.args, hint, c.code == ExitUsage)
		}
	}
}

// Every command of the tree checks its arguments with a typed validator (or is a group that refuses
// unknown subcommands): none falls back to cobra's untyped errors.
func TestEveryCommandHasTypedArgs(t *testing.T) {
	f := &Factory{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Getenv: func(string) string { return "" }}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Args == nil && c.HasSubCommands() {
			t.Errorf("%s: a group without an argument check", c.CommandPath())
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(NewRootCmd(f))
}
