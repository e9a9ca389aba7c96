package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/textfmt"
	"github.com/ldd-tools/tune/internal/weights"
)

// Detection prints the window of every log read (logs, as named), the flagged tasks, the screen
// and the proposal.
func Detection(w io.Writer, det *evolve.Detection, logs []string, tails Tails) error {
	windowed := map[string]bool{}
	for _, l := range det.Window.Logs {
		windowed[l.Source] = true
		median := "unknown"
		if l.Median != nil {
			median = fmt.Sprintf("%.3f", float64(*l.Median))
		}
		// A log is read from its end, so the number of labelled tasks before the window is not known.
		which := fmt.Sprintf("the last %d", l.Tasks)
		if l.Tasks < evolve.WindowSize {
			which = fmt.Sprintf("all %d", l.Tasks)
		}
		termtable.Fprintf(w, "window: %s labelled tasks of %s (%d closed, %d eligible), median loss_final %s\n",
			which, textfmt.OneLine(l.Source), l.Closed, l.Eligible, median)
		if l.ResolvedByActive > 0 || l.Used > 0 {
			termtable.Fprintf(w, "  left out: %d dispatched low but lifted by the active weights, %d already used by an applied change\n",
				l.ResolvedByActive, l.Used)
		}
	}
	for _, l := range logs {
		if !windowed[l] {
			termtable.Fprintf(w, "window: no task with a level label in %s\n", textfmt.OneLine(l))
		}
	}
	state := "not triggered"
	if det.Triggered {
		state = "triggered"
	}
	inWindow := 0
	for _, f := range det.Flagged {
		if f.InWindow {
			inWindow++
		}
	}
	termtable.Fprintf(w, "flagged: %d low-side regression(s) in the windows, trigger at %d: %s; %d counted in the accumulated evidence\n",
		inWindow, evolve.TriggerThreshold, state, det.Accumulated.Flagged)
	if len(det.Flagged) > 0 {
		if err := flaggedTable(w, det.Flagged, tails); err != nil {
			return err
		}
	}
	for _, u := range det.Used {
		termtable.Fprintf(w, "already used: %s %s %q (evidence ledger: supported the change applied as %s)\n",
			tails.At(u.Source, u.Line), u.MetaTimestamp, u.Title, u.By)
	}
	if err := Evidence(w, det); err != nil {
		return err
	}
	if det.Proposal != nil {
		termtable.Fprintf(w, "proposal: %s (%s)\n", det.Proposal, det.Reason)
	} else {
		termtable.Fprintf(w, "proposal: none (%s)\n", det.Reason)
	}
	return nil
}

func flaggedTable(w io.Writer, flagged []evolve.Flagged, tails Tails) error {
	// Where (log:line of the meta line) tells tasks of several logs apart; their timestamps may repeat.
	t := termtable.New(w, "Where", "Meta timestamp", "Level", "Task", "Signals", "Evidence").
		Shrink("Where", "Task", "Signals", "Evidence").Optional("Meta timestamp", "Evidence")
	for _, f := range flagged {
		sigs := make([]string, len(f.Signals))
		for i, s := range f.Signals {
			sigs[i] = s.Name + "=" + weights.Half(s.Weight).String()
		}
		sig := strings.Join(sigs, ", ")
		if f.SignalsSource == evolve.SignalsReDetected {
			sig += " (re-detected)"
		}
		if err := t.Append(tails.At(f.Source, f.Line), f.MetaTimestamp, f.Level, f.Title, dash(sig),
			strings.Join(f.EvidenceStrings(), "; ")); err != nil {
			return err
		}
	}
	return t.Render()
}

// Evidence prints the accumulated evidence (docs/decisions.md#explained): its population, per signal
// the table, the e-value against the threshold and how many more regressions carrying the signal it
// needs, and the expected gain of every change the loss rule weighed.
func Evidence(w io.Writer, det *evolve.Detection) error {
	acc := det.Accumulated
	spent := ""
	if acc.Watermark != "" {
		spent = fmt.Sprintf("; %d eligible task(s) at or before the evidence watermark %s were spent by an applied change", acc.BeforeWatermark, acc.Watermark)
	}
	termtable.Fprintf(w, "accumulated evidence: %d settled eligible task(s) of the logs read, %d flagged; %d not settled yet (%s)%s\n",
		acc.Eligible, acc.Flagged, acc.Pending, evolve.SettlingRule(), spent)
	termtable.Fprintf(w, "test: %s; per signal: a/b carriers flagged/not, c/d the others, e the e-value (of: the threshold), more: the regressions carrying it the test still needs\n", det.Correction)
	if err := screenTable(w, det.Screen); err != nil {
		return err
	}
	if len(det.Gains) > 0 || len(det.Beyond) > 0 {
		termtable.Fprintln(w, "loss rule (expected gain per task: too_low × regressions avoided − too_high × levels raised without need, on the history's tasks):")
		for i, g := range append(append([]evolve.Gain(nil), det.Gains...), det.Beyond...) {
			mark := "  "
			if i == 0 && det.Proposal != nil && g.Change == *det.Proposal {
				mark = "* "
			}
			termtable.Fprintf(w, "%s%s\n", mark, g)
		}
	}
	if len(det.Unpaid) > 0 {
		termtable.Fprintln(w, "loss rule: no change pays for these signals, though the test supports them (each one's step nearest to paying):")
		for _, g := range det.Unpaid {
			termtable.Fprintf(w, "  %s\n", g)
		}
	}
	return nil
}

func screenTable(w io.Writer, rows []evolve.ScreenRow) error {
	// "e" is the e-value, "of" the threshold it needs, "more" the regressions carrying the signal it still
	// needs (the legend line above says so).
	t := termtable.New(w, "Signal", "a", "b", "c", "d", "e", "of", "more", "excess", "Fisher p", "Verdict").
		Key("Signal", "Verdict").Optional("Fisher p", "excess", "of")
	for _, r := range rows {
		// A candidate's confidence is always "strong" since issue 28 (it passed the e-value test): the
		// verdict alone says it, and the column stays narrow enough to keep whole at 80 columns.
		verdict := r.Verdict
		if len(r.TiedWith) > 0 {
			verdict += " from " + strings.Join(r.TiedWith, ", ")
		}
		more := fmt.Sprint(r.MoreNeeded)
		if r.MoreNeeded < 0 {
			more = fmt.Sprintf("> %d", evolve.MaxMoreNeeded)
		}
		if err := t.Append(r.Signal, fmt.Sprint(r.A), fmt.Sprint(r.B), fmt.Sprint(r.C), fmt.Sprint(r.D),
			eValue(r.EValue), fmt.Sprintf("%.0f", float64(r.Threshold)), more, statNum(r.Excess, 2), statNum(r.P, 4), verdict); err != nil {
			return err
		}
	}
	return t.Render()
}

// eValue prints an e-value with three significant digits ("0.0242", "462", "1.81e+03").
func eValue(n evolve.Num) string {
	f := float64(n)
	if f != f {
		return "—"
	}
	s := fmt.Sprintf("%.3g", f)
	if f >= 1e4 || !strings.Contains(s, ".") {
		return s
	}
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

// statNum formats a statistic; NaN (an empty margin) prints as "—".
func statNum(n evolve.Num, decimals int) string {
	f := float64(n)
	if f != f {
		return "—"
	}
	s := fmt.Sprintf("%.*f", decimals, f)
	if strings.Trim(s, "-0.") == "" {
		s = strings.TrimPrefix(s, "-")
	}
	return s
}

// Detect prints tune detect's result: the windows, the flagged tasks, the screen and the proposal.
func Detect(w io.Writer, rep *app.DetectResult) error {
	return Detection(w, rep.Detection, rep.Logs, NewTails(rep.Tails))
}
