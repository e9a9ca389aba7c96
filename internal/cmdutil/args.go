// Package cmdutil holds what every cobra command tree of tune shares (the full tree in internal/cli and
// the light `tune score` front end): argument validators whose refusals are typed usage errors, and the
// flags several commands share (--format and --json, --expect-serial), each defined and checked once.
package cmdutil

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/exitcode"
)

// Usage errors are typed, never recognised by their message (docs/decisions.md, "Architecture and
// output (issue 15)"): an error wrapping EINVAL says "invalid argument" too, and a scheduler must not
// read an I/O failure as a bad crontab. Every argument check returns an
// *exitcode.FlagError; exitcode.Print maps only those to exit 2.

// UsageArgs wraps an argument validator (cobra.NoArgs, cobra.MaximumNArgs(1), …) so that what it
// refuses is a usage error.
func UsageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return exitcode.AsFlagError(err)
		}
		return nil
	}
}

// UnknownSubcommand is the RunE of a command group: without a subcommand it shows the group's help,
// with an unknown one it is a usage error (cobra would print the help and exit 0, which hides a typo
// in a crontab).
func UnknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return exitcode.AsFlagError(fmt.Errorf("%s", msg))
}

// TypeUsageErrors makes every argument check of the tree return a *exitcode.FlagError: it wraps each command's
// Args validator, and gives each group without its own RunE one that refuses an unknown subcommand.
// Call it once the tree is built; commands added to the tree need nothing of their own.
func TypeUsageErrors(cmd *cobra.Command) {
	if cmd.HasSubCommands() && cmd.RunE == nil && cmd.Run == nil {
		cmd.Args = cobra.ArbitraryArgs
		cmd.RunE = UnknownSubcommand
	}
	if cmd.Args != nil {
		cmd.Args = UsageArgs(cmd.Args)
	}
	for _, c := range cmd.Commands() {
		TypeUsageErrors(c)
	}
}
