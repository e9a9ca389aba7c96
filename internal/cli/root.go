// Package cli wires the tune commands: one cobra command per file, each with an options struct and a
// runF hook that tests use to check flag parsing without running the command. A command parses its
// flags, calls its use case in internal/app (or a domain package) and prints the result; the rules
// live below it (docs/decisions.md#layers).
package cli

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/cmdutil"
	"github.com/ldd-tools/tune/internal/cmdutil/helpwrap"
	"github.com/ldd-tools/tune/internal/cmdutil/jsonfilter"
	"github.com/ldd-tools/tune/internal/exitcode"
	"github.com/ldd-tools/tune/internal/termtable"
)

// Version is set at build time with -ldflags "-X github.com/ldd-tools/tune/internal/cli.Version=…".
var Version = "dev"

// Main runs tune with the process arguments and returns the exit code.
func Main() int {
	return Run(NewFactory(), nil)
}

// Run runs tune with f and args (nil means the process arguments) and returns the exit code.
func Run(f *Factory, args []string) int {
	if err := f.clockFromEnv(); err != nil {
		return exitCode(FlagErrorf("%v", err), f.IO.ErrOut)
	}
	return execute(NewRootCmd(f), args, f.IO.ErrOut)
}

// execute runs the command tree with args (nil: the process arguments) and maps its error to the exit
// code. Only a *FlagError is a usage error (see internal/cmdutil).
func execute(root *cobra.Command, args []string, stderr io.Writer) int {
	if args != nil {
		root.SetArgs(args)
	}
	_, err := root.ExecuteC()
	// --jq and --template write what they make of the command's JSON once it has all been printed,
	// also when the command ends with an error after its output (an escalation, a watch finding).
	if filtered, ok := root.OutOrStdout().(*jsonfilter.Writer); ok {
		if ferr := filtered.Close(); err == nil {
			err = ferr
		}
	}
	return exitCode(err, stderr)
}

// NewRootCmd builds the command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "tune <command>",
		Short: "Tune the LDD level scorer from trace logs, and audit where agent effort goes",
		Long: `tune is the outer loop of the LDD thinking-levels scorer.

Agents record every task in .ldd/trace.log. tune reads those logs, finds tasks that were
dispatched too low and later regressed, finds the signal behind them, proposes one +1 weight
change, replays the fixture suite (a level too low costs twice a level too high), and accepts
or rolls back. Every weights version is an immutable, checksummed file under weights/.

It also audits Claude Code transcripts: where tokens, thinking and money go, and whether a
higher effort level really costs or buys anything (A/B).

Exit codes: 0 success or nothing to do, 1 error, 2 usage, 3 escalation (needs a human).`,
		Example: `  tune score "fix the typo in README.md line 12"
  tune trace .ldd/trace.log --last 20
  tune nightly --logs 'projects/*/.ldd/trace.log'
  tune audit ~/.claude/projects --by model`,
		Version:       Version,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	filtered := jsonfilter.NewWriter(f.IO.Out)
	f.IO.Out = filtered
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetFlagErrorFunc(cmdutil.FlagError)
	wide := false
	cmdutil.AddOutputFlags(root, &wide, &f.Quiet)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		f.IO.FitTables(wide, f.Getenv("COLUMNS"))
		if err := jsonfilter.Setup(cmd, filtered); err != nil {
			return err
		}
		return f.resolveProject(cmd.Flags())
	}
	root.PersistentFlags().StringVar(&f.WeightsDir, "weights-dir", f.envOr("TUNE_WEIGHTS_DIR", "weights"), "weights store `directory` (env TUNE_WEIGHTS_DIR)")
	root.PersistentFlags().StringVar(&f.FixturesDir, "fixtures-dir", f.envOr("TUNE_FIXTURES_DIR", "fixtures"), "fixture suite `directory` (env TUNE_FIXTURES_DIR)")
	root.PersistentFlags().StringVar(&f.ReportsDir, "reports-dir", f.envOr("TUNE_REPORTS_DIR", "reports"), "report output `directory` (env TUNE_REPORTS_DIR)")

	for _, add := range []func(*Factory) *cobra.Command{
		// One line per command; each lives in its own file.
		NewCmdApply,           // weights store (internal/store)
		NewCmdRollback,        // weights store
		NewCmdVerify,          // weights store
		NewCmdRepair,          // weights store
		NewCmdHistory,         // weights store
		NewCmdAccuracy,        // dispatch accuracy (internal/accuracy)
		NewCmdWatch,           // the watch on applied versions (internal/watch, app.Watch)
		NewCmdExplore,         // the [explore] arms compared (internal/explore/compare, app.Explore)
		NewCmdWeights,         // weights store: tune weights show
		NewCmdDiff,            // weights store
		NewCmdDetect,          // evolution step (internal/evolve)
		NewCmdReplay,          // evolution step: fixture replay
		NewCmdPropose,         // evolution step
		NewCmdEvolve,          // evolve loop (internal/evolve/loop.go)
		NewCmdNightly,         // cron entry point: lock + evolve + report
		NewCmdReport,          // EVAL reports (internal/report)
		NewCmdScore,           // scorer port (internal/scorer): tune score
		NewCmdAudit,           // transcript audit (internal/transcript, internal/audit): tune audit, tune audit ab
		NewCmdTrace,           // trace parsing (internal/traceparse): tune trace
		NewCmdInit,            // project set-up (app.Init): tune init
		NewCmdVersion,         // tune version: release, module version, VCS revision
		NewCmdEscalationTopic, // help topic: tune help escalation (docs/escalation.md, embedded)
		NewCmdEffort,          // effort conformance (internal/effort): tune effort
	} {
		root.AddCommand(add(f))
	}
	addCompletions(root, f)
	typeHelpAndCompletion(root)
	cmdutil.TypeUsageErrors(root)
	jsonfilter.AddFlags(root)
	// Help is prose: it fits the terminal as tables do, and 80 columns when the width is unknown.
	helpwrap.Install(root, func() int {
		return termtable.Resolve(false, f.Getenv("COLUMNS"), f.IO.OutIsTerminal, f.IO.TermWidth)
	})
	return root
}

// typeHelpAndCompletion makes cobra's own help and completion commands now, so that their usage errors
// are typed like every other's: `tune help nosuch` printed the root's usage and `tune completion nosh`
// its help, both with exit 0 (the first review of the set-up commands); they exit 2 now.
func typeHelpAndCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	var help *cobra.Command
	for _, c := range root.Commands() { // not root.Find: it merges the persistent flags before --jq is added
		if c.Name() == "help" && c.Run != nil {
			help = c
		}
	}
	if help == nil {
		return
	}
	// cobra completes the commands only: add the help topics (tune help escalation), as `tune help` lists them.
	complete := help.ValidArgsFunction
	help.ValidArgsFunction = func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		out, dir := complete(c, args, toComplete)
		if len(args) == 0 {
			for _, t := range c.Root().Commands() {
				if t.IsAdditionalHelpTopicCommand() && strings.HasPrefix(t.Name(), toComplete) {
					out = append(out, cobra.CompletionWithDesc(t.Name(), t.Short))
				}
			}
		}
		return out, dir
	}
	run := help.Run
	help.Run = nil
	help.Args = cobra.ArbitraryArgs
	help.RunE = func(c *cobra.Command, args []string) error {
		// Find stops at the last command it knows and returns what it did not consume: a topic it
		// does not know is left over (the root takes arbitrary arguments, so Find reports no error).
		if cmd, rest, err := c.Root().Find(args); cmd == nil || err != nil || len(rest) > 0 {
			return exitcode.FlagErrorf("unknown help topic %q: tune --help lists the commands and help topics", strings.Join(args, " "))
		}
		run(c, args)
		return nil
	}
}
