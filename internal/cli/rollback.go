package cli

import (
	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/cmdutil"
	"github.com/ldd-tools/tune/internal/view"
	"github.com/ldd-tools/tune/internal/weights"
)

type rollbackOptions struct {
	IO           *IOStreams
	Factory      *Factory
	To           string // "" = parent of the active version
	ExpectSerial int
	JSON         bool
}

// NewCmdRollback builds `tune rollback`.
func NewCmdRollback(f *Factory) *cobra.Command {
	return newCmdRollback(f, nil)
}

func newCmdRollback(f *Factory, runF func(*rollbackOptions) error) *cobra.Command {
	opts := &rollbackOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "rollback",
		Short: "Undo a weights change by writing a new version equal to an earlier one",
		Long: `Roll the active weights back. Nothing is deleted or rewritten: rollback writes a NEW version
whose content equals the target (reason "rollback to vN") and makes it active, like git revert.
The log entry names the version it restores.

Without --to, the target is the parent of the active version, so running rollback twice undoes
the rollback itself.`,
		Example: `  tune rollback
  tune rollback --to v0001
  tune rollback --to 3 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.ResolveExpectSerial(cmd, &opts.ExpectSerial); err != nil {
				return err
			}
			if opts.To != "" {
				if _, err := weights.ParseVersionName(opts.To); err != nil {
					return FlagErrorf("--to: %v", err)
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return rollbackRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.To, "to", "", "restore this `version` (v0001, 1); default: the parent of the active version")
	cmdutil.AddExpectSerialFlag(cmd, &opts.ExpectSerial)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

func rollbackRun(opts *rollbackOptions) error {
	to := 0
	if opts.To != "" {
		to, _ = weights.ParseVersionName(opts.To)
	}
	rep, err := app.Rollback(opts.Factory.Env(), to, opts.ExpectSerial)
	if err != nil {
		return storeNothingToDo(opts.IO, err)
	}
	return view.Print(opts.IO.Out, opts.JSON, rep, view.Rollback)
}
