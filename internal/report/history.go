package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/accuracy"
	"github.com/ldd-tools/tune/internal/textfmt"
	"github.com/ldd-tools/tune/internal/weights"
)

// HistoryReport is the weights store over time: every version and every logged attempt or action.
type HistoryReport struct {
	Active   int               // the active version
	Versions []weights.Weights // every version file, in version order
	Entries  []HistoryEntry    // the evolution log, in serial order
	// Accuracy is the dispatch accuracy of the tasks under each version, in version order (nil when no
	// trace log was given).
	Accuracy []accuracy.Group
}

// HistoryEntry is one line of the evolution log (weights/evolution.jsonl), without its hashes.
type HistoryEntry struct {
	Serial   int
	Time     time.Time
	Action   string // init | propose-attempt | accept | halve | revert | apply | rollback | repair
	Parent   int    // active version when the action started
	Result   int    // version written or made active, 0 when none
	Restores int    // for a rollback: the version whose content the result repeats
	Proposal string
	Change   string // e.g. "ambiguous +1"
	Decision weights.Decision
	// SuiteLossBefore and SuiteLossAfter are nil when the entry measured nothing (init, rollback …).
	SuiteLossBefore, SuiteLossAfter *float64
	Evidence                        int // number of evidence items (their text stays in the log)
	Reason                          string
}

// HistoryBase is the file stem of a history report: history-<first 12 hex of the input's sha256>, so a
// new log entry or version gives a new report and an unchanged store the same one.
func HistoryBase(in HistoryReport) string { return "history-" + inputHash(in) }

// RenderHistory renders the history report: history-<hash>.md, history-<hash>-loss.svg (suite loss by
// generation, accepted and rolled-back steps marked; omitted before the first measured attempt) and
// history-<hash>-weights.svg (weight trajectory of every weight that changed; omitted while none has).
func RenderHistory(in HistoryReport) ([]File, error) {
	r := &renderSet{base: HistoryBase(in)}
	w := &r.md
	red := &redactions{}
	fmt.Fprintf(w, "# EVAL: weights history\n\n")
	last := 0
	if n := len(in.Entries); n > 0 {
		last = in.Entries[n-1].Serial
	}
	fmt.Fprintf(w, "Active version **%s** · %d %s · %d evolution log %s (last serial %d).\n\n",
		weights.VersionName(in.Active), len(in.Versions), textfmt.Form(len(in.Versions), "version", "versions"),
		len(in.Entries), textfmt.Form(len(in.Entries), "entry", "entries"), last)

	// The charts HistoryCharts lists, each placed in its section: make charts renders that same list.
	charts := HistoryCharts(in)
	fmt.Fprintf(w, "## Suite loss by generation\n\n")
	if chart, ok := chartNamed(charts, "loss"); ok {
		fmt.Fprintf(w, "Each marker is one logged step at its serial: where an attempt's candidate landed and what was decided, or the version an apply or rollback made active. The line is the suite loss of the active weights.\n\n")
		if err := r.chart("loss", "suite loss by generation", chart); err != nil {
			return nil, err
		}
	} else {
		fmt.Fprintf(w, "_No measured attempt in the log yet._\n\n")
	}

	if err := historyVersions(w, in, red); err != nil {
		return nil, err
	}
	if err := historyEntries(w, in.Entries, red); err != nil {
		return nil, err
	}
	if err := historyTrajectory(r, in, charts); err != nil {
		return nil, err
	}
	if err := historyAccuracy(r, in.Accuracy, charts); err != nil {
		return nil, err
	}
	red.footnote(w)
	return r.files(), nil
}

// WriteHistory renders the history report and writes it under dir; it returns the written paths
// (Markdown first).
func WriteHistory(dir string, in HistoryReport) ([]string, error) {
	files, err := RenderHistory(in)
	if err != nil {
		return nil, err
	}
	return WriteFiles(dir, files)
}

// outcome is how an entry is marked in the loss chart.
func outcome(e HistoryEntry) (MarkStyle, bool) {
	d := e.Action
	if d == "propose-attempt" {
		d = string(e.Decision)
	}
	switch d { // an action, or an attempt's decision
	case string(weights.DecisionAccept):
		return MarkAccepted, true
	case string(weights.DecisionHalve):
		return MarkHalved, true
	case string(weights.DecisionRevert):
		return MarkReverted, true
	case "rollback":
		return MarkRolledBack, true
	case "apply":
		return MarkNeutral, true
	}
	return 0, false
}

var markNames = map[MarkStyle]string{
	MarkAccepted:   "accepted",
	MarkHalved:     "accepted (half step)",
	MarkReverted:   "reverted",
	MarkRolledBack: "rolled back (tune rollback)",
	MarkNeutral:    "applied (new version)",
}

// historyLossChart places every measured attempt at (serial, suite loss after), shaped by its decision, over
// a staircase of the active weights' suite loss. Apply and rollback entries rarely carry losses; they are
// placed at the loss their proposal measured, or the restored version's, when one is known.
func historyLossChart(in HistoryReport) (LineChart, bool) {
	chart := LineChart{Title: "Suite loss by generation", XLabel: "evolution log serial",
		YLabel: "suite loss (mean per scenario)", YFromZero: true}
	versionLoss := map[int]float64{}
	marks := map[MarkStyle][]XY{}
	var active []XY // suite loss of the active weights, where known
	measured := 0
	for _, e := range in.Entries {
		x := float64(e.Serial)
		if e.SuiteLossBefore != nil {
			versionLoss[e.Parent] = *e.SuiteLossBefore
			active = append(active, XY{x, *e.SuiteLossBefore})
		}
		style, ok := outcome(e)
		if !ok {
			continue
		}
		switch {
		case e.Action == "apply" || e.Action == "rollback":
			// A new active version: its loss is what its proposal measured, or the restored version's.
			known, ok := versionLoss[e.Restores]
			if e.Action == "apply" {
				known, ok = lossOfProposal(in.Entries, e)
			}
			if e.SuiteLossAfter != nil {
				known, ok = *e.SuiteLossAfter, true
			}
			if ok {
				marks[style] = append(marks[style], XY{x, known})
				active = append(active, XY{x, known})
				versionLoss[e.Result] = known
			}
		case e.SuiteLossAfter != nil:
			marks[style] = append(marks[style], XY{x, *e.SuiteLossAfter})
			measured++
		}
	}
	if measured == 0 {
		return chart, false
	}
	if len(active) > 0 {
		chart.Lines = []LineSeries{{Name: "active weights", Points: active, Step: true}}
	}
	for _, s := range []MarkStyle{MarkAccepted, MarkHalved, MarkReverted, MarkNeutral, MarkRolledBack} {
		if len(marks[s]) > 0 {
			chart.Marks = append(chart.Marks, MarkSeries{Name: markNames[s], Style: s, Points: marks[s]})
		}
	}
	return chart, true
}

// lossOfProposal is the suite loss after of the last accepted attempt of the proposal an apply applied.
func lossOfProposal(entries []HistoryEntry, apply HistoryEntry) (float64, bool) {
	loss, ok := 0.0, false
	for _, e := range entries {
		if e.Serial >= apply.Serial {
			break
		}
		if e.Proposal == apply.Proposal && e.Proposal != "" && e.SuiteLossAfter != nil {
			if s, _ := outcome(e); s == MarkAccepted || s == MarkHalved {
				loss, ok = *e.SuiteLossAfter, true
			}
		}
	}
	return loss, ok
}

func historyVersions(w io.Writer, in HistoryReport, red *redactions) error {
	if !section(w, "Versions", len(in.Versions), "No version file.") {
		return nil
	}
	byVersion := map[int]weights.Weights{}
	for _, v := range in.Versions {
		byVersion[v.Version] = v
	}
	rows := make([][]string, len(in.Versions))
	for i, v := range in.Versions {
		name := weights.VersionName(v.Version)
		if v.Version == in.Active {
			name = "**" + name + "** (active)"
		}
		parent, changes := "–", "–"
		if v.Parent > 0 {
			parent = weights.VersionName(v.Parent)
			if p, ok := byVersion[v.Parent]; ok {
				changes = strings.Join(weightChanges(p, v), ", ")
				if changes == "" {
					changes = "none"
				}
			}
		}
		rows[i] = []string{name, parent, v.Created.UTC().Format(time.RFC3339), changes, red.safe(v.Reason)}
	}
	return tableBlock(w, []Column{Text("version"), Text("parent"), Text("created"), Text("changes from parent"), Text("reason")}, rows)
}

// weightChanges lists the weights that differ between a and b: "ambiguous 2 → 3".
func weightChanges(a, b weights.Weights) []string {
	var out []string
	for _, s := range weights.Signals() {
		if a.Signals[s] != b.Signals[s] {
			out = append(out, fmt.Sprintf("%s %s → %s", s, a.Signals[s].Plain(), b.Signals[s].Plain()))
		}
	}
	for i := range a.Buckets.Edges {
		if a.Buckets.Edges[i] != b.Buckets.Edges[i] {
			out = append(out, fmt.Sprintf("%s edge %s → %s", weights.Level(i), a.Buckets.Edges[i].Plain(), b.Buckets.Edges[i].Plain()))
		}
	}
	return out
}

func historyEntries(w io.Writer, entries []HistoryEntry, red *redactions) error {
	if !section(w, "Every attempt and action", len(entries), "The evolution log is empty.") {
		return nil
	}
	rows := make([][]string, len(entries))
	for i, e := range entries {
		versions := "–"
		if e.Parent != 0 {
			versions = weights.VersionName(e.Parent)
		}
		if e.Result != 0 {
			versions += " → " + weights.VersionName(e.Result)
		}
		if e.Restores != 0 {
			versions += " (= " + weights.VersionName(e.Restores) + ")"
		}
		before, after, delta := "–", "–", "–"
		if e.SuiteLossBefore != nil {
			before = fmtLoss(*e.SuiteLossBefore)
		}
		if e.SuiteLossAfter != nil {
			after = fmtLoss(*e.SuiteLossAfter)
		}
		if e.SuiteLossBefore != nil && e.SuiteLossAfter != nil {
			delta = fmtDelta(*e.SuiteLossAfter - *e.SuiteLossBefore)
		}
		evidence := "–"
		if e.Evidence > 0 {
			evidence = strconv.Itoa(e.Evidence)
		}
		rows[i] = []string{strconv.Itoa(e.Serial), e.Time.UTC().Format(time.RFC3339), e.Action, versions,
			red.safe(e.Change), red.safe(string(e.Decision)), before, after, delta, evidence, red.safe(e.Proposal), red.safe(e.Reason)}
	}
	cols := []Column{Num("serial"), Text("time"), Text("action"), Text("versions"), Text("change"), Text("decision"),
		Num("suite loss before"), Num("after"), Num("Δ"), Num("evidence"), Text("proposal"), Text("reason")}
	return tableBlock(w, cols, rows)
}

// trajectoryKnobs are the weights (signals, then bucket edges) that differ between any two versions.
func trajectoryKnobs(versions []weights.Weights) (signals []weights.Signal, edges []int) {
	if len(versions) == 0 {
		return nil, nil
	}
	first := versions[0]
	for _, s := range weights.Signals() {
		for _, v := range versions[1:] {
			if v.Signals[s] != first.Signals[s] {
				signals = append(signals, s)
				break
			}
		}
	}
	for i := range first.Buckets.Edges {
		for _, v := range versions[1:] {
			if v.Buckets.Edges[i] != first.Buckets.Edges[i] {
				edges = append(edges, i)
				break
			}
		}
	}
	return signals, edges
}

func historyTrajectoryChart(in HistoryReport) (LineChart, bool) {
	signals, edges := trajectoryKnobs(in.Versions)
	chart := LineChart{Title: "Weight trajectory by version", XLabel: "weights version", YLabel: "weight (points)",
		YIntegers: true, XTickLabel: func(x float64) string { return weights.VersionName(int(x)) }}
	for _, s := range signals {
		series := LineSeries{Name: s.String(), Step: true}
		for _, v := range in.Versions {
			series.Points = append(series.Points, XY{float64(v.Version), v.Signals[s].Float()})
		}
		chart.Lines = append(chart.Lines, series)
	}
	for _, i := range edges {
		series := LineSeries{Name: weights.Level(i).String() + " bucket edge", Step: true}
		for _, v := range in.Versions {
			series.Points = append(series.Points, XY{float64(v.Version), v.Buckets.Edges[i].Float()})
		}
		chart.Lines = append(chart.Lines, series)
	}
	return chart, len(chart.Lines) > 0
}

func historyTrajectory(r *renderSet, in HistoryReport, charts []NamedChart) error {
	w := &r.md
	fmt.Fprintf(w, "## Weight trajectory\n\n")
	chart, ok := chartNamed(charts, "weights")
	if !ok {
		fmt.Fprintf(w, "_No weight has changed since %s._\n\n", firstVersionName(in.Versions))
		return nil
	}
	cols := []Column{Text("version")}
	for _, l := range chart.Lines {
		cols = append(cols, Num(l.Name))
	}
	rows := make([][]string, len(in.Versions))
	for i, v := range in.Versions {
		rows[i] = []string{weights.VersionName(v.Version)}
		for _, l := range chart.Lines {
			rows[i] = append(rows[i], fmtLoss(l.Points[i].Y))
		}
	}
	if err := WriteTable(w, cols, rows); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nWeights not listed are unchanged since %s.\n\n", firstVersionName(in.Versions))
	return r.chart("weights", "weight trajectory by version", chart)
}

func firstVersionName(vs []weights.Weights) string {
	if len(vs) == 0 {
		return "the first version"
	}
	return weights.VersionName(vs[0].Version)
}

// historyAccuracy is the dispatch-accuracy section: per weights version, the tasks dispatched under it
// and their mis-dispatch rates with 95% Wilson intervals, and the calibration chart — per level the
// rate of the definition that applies there (underkill at L0/L1, overkill at L3/L4), one line per
// version, so the chart shows each applied version against the one before (docs/decisions.md#watch).
func historyAccuracy(r *renderSet, groups []accuracy.Group, charts []NamedChart) error {
	if groups == nil {
		return nil
	}
	w := &r.md
	fmt.Fprintf(w, "## Dispatch accuracy by weights version\n\n")
	if len(groups) == 0 {
		fmt.Fprintf(w, "_No closed task in the trace logs._\n\n")
		return nil
	}
	fmt.Fprintf(w, "Closed tasks of the trace logs by the version they were dispatched under (their `weights=`, else the version active at their meta time). Rates are k/n with a 95%% Wilson interval; underkill = L0/L1 that failed, aborted or needed ≥ 5 iterations, overkill = L3/L4 complete in ≤ 1 iteration at final loss ≤ 0.01.\n\n")
	fmt.Fprintf(w, "| version | tasks | with level | underkill L0 | underkill L1 | overkill L3 | overkill L4 | underkill | overkill |\n|---|---:|---:|---|---|---|---|---|---|\n")
	for _, g := range groups {
		iv := &g.Intervals
		fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %s | %s | %s | %s |\n", Cell(g.Key), g.Summary.NTasksTotal, g.Summary.NTasksWithLevel,
			rateCell(iv.At(0).Underkill), rateCell(iv.At(1).Underkill), rateCell(iv.At(3).Overkill), rateCell(iv.At(4).Overkill),
			rateCell(iv.Overall.Underkill), rateCell(iv.Overall.Overkill))
	}
	fmt.Fprintln(w)
	chart, ok := chartNamed(charts, "calibration")
	if !ok {
		fmt.Fprintf(w, "_No task at L0, L1, L3 or L4: nothing to chart._\n\n")
		return nil
	}
	return r.chart("calibration", "mis-dispatch rate per level by weights version", chart)
}

// historyCalibrationChart is the calibration chart of the accuracy section: per level the rate of the
// definition that applies there (underkill at L0/L1, overkill at L3/L4) with its interval as an error
// bar, one line per version; ok is false when no version ran a task at those levels.
func historyCalibrationChart(groups []accuracy.Group) (chart LineChart, ok bool) {
	chart = LineChart{Title: "Calibration: mis-dispatch rate per level, by weights version", XLabel: "dispatched level (0 = L0 … 4 = L4)",
		YLabel: "underkill (L0, L1) / overkill (L3, L4) rate", YFromZero: true}
	// The versions' points at one level are set a little apart (at most ±0.2) so that their error
	// bars do not hide one another.
	spread := min(0.08, 0.4/float64(max(1, len(groups)-1)))
	for i, g := range groups {
		var s LineSeries
		s.Name = g.Key
		dx := (float64(i) - float64(len(groups)-1)/2) * spread
		for _, lvl := range []int{0, 1, 3, 4} {
			rate := g.Intervals.At(lvl).Overkill
			if lvl < 2 {
				rate = g.Intervals.At(lvl).Underkill
			}
			if rate.N == 0 {
				continue
			}
			s.Points = append(s.Points, XY{float64(lvl) + dx, rate.Rate})
			s.Lo, s.Hi = append(s.Lo, rate.Lo), append(s.Hi, rate.Hi)
		}
		ok = ok || len(s.Points) > 0
		chart.Lines = append(chart.Lines, s)
	}
	return chart, ok
}

func rateCell(r accuracy.Rate) string {
	if r.N == 0 {
		return "—"
	}
	return fmt.Sprintf("%d/%d (%.0f%%, %.0f–%.0f%%)", r.K, r.N, 100*r.Rate, 100*r.Lo, 100*r.Hi)
}
