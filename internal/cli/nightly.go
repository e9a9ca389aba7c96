package cli

import (
	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/project"
)

type nightlyOptions struct {
	evolveOptions
	Globs []string
}

// NewCmdNightly builds `tune nightly`.
func NewCmdNightly(f *Factory) *cobra.Command { return newCmdNightly(f, nil) }

func newCmdNightly(f *Factory, runF func(*nightlyOptions) error) *cobra.Command {
	opts := &nightlyOptions{evolveOptions: evolveOptions{IO: f.IO}}
	cmd := &cobra.Command{
		Use:   "nightly [LOG... | --logs GLOB]",
		Short: "The cron entry point: lock, evolve, write the EVAL report, print a summary",
		Long: `Run the evolve loop (tune evolve) over the trace logs under a lock, write the pending proposal
and its EVAL report under --reports-dir, and print a summary a scheduler can act on:

  exit 0  done (a proposal is pending), nothing to do, or a refused night (the summary says why:
          "refused: …", a parity price or holdout veto in the attempts; the proposal is a revert)
  exit 1  error, or another tune nightly holds the lock (the second run exits at once)
  exit 2  usage error (a flag or argument is wrong: fix the crontab line or the workflow)
  exit 3  escalation: the loop hit its step cap while progressing, or a change would move a weight
          more than 2 points from v0001 (the drift bound); the state dump is written and the
          output points to ` + app.EscalationDoc + `

Safe to run twice: the proposal id is derived from its content, so a re-run on the same inputs
finds the same proposal, writes the same report bytes and adds nothing to the evolution log.
Nothing is applied: a reviewer runs tune apply after reading the report (see docs/nightly.md for a
crontab line and a CI workflow that opens a pull request).`,
		Example: `  tune nightly
  tune nightly --logs '/srv/projects/*/.ldd/trace.log' --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.bind(f, args); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return nightlyRun(f, opts)
		},
	}
	addEvolveFlags(cmd, &opts.evolveOptions)
	cmd.Flags().StringArrayVar(&opts.Globs, "logs", nil, "trace logs to read, as a shell `glob` (repeatable)")
	_ = cmd.Flags().MarkHidden("apply") // nightly never applies: a reviewer does; --apply is a usage error
	return cmd
}

func nightlyRun(f *Factory, opts *nightlyOptions) error {
	if opts.Apply {
		// the shared evolve flag, accepted and then ignored, let a cron line believe it applied
		return FlagErrorf("--apply: tune nightly never applies; a reviewer runs tune apply ID after reading the report (tune evolve --apply applies at once)")
	}
	logs, err := project.ExpandLogs(opts.Logs, opts.Globs)
	if err != nil {
		return err
	}
	if opts.Logs, err = f.traceLogs(logs); err != nil {
		return err
	}
	out, err := app.Nightly(opts.Env, opts.EvolveOptions)
	if err != nil {
		return err
	}
	return printEvolve(&opts.evolveOptions, out)
}
