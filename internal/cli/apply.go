package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/cmdutil"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/view"
)

type applyOptions struct {
	IO           *IOStreams
	Factory      *Factory
	Proposal     string // path or id; "" = newest pending accepted proposal
	ExpectSerial int    // -1 = whatever the log says when the command starts
	JSON         bool
}

// NewCmdApply builds `tune apply`.
func NewCmdApply(f *Factory) *cobra.Command {
	return newCmdApply(f, nil)
}

func newCmdApply(f *Factory, runF func(*applyOptions) error) *cobra.Command {
	opts := &applyOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "apply [PROPOSAL]",
		Short: "Write an accepted proposal as the next weights version",
		Long: `Apply a proposal written by tune propose or tune evolve: its candidate weights become the next
immutable version file (weights/vNNNN.toml, parent = the active version), weights.sum is re-signed
and the evolution log gets an apply entry. The new version is active from then on.

PROPOSAL is a proposal file or its id (p-…, looked up in weights/proposals/). Without it, tune applies
the newest proposal there that was accepted (decision accept or halve) and is not applied yet.

apply refuses a proposal whose decision is revert or none, and one measured against a version that
is no longer active (its replay no longer holds: propose again). Applying the same proposal twice
does nothing, and so does applying a stale proposal whose weights the active version already has (a
watch's rollback proposal after the same rollback by hand).

Harvest: each flagged task of the proposal that kept its prompt becomes a fixture in
<fixtures-dir>/harvested/, expected one level above the level it was dispatched at, so the suite grows
from evidence. The files are listed in the log entry.

Safety: the store is locked while writing; every file is written to a temp file, fsynced and
renamed; an interrupted apply leaves weights/.pending.json, which tune verify reports and tune repair
resolves. --expect-serial refuses to write when the log has moved past the serial you reviewed.`,
		Example: `  tune apply
  tune apply weights/proposals/p-98cce9bd98d5.json
  tune apply p-98cce9bd98d5 --expect-serial 4 --json`,
		Args: cmdutil.WantArgs(cobra.MaximumNArgs(1), "at most one proposal (default the newest), e.g. tune apply weights/proposals/p-….json"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Proposal = args[0]
			}
			if err := cmdutil.ResolveExpectSerial(cmd, &opts.ExpectSerial); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return applyRun(opts)
		},
	}
	cmdutil.AddExpectSerialFlag(cmd, &opts.ExpectSerial)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

func applyRun(opts *applyOptions) error {
	rep, err := app.Apply(opts.Factory.Env(), opts.Proposal, opts.ExpectSerial)
	if errors.Is(err, store.ErrNothingToDo) && opts.JSON {
		return view.WriteJSON(opts.IO.Out, rep)
	}
	if err != nil {
		return storeNothingToDo(opts.IO, err)
	}
	return view.Print(opts.IO.Out, opts.JSON, rep, view.Apply)
}
