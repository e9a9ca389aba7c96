package cli

import (
	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/view"
)

type exploreOptions struct {
	IO   *IOStreams
	Env  app.Env
	Logs []string
	JSON bool
}

// NewCmdExplore builds `tune explore`.
func NewCmdExplore(f *Factory) *cobra.Command {
	return newCmdExplore(f, nil)
}

func newCmdExplore(f *Factory, runF func(*exploreOptions) error) *cobra.Command {
	opts := &exploreOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "explore [LOG...]",
		Short: "Compare the two recorded arms of the [explore] draw: does one level more help near an edge?",
		Long: `Read the trace logs (default ` + traceparse.DefaultLog + `) and compare, per level edge (L0→L1 … L3→L4),
the two arms that tune score --log recorded with an [explore] table in tune.toml (off by default):

  control  near-edge tasks dispatched at the scorer's level (dispatch=auto, explore=control)
  raised   near-edge tasks dispatched one level higher (dispatch=explore, explore=raised)

The draw is random (sha256 of the meta timestamp and title against explore.share), so the two arms
differ only by the level: a difference between them is the level's effect, measured, not inferred.

Per arm: the settled tasks (closed with a known final loss, 20 labelled tasks later or in a log quiet
for 7 days) of those recorded; regressed, by the detection's own evidence (regression_followed=true,
regression_of= from a later task within 20, or two corroborating same-area failures, as tune detect
--help says); and overkill as tune accuracy defines it (only a task run at L3/L4 can be one). Rates
come with 95% Wilson intervals, the difference control − raised with Newcombe's interval. The test is
an anytime-valid e-value that the control arm regresses more (the detection's 2x2 e-value, the arms
compared within each log and each recorded share, explore_share=), so it may be read every night; over the four edges a difference needs e ≥ 4/0.05 = 80. "too few to tell" means
that even if every control task had regressed and no raised one, e could not reach 80.

tune explore informs a human decision (a bucket edge or a signal weight to change by hand, or
explore.share to raise or set back to 0); tune evolve never reads it. The raised arm's cost is one
level per raised task, counted as extra levels.

--json prints {"config": {"share", "margin"}, "logs", "alpha", "threshold", "edges": [{"edge",
"from", "to", "control" and "raised": {"recorded", "settled", "regressed", "overkill"}, with each rate
{k, n, rate, lo, hi} (overkill null below L3), "regression_difference": {"estimate", "lo", "hi"},
"e_value", "verdict", "overkill_difference", and "attrition" when the arms settle at different
rates}], "extra_levels", "inconsistent", "inconsistent_examples", "lines", "warnings"}.`,
		Example: `  tune explore
  tune explore projects/*/.ldd/trace.log --json | jq '.edges[] | {edge, verdict}'`,
		RunE: logsRunE(f, opts, &opts.Env, &opts.Logs, runF, exploreRun),
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the comparison as JSON")
	return cmd
}

func exploreRun(opts *exploreOptions) error {
	rep, err := app.Explore(opts.Env, opts.Logs)
	if err != nil {
		return err
	}
	view.Warnings(opts.IO.ErrOut, rep.Warnings, nil)
	return view.Print(opts.IO.Out, opts.JSON, rep, view.Explore)
}
