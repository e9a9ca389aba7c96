package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// DefaultTraceLog is the log the evolution commands read when no LOG is given.
const DefaultTraceLog = ".ldd/trace.log"

type detectOptions struct {
	IO         *IOStreams
	WeightsDir string
	Logs       []string
	JSON       bool
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
		Long: `Read the last 20 tasks with a level label of each trace log (default ` + DefaultTraceLog + `) and
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
			opts.WeightsDir = f.WeightsDir
			opts.Logs = args
			if runF != nil {
				return runF(opts)
			}
			return detectRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the detection as JSON")
	return cmd
}

type detectReport struct {
	*evolve.Detection
	Logs  []string              `json:"logs"`
	Lines traceparse.LineCounts `json:"lines"`
	// Tails lists the logs read from a byte offset whose line numbers count from there (see
	// absoluteLines); empty for every log of ordinary size.
	Tails []traceparse.Tail `json:"tails,omitempty"`
}

func detectRun(opts *detectOptions) error {
	active, resolver, err := activeWeights(opts.WeightsDir)
	if err != nil {
		return err
	}
	logs, read, err := readTraceLogs(opts.Logs)
	if err != nil {
		return err
	}
	det := evolve.Detect(evolve.DetectInput{Tasks: read.Tasks, Resolver: evolve.Resolver{Active: &active, WeightsFor: resolver}})
	det.Warnings = append(parseWarnings(read), det.Warnings...)
	tails := newTailLines(read)
	printWarnings(opts.IO.ErrOut, det.Warnings, tails)
	rep := detectReport{Detection: det, Logs: logs, Lines: read.Lines, Tails: read.Tails}
	if opts.JSON {
		return storeWriteJSON(opts.IO.Out, rep)
	}
	return printDetection(opts.IO.Out, det, logs, tails)
}

// activeWeights loads the store's active version and a resolver for the versions named by meta
// weights= fields.
func activeWeights(dir string) (weights.Weights, func(string) (*weights.Weights, bool), error) {
	s, err := store.Open(dir, nil)
	if err != nil {
		return weights.Weights{}, nil, err
	}
	active, err := s.Active()
	if err != nil {
		return weights.Weights{}, nil, err
	}
	resolve := func(name string) (*weights.Weights, bool) {
		v, err := weights.ParseVersionName(name)
		if err != nil {
			return nil, false
		}
		w, err := s.Version(v)
		if err != nil {
			return nil, false
		}
		return &w, true
	}
	return active, resolve, nil
}

// readTraceLogs reads the window of every log (the default log when none is given).
func readTraceLogs(paths []string) ([]string, *traceparse.Result, error) {
	if len(paths) == 0 {
		if _, err := os.Stat(DefaultTraceLog); errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("no trace log: %s does not exist here (pass the LOG paths to read)", DefaultTraceLog)
		}
		paths = []string{DefaultTraceLog}
	}
	all := &traceparse.Result{}
	seen := map[string]bool{}
	var read []string
	for _, p := range paths {
		// A log named twice (a shell glob and an explicit path) would double its window.
		key := filepath.Clean(p)
		if seen[key] {
			continue
		}
		seen[key] = true
		read = append(read, p)
		res, err := readWindow(p)
		if err != nil {
			return nil, nil, err
		}
		all.Tasks = append(all.Tasks, res.Tasks...)
		all.Lines.Add(res.Lines)
		all.Warnings = append(all.Warnings, res.Warnings...)
		all.Tails = append(all.Tails, res.Tails...)
	}
	return read, all, nil
}

// readWindow reads enough of a log's tail to hold its last evolve.WindowSize labelled tasks: the tail
// read costs time in proportion to the tasks read, so it starts at twice the window and doubles while
// unlabelled tasks crowd the window out and the file has more.
func readWindow(path string) (*traceparse.Result, error) {
	for n := 2 * evolve.WindowSize; ; n *= 2 {
		res, err := traceparse.ReadLast(path, n)
		if err != nil {
			return nil, err
		}
		labelled := 0
		for i := range res.Tasks {
			if res.Tasks[i].Level != "" {
				labelled++
			}
		}
		if labelled >= evolve.WindowSize || len(res.Tasks) < n {
			return res, absoluteLines(path, res)
		}
	}
}

// maxLineCountPrefix bounds the part of a log before a tail read that is scanned to turn the tail's
// line numbers into the file's. Counting newlines costs time in proportion to that prefix; up to a few
// MB it is negligible, beyond it the tail read's promise (cost in proportion to the tasks read) wins
// and the lines stay counted from the tail, which the output then says.
const maxLineCountPrefix = 16 << 20

// absoluteLines makes the line numbers of a tail read count from the start of the file (warnings,
// tasks and their lines), when the part before the tail is at most maxLineCountPrefix bytes. Errors,
// messages and proposals then name the line an editor shows.
func absoluteLines(path string, res *traceparse.Result) error {
	if len(res.Tails) != 1 || res.Tails[0].Offset > maxLineCountPrefix {
		return nil
	}
	before, err := countLines(path, res.Tails[0].Offset)
	if err != nil {
		return err
	}
	for i := range res.Warnings {
		res.Warnings[i].Line += before
	}
	for i := range res.Tasks {
		t := &res.Tasks[i]
		t.Line += before
		if t.Meta.Line > 0 {
			t.Meta.Line += before
		}
		for j := range t.Entries {
			t.Entries[j].Line += before
		}
	}
	res.Tails = nil
	return nil
}

// countLines counts the lines that end in the first n bytes of the file, with the reader's line
// terminators: \n, \r\n and a lone \r.
func countLines(path string, n int64) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := io.LimitReader(f, n)
	buf := make([]byte, 1<<20)
	lines, prevCR := 0, false
	for {
		k, err := r.Read(buf)
		chunk := buf[:k]
		if bytes.IndexByte(chunk, '\r') < 0 {
			lines += bytes.Count(chunk, []byte{'\n'}) // the usual case: no CR anywhere
			if prevCR && k > 0 && chunk[0] == '\n' {
				lines-- // the \n of a \r\n split across reads, counted at the \r
			}
			prevCR = false
		} else {
			for _, b := range chunk {
				if b == '\r' || b == '\n' && !prevCR {
					lines++
				}
				prevCR = b == '\r'
			}
		}
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

func parseWarnings(res *traceparse.Result) []evolve.Warning {
	out := make([]evolve.Warning, 0, len(res.Warnings))
	for _, w := range res.Warnings {
		out = append(out, evolve.Warning{Source: w.File, Line: w.Line, Reason: w.Reason})
	}
	return out
}

// tailLines maps the logs whose line numbers count from a tail read (the part before it was too long to
// count, see absoluteLines) to the byte offset the read started at.
type tailLines map[string]int64

func newTailLines(res *traceparse.Result) tailLines {
	t := tailLines{}
	for _, tail := range res.Tails {
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
		fmt.Fprintf(w, "tune: warning: %s%s\n", loc, x.Reason)
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
		fmt.Fprintf(w, "window: %s labelled tasks of %s (%d closed, %d eligible), median loss_final %s\n",
			which, l.Source, l.Closed, l.Eligible, median)
	}
	for _, l := range logs {
		if !windowed[l] {
			fmt.Fprintf(w, "window: no task with a level label in %s\n", l)
		}
	}
	state := "not triggered"
	if det.Triggered {
		state = "triggered"
	}
	fmt.Fprintf(w, "flagged: %d low-side regression(s), trigger at %d: %s\n", len(det.Flagged), evolve.TriggerThreshold, state)
	if len(det.Flagged) > 0 {
		if err := flaggedTable(w, det.Flagged, tails); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "screen over %d closed window task(s):\n", det.Window.Closed)
	if err := screenTable(w, det.Screen); err != nil {
		return err
	}
	if det.Proposal != nil {
		fmt.Fprintf(w, "proposal: %s (%s)\n", det.Proposal, det.Reason)
	} else {
		fmt.Fprintf(w, "proposal: none (%s)\n", det.Reason)
	}
	return nil
}

func flaggedTable(w io.Writer, flagged []evolve.Flagged, tails tailLines) error {
	t := storeTable(w, false)
	// Where (log:line of the meta line) tells tasks of several logs apart; their timestamps may repeat.
	t.Header("Where", "Meta timestamp", "Level", "Task", "Signals", "Evidence")
	for _, f := range flagged {
		sigs := make([]string, len(f.Signals))
		for i, s := range f.Signals {
			sigs[i] = s.Name + "=" + weights.Half(s.Weight).String()
		}
		sig := strings.Join(sigs, ", ")
		if f.SignalsSource == evolve.SignalsReDetected {
			sig += " (re-detected)"
		}
		if err := t.Append([]string{tails.at(f.Source, f.Line), f.MetaTimestamp, f.Level, f.Title, dash(sig),
			strings.Join(f.EvidenceStrings(), "; ")}); err != nil {
			return err
		}
	}
	return t.Render()
}

func screenTable(w io.Writer, rows []evolve.ScreenRow) error {
	t := storeTable(w, false)
	t.Header("Signal", "a", "b", "c", "d", "phi", "z", "Fisher p", "Holm p", "min p", "Consistent", "Verdict")
	for _, r := range rows {
		consistent := "no"
		if r.Consistent {
			consistent = "yes"
		}
		verdict := r.Verdict
		if r.Confidence != "" && r.Confidence != r.Verdict {
			verdict += " (" + r.Confidence + ")"
		}
		if err := t.Append([]string{r.Signal, fmt.Sprint(r.A), fmt.Sprint(r.B), fmt.Sprint(r.C), fmt.Sprint(r.D),
			statNum(r.Phi, 2), statNum(r.Z, 2), statNum(r.P, 4), statNum(r.HolmP, 4), statNum(r.MinP, 4), consistent, verdict}); err != nil {
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
