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
			which, l.Source, l.Closed, l.Eligible, median)
		if l.ResolvedByActive > 0 || l.Used > 0 {
			termtable.Fprintf(w, "  left out: %d dispatched low but lifted by the active weights, %d already used by an applied change\n",
				l.ResolvedByActive, l.Used)
		}
	}
	for _, l := range logs {
		if !windowed[l] {
			termtable.Fprintf(w, "window: no task with a level label in %s\n", l)
		}
	}
	state := "not triggered"
	if det.Triggered {
		state = "triggered"
	}
	termtable.Fprintf(w, "flagged: %d low-side regression(s), trigger at %d: %s\n", len(det.Flagged), evolve.TriggerThreshold, state)
	if len(det.Flagged) > 0 {
		if err := flaggedTable(w, det.Flagged, tails); err != nil {
			return err
		}
	}
	for _, u := range det.Used {
		termtable.Fprintf(w, "already used: %s %s %q (evidence ledger: supported the change applied as %s)\n",
			tails.At(u.Source, u.Line), u.MetaTimestamp, u.Title, u.By)
	}
	termtable.Fprintf(w, "screen over %d eligible task(s): %s; %s; a candidate needs an effect of at least %.2f\n",
		det.Window.Eligible, det.Population, det.Correction, det.MinEffect)
	if err := screenTable(w, det.Screen); err != nil {
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

func screenTable(w io.Writer, rows []evolve.ScreenRow) error {
	t := termtable.New(w, "Signal", "a", "b", "c", "d", "effect", "z", "Fisher p", "Holm p", "min p", "Consistent", "Verdict").
		Key("Signal", "Verdict").Optional("z", "min p", "Fisher p", "Consistent", "effect", "Holm p")
	for _, r := range rows {
		verdict := r.Verdict
		if r.Confidence != "" && r.Confidence != r.Verdict {
			verdict += " (" + r.Confidence + ")"
		}
		if len(r.TiedWith) > 0 {
			verdict += " from " + strings.Join(r.TiedWith, ", ")
		}
		if err := t.Append(r.Signal, fmt.Sprint(r.A), fmt.Sprint(r.B), fmt.Sprint(r.C), fmt.Sprint(r.D),
			statNum(r.Effect, 2), statNum(r.Z, 2), statNum(r.P, 4), statNum(r.HolmP, 4), statNum(r.MinP, 4), yesNo(r.Consistent), verdict); err != nil {
			return err
		}
	}
	return t.Render()
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
