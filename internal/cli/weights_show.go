package cli

import (
	"regexp"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/cmdutil"
	"github.com/ldd-tools/tune/internal/view"
	"github.com/ldd-tools/tune/internal/weights"
)

// NewCmdWeights builds the `tune weights` group.
func NewCmdWeights(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "weights <command>",
		Short: "Inspect weights versions",
		Long:  "Inspect the versions in the weights store. See also tune history, tune diff, tune verify.",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newCmdWeightsShow(f, nil))
	return cmd
}

type weightsShowOptions struct {
	IO         *IOStreams
	WeightsDir string
	Ref        string // version, "active" or a proposal; default active
	JSON       bool
}

func newCmdWeightsShow(f *Factory, runF func(*weightsShowOptions) error) *cobra.Command {
	opts := &weightsShowOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "show [VERSION]",
		Short: "Print one weights version: signal weights, bucket edges, cost matrix",
		Long: `Print a weights version: the nine signal weights, the bucket edges that cut a raw score into
L0..L4 (inclusive upper edges; L4 is everything above L3) and the replay cost matrix.

VERSION is v0002, 2, "active" (the default: the version the evolution log made active), or a
proposal file or id (its candidate weights).

--json prints {"version", "signals": {name: weight}, "buckets": {"L0".."L3": edge}, "cost": {...}}
plus parent, active, created, reason and evidence.`,
		Example: `  tune weights show
  tune weights show v0001
  tune weights show --json | jq '.signals.ambiguous'`,
		Args: cmdutil.WantArgs(cobra.MaximumNArgs(1), "at most one version (default the active one), e.g. tune weights show v0002"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.WeightsDir = f.WeightsDir
			opts.Ref = "active"
			if len(args) == 1 {
				opts.Ref = args[0]
			}
			if err := checkWeightsRef(opts.Ref); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return weightsShowRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the version as JSON")
	return cmd
}

func weightsShowRun(opts *weightsShowOptions) error {
	ref, err := app.ResolveWeightsRef(opts.WeightsDir, opts.Ref)
	if err != nil {
		return err
	}
	if opts.JSON {
		return view.WriteJSON(opts.IO.Out, ref.Doc())
	}
	return view.Weights(opts.IO.Out, ref)
}

// versionLike matches what can only be meant as a version number: v0002, V2, 0, -1.
var versionLike = regexp.MustCompile(`^[vV]?-?[0-9]+$`)

// checkWeightsRef refuses, as a usage error, a reference that reads as a version number but names none
// (0, v0000, -1): versions start at v0001, as rollback --to says. Anything else is looked up as a
// version, "active" or a proposal file or id.
func checkWeightsRef(ref string) error {
	if _, err := weights.ParseVersionName(ref); err != nil && versionLike.MatchString(ref) {
		return FlagErrorf("%q is not a weights version: versions start at v0001", ref)
	}
	return nil
}
