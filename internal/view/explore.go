package view

import (
	"fmt"
	"io"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/explore/compare"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/textfmt"
)

// Explore prints tune explore: the draw's setting, a table of the two arms per level edge, and what
// each edge's comparison says.
func Explore(w io.Writer, r *app.ExploreResult) error {
	state := "off"
	if r.Config.On() {
		state = fmt.Sprintf("share %g", r.Config.Share)
	}
	termtable.Fprintf(w, "explore: %s, margin %g score points below a level's edge · the raised arm spent %s\n", state, r.Config.Margin, textfmt.Plural(r.ExtraLevels, "extra level"))
	termtable.Fprintf(w, "test: anytime-valid e-value that the control arm regresses more, Bonferroni over the %d edges: a difference needs e ≥ %d/%g = %g; rates with 95%% Wilson intervals, the difference with Newcombe's\n",
		compare.Edges, compare.Edges, r.Alpha, r.Threshold)
	t := termtable.New(w, "Edge", "Control", "Raised", "Regressed (control)", "Regressed (raised)", "Difference", "e", "Overkill (control)", "Overkill (raised)", "Verdict").
		Key("Edge", "Verdict").Optional("Overkill (control)", "Overkill (raised)")
	for _, e := range r.Edges {
		over := func(a compare.Arm) string {
			if a.Overkill == nil {
				return "—"
			}
			return fmtRate(*a.Overkill)
		}
		if err := t.Append(e.Edge, settled(e.Control), settled(e.Raised), fmtRate(e.Control.Regressed), fmtRate(e.Raised.Regressed),
			fmtDiff(e.RegressionDifference, e.Control.Settled > 0 && e.Raised.Settled > 0), fmt.Sprintf("%.3g", e.EValue), over(e.Control), over(e.Raised), e.Verdict); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	waiting, recorded := 0, 0
	for _, e := range r.Edges {
		waiting += e.Control.Recorded - e.Control.Settled + e.Raised.Recorded - e.Raised.Settled
		recorded += e.Control.Recorded + e.Raised.Recorded
	}
	if recorded == 0 {
		termtable.Fprintf(w, "no task of these logs records an arm (explore= on its meta line): tune score --log draws them once [explore] share is set in tune.toml\n")
	}
	if waiting > 0 {
		termtable.Fprintf(w, "%s not compared yet: open, without a final loss, or not settled (%s)\n",
			textfmt.Plural(waiting, "recorded task"), evolve.SettlingRule())
	}
	termtable.Fprintf(w, "columns: Control and Raised are the arms' settled tasks of those recorded; Difference is control − raised regression rate (positive: the higher level regresses less)\n")
	for _, e := range r.Edges {
		if e.Attrition != "" {
			termtable.Fprintf(w, "%s: %s\n", e.Edge, e.Attrition)
		}
	}
	for _, e := range r.Edges {
		if e.OverkillDifference != nil && e.Control.Settled > 0 && e.Raised.Settled > 0 {
			termtable.Fprintf(w, "%s overkill: raised − control %s\n", e.Edge, fmtDiff(*e.OverkillDifference, true))
		}
	}
	told := false
	for _, e := range r.Edges {
		told = told || e.Verdict != compare.TooFew
	}
	if !told {
		termtable.Fprintf(w, "too few explored tasks to tell at any edge: even if every control task had regressed and no raised one, e would stay below %g\n", r.Threshold)
	}
	if r.Inconsistent > 0 {
		termtable.Fprintf(w, "%s in neither arm: their own line contradicts them\n", textfmt.Plural(r.Inconsistent, "explore= record"))
		for _, x := range r.Examples {
			termtable.Fprintf(w, "  %s: %s\n", x.Where(), x.Reason)
		}
	}
	return nil
}

func settled(a compare.Arm) string {
	if a.Recorded == 0 {
		return "0"
	}
	return fmt.Sprintf("%d of %d", a.Settled, a.Recorded)
}

func fmtDiff(d compare.Difference, any bool) string {
	if !any {
		return "—"
	}
	return fmt.Sprintf("%+.0f%% [%+.0f%%, %+.0f%%]", 100*d.Estimate, 100*d.Lo, 100*d.Hi)
}
