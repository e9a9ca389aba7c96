package cli

import (
	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/view"
)

type replayOptions struct {
	IO          *IOStreams
	Env         app.Env // the weights store and the fixture suite (built-in outside a project)
	WeightsFile string
	Holdout     bool
	JSON        bool
}

// NewCmdReplay builds `tune replay`.
func NewCmdReplay(f *Factory) *cobra.Command {
	return newCmdReplay(f, nil)
}

func newCmdReplay(f *Factory, runF func(*replayOptions) error) *cobra.Command {
	opts := &replayOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Score every fixture scenario under a weights version and print the suite loss",
		Long: `Score the fixture suite (<fixtures-dir>/suite and harvested/) under the active weights, or under
the weights file given with --weights. Each prompt is detected once; the weights only re-weigh.

The loss of a scenario follows the fixture rubric with the cost matrix of the weights file: a level
below the accepted range costs too_low per level missed, above it too_high per level, and a wrong
dispatch source or a wrong named top-2 / fragment costs other_item each. The suite loss is the mean.
A scenario is red when its loss is above 0 or its named creativity differs.

--holdout also scores the frozen holdout split (<fixtures-dir>/holdout). It never takes part in a
decision; the read is counted in the output so that nobody tunes against it unnoticed.

--json prints {"weights", "scenarios", "suite_loss", "total_loss", "red", "rows": [...]} and, with
--holdout, "holdout" and "holdout_reads".`,
		Example: `  tune replay
  tune replay --weights weights/v0002.toml --json | jq '.rows[] | select(.red)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Env = f.Env()
			if runF != nil {
				return runF(opts)
			}
			return replayRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.WeightsFile, "weights", "", "score under this weights `file` instead of the active version")
	cmd.Flags().BoolVar(&opts.Holdout, "holdout", false, "also score the frozen holdout split (counted as a read)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the replay as JSON")
	return cmd
}

func replayRun(opts *replayOptions) error {
	rep, err := app.Replay(opts.Env, opts.WeightsFile, opts.Holdout)
	if err != nil {
		return err
	}
	return view.Print(opts.IO.Out, opts.JSON, rep, view.Replay)
}
