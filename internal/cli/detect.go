package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

type detectOptions struct {
	IO   *IOStreams
	Env  app.Env
	Logs []string
	JSON bool
}

// NewCmdDetect builds `tune detect`.
func NewCmdDetect(f *Factory) *cobra.Command {
	return newCmdDetect(f, nil)
}

func newCmdDetect(f *Factory, runF func(*detectOptions) error) *cobra.Command {
	opts := &detectOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "detect [LOG...]",
		Short: "Find low-side regressions in the last 20 tasks and screen the signals behind them",
		Long: `Read the last 20 tasks with a level label of each trace log (default ` + traceparse.DefaultLog + `) and
look for low-side regressions: tasks dispatched automatically at L0 or L1, closed with a known final
loss, that later regressed. The evidence is any of
  regression_followed=true   on the task's own close line
  regression_of=<timestamp>  a later task in the window names the task's meta timestamp
  same-area                  a later task in the window touches the same code (files= overlap, else file
                             paths named in task/action/layer text) and its final loss is above the
                             window's median final loss (strict; unknown losses excluded)
Tasks dispatched by a user bump or a user override-down never count.

Three or more flagged tasks trigger a proposal. The screen builds, per signal, the 2x2 table
present/absent x flagged/not over the closed tasks of the window, with phi, smoothed log-odds and z,
one-sided Fisher p, Holm-adjusted p, the smallest p those margins allow, and a verdict (candidate,
underpowered, no-signal). The proposal is +1 on the consistent candidate (fired in every flagged task)
with the highest z; without one, a bucket edge moves by one when 3 flagged tasks sit exactly on it;
otherwise there is no consistent pattern, and the flagged tasks are listed.

A task's signals are its meta signals= field; without it they are re-detected from the task title
(marked "re-detected"). A recorded level that disagrees with its recorded signals is a warning.
detect changes nothing; tune propose measures the proposal on the fixture suite.

Several logs are read as several windows (one per log, each with its own median); their flagged
tasks and closed tasks are pooled for the trigger and the screen.

--json prints {"window", "median_loss_final", "flagged": [{"meta_timestamp", "task", "level",
"evidence", "signals", "signals_source", "source", "line", ...}], "triggered", "screen", "proposal":
null | {"kind", "signal" | "edge", "delta"}, "reason", "edge_tasks", "warnings", "logs", "lines"}.
"median_loss_final" is the window median when one log is read (null with several: see
window.logs[].median_loss_final); "source" and "line" locate the task's meta line.`,
		Example: `  tune detect
  tune detect projects/*/.ldd/trace.log --json | jq '.flagged[].evidence'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Env, opts.Logs = f.Env(), args
			if runF != nil {
				return runF(opts)
			}
			var err error
			if opts.Logs, err = f.traceLogs(opts.Logs); err != nil {
				return err
			}
			return detectRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the detection as JSON")
	return cmd
}

func detectRun(opts *detectOptions) error {
	rep, err := app.Detect(opts.Env, opts.Logs)
	if err != nil {
		return err
	}
	tails := newTailLines(rep.Tails)
	printWarnings(opts.IO.ErrOut, rep.Warnings, tails)
	if opts.JSON {
		return storeWriteJSON(opts.IO.Out, rep)
	}
	return printDetection(opts.IO.Out, rep.Detection, rep.Logs, tails)
}

// tailLines maps the logs whose line numbers count from a tail read (the part before it was too long to
// count, see traceparse.AbsoluteLines) to the byte offset the read started at.
type tailLines map[string]int64

func newTailLines(tails []traceparse.Tail) tailLines {
	t := tailLines{}
	for _, tail := range tails {
		t[tail.File] = tail.Offset
	}
	return t
}

// at locates a line of a log: "log:line", or "log: line N of the tail read from byte B" when the line
// counts from a tail.
func (t tailLines) at(source string, line int) string {
	switch off, tailed := t[source]; {
	case line <= 0:
		return source
	case tailed:
		return fmt.Sprintf("%s: line %d of the tail read from byte %d", source, line, off)
	}
	return fmt.Sprintf("%s:%d", source, line)
}

func printWarnings(w io.Writer, warns []evolve.Warning, tails tailLines) {
	for _, x := range warns {
		loc := tails.at(x.Source, x.Line)
		if loc != "" {
			loc += ": "
		}
		termtable.Fprintf(w, "tune: warning: %s%s\n", loc, x.Reason)
	}
}

// printDetection prints the window of every log read (logs, as named), the flagged tasks, the screen
// and the proposal.
func printDetection(w io.Writer, det *evolve.Detection, logs []string, tails tailLines) error {
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
			tails.at(u.Source, u.Line), u.MetaTimestamp, u.Title, u.By)
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

func flaggedTable(w io.Writer, flagged []evolve.Flagged, tails tailLines) error {
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
		if err := t.Append(tails.at(f.Source, f.Line), f.MetaTimestamp, f.Level, f.Title, dash(sig),
			strings.Join(f.EvidenceStrings(), "; ")); err != nil {
			return err
		}
	}
	return t.Render()
}

func screenTable(w io.Writer, rows []evolve.ScreenRow) error {
	t := termtable.New(w, "Signal", "a", "b", "c", "d", "effect", "z", "Fisher p", "Holm p", "min p", "Consistent", "Verdict").
		Shrink("Verdict").Optional("z", "min p", "Fisher p", "Consistent")
	for _, r := range rows {
		consistent := "no"
		if r.Consistent {
			consistent = "yes"
		}
		verdict := r.Verdict
		if r.Confidence != "" && r.Confidence != r.Verdict {
			verdict += " (" + r.Confidence + ")"
		}
		if len(r.TiedWith) > 0 {
			verdict += " from " + strings.Join(r.TiedWith, ", ")
		}
		if err := t.Append(r.Signal, fmt.Sprint(r.A), fmt.Sprint(r.B), fmt.Sprint(r.C), fmt.Sprint(r.D),
			statNum(r.Effect, 2), statNum(r.Z, 2), statNum(r.P, 4), statNum(r.HolmP, 4), statNum(r.MinP, 4), consistent, verdict); err != nil {
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
