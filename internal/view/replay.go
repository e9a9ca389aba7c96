package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/weights"
)

// Replay prints the per-scenario replay, the suite loss and, when read, the holdout.
func Replay(w io.Writer, rep *app.ReplayResult) error {
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
		Key("Scenario").Shrink("Status").Optional("Dispatch source", "Raw")
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
