package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/weights"
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

type replayReport struct {
	Weights      string        `json:"weights"`
	Scenarios    int           `json:"scenarios"`
	Loss         evolve.Num    `json:"suite_loss"`
	Total        int           `json:"total_loss"`
	Red          int           `json:"red"`
	Rows         []evolve.Row  `json:"rows"`
	Holdout      *replayReport `json:"holdout,omitempty"`
	HoldoutReads *int          `json:"holdout_reads,omitempty"`
}

func newReplayReport(name string, r evolve.Replay) *replayReport {
	return &replayReport{Weights: name, Scenarios: len(r.Rows), Loss: r.Loss, Total: r.Total, Red: r.Red, Rows: r.Rows}
}

func replayRun(opts *replayOptions) error {
	var w weights.Weights
	var name string
	var err error
	if opts.WeightsFile != "" {
		w, err = weights.Load(opts.WeightsFile)
		name = opts.WeightsFile
	} else {
		w, _, err = opts.Env.ReadWeights()
		name = weights.VersionName(w.Version)
	}
	if err != nil {
		return err
	}
	suite, err := opts.Env.LoadSuite()
	if err != nil {
		return err
	}
	rep := newReplayReport(name, evolve.PrepareSuite(suite.Scenarios).Score(&w))
	if opts.Holdout {
		reads := 0
		if len(suite.Holdout) > 0 {
			rep.Holdout = newReplayReport(name, evolve.PrepareSuite(suite.Holdout).Score(&w))
			reads = 1
		}
		rep.HoldoutReads = &reads
	}
	if opts.JSON {
		return storeWriteJSON(opts.IO.Out, rep)
	}
	return printReplay(opts.IO.Out, rep)
}

func printReplay(w io.Writer, rep *replayReport) error {
	if err := replayTable(w, rep.Rows); err != nil {
		return err
	}
	termtable.Fprintf(w, "suite loss %.3f over %d scenarios (total %d, %d red) under %s\n", float64(rep.Loss), rep.Scenarios, rep.Total, rep.Red, rep.Weights)
	if rep.Holdout != nil {
		termtable.Fprintln(w, "holdout (frozen split, never used for a decision):")
		if err := replayTable(w, rep.Holdout.Rows); err != nil {
			return err
		}
		termtable.Fprintf(w, "holdout loss %.3f over %d scenarios (%d red); holdout reads this run: %d\n",
			float64(rep.Holdout.Loss), rep.Holdout.Scenarios, rep.Holdout.Red, *rep.HoldoutReads)
	} else if rep.HoldoutReads != nil {
		termtable.Fprintln(w, "holdout: no scenarios; holdout reads this run: 0")
	}
	return nil
}

func replayTable(w io.Writer, rows []evolve.Row) error {
	t := termtable.New(w, "Scenario", "Accepted", "Got", "Raw", "Dispatch source", "Loss", "Status").
		Shrink("Scenario", "Status").Optional("Dispatch source", "Raw")
	for _, r := range rows {
		status := "ok"
		if r.Red {
			var why []string
			switch {
			case r.LevelsOff < 0:
				why = append(why, fmt.Sprintf("%d too low", -r.LevelsOff))
			case r.LevelsOff > 0:
				why = append(why, fmt.Sprintf("%d too high", r.LevelsOff))
			}
			if !r.SourceOK {
				why = append(why, "source")
			}
			if !r.ItemOK {
				why = append(why, "top-2/fragment")
			}
			if !r.CreativityOK {
				why = append(why, "creativity")
			}
			status = "RED: " + strings.Join(why, ", ")
		}
		if err := t.Append(r.Name, strings.Join(r.Accepted, ","), r.Got, weights.Half(r.Raw).String(), r.Source,
			fmt.Sprint(r.Loss), status); err != nil {
			return err
		}
	}
	return t.Render()
}
