// Package scorecmd is `tune score`, the command agents call once per task. It lives apart from
// internal/cli so that the light front end (cmd/tune) can run it without linking the rest of tune:
// the plotting stack's package initialisation (gonum/plot loads its fonts at init) and the table
// library cost more than the scoring itself (docs/decisions.md#score-start-up). The full command tree
// registers the same command, so both paths behave identically.
package scorecmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/ldd-tools/tune/internal/cmdutil"
	"github.com/ldd-tools/tune/internal/exitcode"
	"github.com/ldd-tools/tune/internal/explore"
	"github.com/ldd-tools/tune/internal/project"
	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/scorer"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/tracewrite"
	"github.com/ldd-tools/tune/internal/weights"

	"github.com/ldd-tools/tune/internal/redact"
)

// historyTasks is how many recent tasks of a trace log give the file history (the reference's "last 20
// runs" of unknown-file-territory).
const historyTasks = 20

// TitleRunes is the longest task title --log writes when --task is not given.
const TitleRunes = 80

// Env is what the command takes from its host: the streams, the clock, the environment, the root's
// --weights-dir (read when the command runs, after the flags are parsed).
type Env struct {
	In          io.Reader
	Out, ErrOut io.Writer
	Now         func() time.Time
	Getenv      func(string) string
	WeightsDir  *string
	// Quiet (--quiet) drops the note that the built-in weights are used.
	Quiet *bool
}

// Options are the parsed flags and arguments of one `tune score` run.
type Options struct {
	Env *Env

	Prompt    string
	FromStdin bool // no PROMPT, or "-"

	JSON        bool
	WeightsFile string
	WeightsDir  string
	// WeightsDirChosen is true when --weights-dir or TUNE_WEIGHTS_DIR named the store; otherwise a
	// missing ./weights falls back to the built-in reference weights.
	WeightsDirChosen bool
	HistoryLog       string
	Batch            string // file or "-"

	Log string
	// ProjectLog (--project-log) appends to the project's trace log (project.ProjectTraceLog) from any
	// subdirectory: the hook line `tune init` prints.
	ProjectLog bool
	Task       string
	TaskSet    bool
	Loops      []string
	LoopsSet   bool
	// RegressionOf (a meta timestamp) or RegressionOfLast (a file) names the earlier task of the --log
	// trace that this one regressed; the meta line records it as regression_of=.
	RegressionOf     string
	RegressionOfLast string
}

// NewCmd builds `tune score`; runF, when not nil, replaces the run (tests check flag parsing with it).
func NewCmd(env *Env, runF func(*Options) error) *cobra.Command {
	opts := &Options{Env: env}
	cmd := &cobra.Command{
		Use:   "score [PROMPT | -]",
		Short: "Score a task prompt like the LDD reference scorer and print its dispatch header",
		Long: `Score a task prompt with the LDD thinking-levels scorer and print the one-line dispatch header,
byte for byte what scripts/level_scorer.py prints, but with the signal weights and bucket edges of the
active weights version (or of --weights FILE).

The prompt is the argument; without one, or with "-", it is read from stdin. A prompt that starts
with "-" must follow "--".

--json prints the reference JSON payload (raw_score, auto_level, final_level, creativity,
dispatch_source, signals, clamp_reason, override_fragment, dispatch_header) plus weights_version.

--history TRACE lets unknown-file-territory fire: the file history is every path named in the last 20
tasks of that trace log (files=, task titles, action= and layer= text). Without --history there is no
history and, as in the reference, the signal never fires; a --history log that does not exist is an
error, so a mistyped path cannot silently turn the signal off.

--batch FILE (or - for stdin) scores JSON Lines {"prompt": "...", "history": [...] or null}, other
keys ignored, and writes one compact JSON result per line, in order. A bad line stops the run with its
line number, before anything is printed.

--project-log appends it to the project's trace log: .ldd/trace.log in the directory of the nearest
tune.toml above (else the repository root), the same file from any subdirectory. It is the hook line
tune init prints; a relative --log TRACE is relative to the working directory.

--log TRACE also appends the decision to a trace log as a v0.13 meta line (created with its folder when
missing; one locked write, so agents writing at once never interleave):
  <ts>  meta  L3/structural  creativity=standard  dispatch=auto  signals=cross-layer:+2,…  weights=v0001  task="…"  loops=design,inner
The task title defaults to the prompt on one line, cut at 80 characters; the loops default to the
level's: inner for L0-L2, design,inner for L3/L4 (the architect protocol's design phase first).

--regression-of TIMESTAMP records that this task is the regression of an earlier one: the meta line
gets regression_of=<that task's meta timestamp>, the structured evidence tune detect, tune evolve
and tune watch read. TIMESTAMP is the earlier task's meta timestamp in any RFC 3339 form; it is
written as the log holds it. --regression-of-last FILE names instead the last task of the log that
touched FILE (files=, or a path in its title, action= or layer=). Either needs --log; a task the log
does not hold is an error and nothing is written.

With an [explore] table in the project's tune.toml (share > 0; off by default), --log draws each
near-edge task (an auto dispatch whose score lies less than explore.margin points below the upper
edge of its level, below L4) into one of two recorded arms, from the sha256 of its meta timestamp and
title: with probability share it is dispatched one level higher ("Dispatched: L2/deliberate (explore
from L1; signals: …)", dispatch=explore), else as scored; both meta lines end with explore=raised or
explore=control, explore_level=<the scorer's level> and explore_share=<the share>. tune explore
compares the arms, within each log and share.`,
		Example: `  tune score "fix the typo in README.md line 12"
  echo "design a new service from scratch" | tune score --json
  tune score --history .ldd/trace.log "refactor src/net/client.py"
  tune score --batch prompts.jsonl --weights weights/v0002.toml > results.jsonl
  tune score --log .ldd/trace.log --task "typo in README" "fix the typo in README.md line 12"
  tune score --project-log "fix the typo in README.md line 12"
  tune score --log .ldd/trace.log --regression-of-last src/net/client.py "fix the retry loop broken in client.py"`,
		Args: cmdutil.WantArgs(cobra.MaximumNArgs(1), `one prompt (quote it), or - for stdin, e.g. tune score "fix the typo in README.md"`),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.WeightsDir = *env.WeightsDir
			opts.WeightsDirChosen = cmd.Flags().Changed("weights-dir") || env.Getenv("TUNE_WEIGHTS_DIR") != ""
			opts.TaskSet = cmd.Flags().Changed("task")
			opts.LoopsSet = cmd.Flags().Changed("loops")
			// An empty value is an unset variable in an agent's hook ("--log $TRACE"), not a choice: left
			// alone it logged nothing, or dropped the evidence, and exited 0 (the review of the writing side).
			// --task "" stays: an empty title is a choice the flag documents (TestScoreOptions).
			for _, name := range []string{"log", "regression-of", "regression-of-last", "history", "weights", "batch", "loops"} {
				if f := cmd.Flags().Lookup(name); f.Changed && (f.Value.String() == "" || f.Value.String() == "[]") {
					return exitcode.FlagErrorf("--%s is empty: give it a value, or leave the flag out (an unset variable in the command line?); nothing was written", name)
				}
			}
			if opts.WeightsFile != "" && cmd.Flags().Changed("weights-dir") {
				return exitcode.FlagErrorf("give either --weights FILE or --weights-dir DIR, not both")
			}
			if len(args) == 1 && args[0] != "-" {
				opts.Prompt = args[0]
			} else {
				opts.FromStdin = true
			}
			if opts.ProjectLog {
				if opts.Log != "" {
					return exitcode.FlagErrorf("give either --log TRACE or --project-log, not both")
				}
				wd, err := os.Getwd()
				if err != nil {
					return err
				}
				if opts.Log, err = project.ProjectTraceLog(wd); err != nil {
					return err
				}
			}
			if opts.Batch != "" {
				if len(args) > 0 {
					return exitcode.FlagErrorf("--batch reads its prompts from %s; do not also give a PROMPT", opts.Batch)
				}
				if opts.Log != "" || opts.HistoryLog != "" {
					return exitcode.FlagErrorf("--batch takes the history from each line; --log and --history work on one prompt")
				}
				opts.FromStdin = false
			}
			if opts.Log == "" && (opts.TaskSet || opts.LoopsSet) {
				return exitcode.FlagErrorf("--task and --loops describe the --log entry; give --log TRACE (or --project-log) too")
			}
			if opts.Log == "" && (opts.RegressionOf != "" || opts.RegressionOfLast != "") {
				return exitcode.FlagErrorf("--regression-of and --regression-of-last name a task of the --log trace; give --log TRACE (or --project-log) too")
			}
			if opts.RegressionOf != "" && opts.RegressionOfLast != "" {
				return exitcode.FlagErrorf("give either --regression-of TIMESTAMP or --regression-of-last FILE, not both")
			}
			for _, l := range opts.Loops {
				if !traceparse.IsLoop(l) {
					return exitcode.FlagErrorf("--loops %q: not a loop of the trace grammar (%s); nothing was written", l, strings.Join(traceparse.Loops, ", "))
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the reference JSON payload plus weights_version")
	cmd.Flags().StringVar(&opts.WeightsFile, "weights", "", "score with this weights `file` instead of the active version")
	cmd.Flags().StringVar(&opts.HistoryLog, "history", "", "take the file history from the last 20 tasks of this `trace` log")
	cmd.Flags().StringVar(&opts.Batch, "batch", "", "score the JSON Lines of this `file` (- for stdin), one result per line")
	cmd.Flags().StringVar(&opts.Log, "log", "", "append the decision as a meta line to this `trace` log")
	cmd.Flags().BoolVar(&opts.ProjectLog, "project-log", false, "append the decision to the project's .ldd/trace.log (the tune.toml directory, else the repository root), from any subdirectory")
	cmd.Flags().StringVar(&opts.Task, "task", "", "task `title` for the --log meta line (default: the prompt, one line)")
	cmd.Flags().StringSliceVar(&opts.Loops, "loops", nil, "`loops` for the --log meta line (default: inner, or design,inner at L3/L4)")
	cmd.Flags().StringVar(&opts.RegressionOf, "regression-of", "", "record on the --log meta line that this task regressed the task of this meta `timestamp`")
	cmd.Flags().StringVar(&opts.RegressionOfLast, "regression-of-last", "", "record that this task regressed the last task of the --log trace that touched this `file`")
	return cmd
}

// Run scores as opts say.
func Run(opts *Options) error {
	notes := opts.Env.ErrOut
	if opts.Env.Quiet != nil && *opts.Env.Quiet {
		notes = io.Discard
	}
	w, err := scoreWeights(opts.WeightsFile, opts.WeightsDir, opts.WeightsDirChosen, notes)
	if err != nil {
		return err
	}
	if opts.Batch != "" {
		return scoreBatch(opts, &w)
	}
	prompt := opts.Prompt
	if opts.FromStdin {
		if isTerminal(opts.Env.In) {
			// The reference also waits for stdin here; say so, or a bare `tune score` looks hung.
			fmt.Fprintln(opts.Env.ErrOut, "tune score: reading the prompt from the terminal; end it with Ctrl-D (or give it as an argument)")
		}
		data, err := io.ReadAll(opts.Env.In)
		if err != nil {
			return fmt.Errorf("reading the prompt from stdin: %w", err)
		}
		prompt = string(data) // not trimmed: the reference scores stdin as read
		if strings.TrimSpace(prompt) == "" {
			// The reference would dispatch nothing at L2; a pipe that produced nothing is a mistake
			// in the command line, not a task.
			return exitcode.FlagErrorf("tune score: stdin held no prompt; give the prompt as an argument or pipe it in, e.g. echo \"fix the typo\" | tune score")
		}
	}
	var history []string
	if opts.HistoryLog != "" {
		if history, err = FileHistory(opts.HistoryLog); err != nil {
			return err
		}
	}
	r := scorer.Score(prompt, history, &w)
	if opts.Log != "" {
		// Redacted before it is cut: a key cut first leaves a fragment no pattern recognises
		// (docs/decisions.md#store-integrity-and-hostile-inputs-issue-18).
		task := tracewrite.Clean(redact.String(opts.Task))
		if !opts.TaskSet {
			task = tracewrite.Clean(tracewrite.Title(redact.String(tracewrite.TitleInput(prompt, TitleRunes)), TitleRunes))
		}
		loops := opts.Loops
		if !opts.LoopsSet {
			loops = defaultLoops(r.FinalLevel)
		}
		var extra map[string]string
		if opts.RegressionOf != "" || opts.RegressionOfLast != "" {
			of, err := regressionOf(opts.Log, opts.RegressionOf, opts.RegressionOfLast)
			if err != nil {
				return err
			}
			extra = map[string]string{RegressionKey: of}
		}
		// The project's [explore] draw: a near-edge task is recorded in the control arm, or dispatched
		// one level higher in the raised arm (docs/decisions.md#explore-a-randomized-share-of-near-edge-tasks).
		// Only a logged task is drawn: an exploration nobody records measures nothing. The draw hashes
		// the meta stamp, which the writer takes under the log's lock (no two tasks share one).
		cfg, err := exploreConfig(opts.Env)
		if err != nil {
			return err
		}
		scored := r
		wrote, err := tracewrite.AppendAt(opts.Log, opts.Env.Now, func(stamp time.Time) (string, error) {
			r, extra, loops := scored, extra, loops
			if arm, ok := cfg.Draw(&r, &w, stamp.Format(tracewrite.TimestampLayout), task); ok {
				r, extra = cfg.Apply(r, arm, extra)
				if !opts.LoopsSet {
					loops = defaultLoops(r.FinalLevel)
				}
			}
			scored = r
			return tracewrite.FormatMeta(stamp, r, task, loops, extra), nil
		})
		if err != nil {
			return err
		}
		if wrote.Ended != "" {
			// a warning, not a note: --quiet keeps it (docs/decisions.md#a-torn-last-line-is-named)
			fmt.Fprint(opts.Env.ErrOut, cmdutil.WarnLine(opts.Log, "its last line had no line end (a writer that died mid-line, or an edit); this entry ended it, so it is now read as a task: "+wrote.Ended+"; if that line is cut, delete it"))
		}
		r = scored
	}
	if opts.JSON {
		return writeResultJSON(opts.Env.Out, r, true)
	}
	_, err = fmt.Fprintln(opts.Env.Out, r.DispatchHeader)
	return err
}

// exploreConfig reads the [explore] table that applies here: TUNE_CONFIG's file, else the tune.toml of
// the project the working directory lies in.
func exploreConfig(env *Env) (explore.Config, error) {
	wd, err := os.Getwd()
	if err != nil {
		return explore.Config{}, err
	}
	return explore.ReadConfig(wd, env.Getenv("TUNE_CONFIG"))
}

// isTerminal reports whether r is a terminal (an interactive stdin).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// scoreWeights is the one place `tune score` picks its weights: the file given, else the active version
// of the weights store.
func scoreWeights(file, dir string, dirChosen bool, stderr io.Writer) (weights.Weights, error) {
	if file != "" {
		return weights.Load(file)
	}
	if _, err := os.Stat(dir); !dirChosen && errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "tune: note: no weights store at %s; scoring with the built-in reference weights v0001\n", dir)
		// tune.ReferenceWeights as parsed when builtin_gen.go was generated (a test keeps the two equal):
		// parsing the TOML was a twentieth of the process (docs/decisions.md#score-start-up).
		return builtinWeights, nil
	}
	s, w, err := store.OpenActive(dir, nil)
	if s == nil {
		return weights.Weights{}, err
	}
	if err != nil {
		return weights.Weights{}, fmt.Errorf("%w (choose a weights directory with --weights-dir or TUNE_WEIGHTS_DIR, or a file with --weights)", err)
	}
	return w, nil
}

// defaultLoops is the loop list --log declares when --loops is not given: the reactive inner loop for
// L0-L2; at L3/L4 the architect protocol's design phase, then the inner loop.
func defaultLoops(l weights.Level) []string {
	if l >= weights.L3 {
		return []string{"design", "inner"}
	}
	return []string{"inner"}
}

// FileHistory collects the paths named in the last tasks of a trace log: files= lists, and the paths the
// scorer's own extractor finds in task titles and in action= and layer= text.
func FileHistory(path string) ([]string, error) {
	res, err := traceparse.ReadLast(path, historyTasks)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--history %s: no such trace log (without a log there is no file history: leave out --history)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("--history: %w", err)
	}
	var out []string
	seen := map[string]bool{}
	add := func(paths ...string) {
		for _, p := range paths {
			if p != "" && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	for _, t := range res.Tasks {
		add(t.Files...)
		add(scorer.ExtractPaths(t.Title)...)
		for _, e := range t.Entries {
			add(scorer.ExtractPaths(e.Fields.Value("action"))...)
			add(scorer.ExtractPaths(e.Fields.Value("layer"))...)
		}
	}
	return out, nil
}

// writeResultJSON prints one result: indented like the reference CLI (json.dumps(indent=2)), or compact
// for --batch.
func writeResultJSON(w io.Writer, r scorer.Result, indent bool) error {
	js, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if indent {
		if js, err = scorer.IndentJSON(js); err != nil {
			return err
		}
	}
	_, err = w.Write(append(js, '\n'))
	return err
}

// batchLine is one --batch input line; other keys (id, expected fields, …) are ignored.
type batchLine struct {
	Prompt  *string         `json:"prompt"`
	History json.RawMessage `json:"history"`
}

type batchItem struct {
	prompt  string
	history []string
}

func scoreBatch(opts *Options, w *weights.Weights) error {
	out := bufio.NewWriter(opts.Env.Out)
	score := func(it batchItem) error { return writeResultJSON(out, scorer.Score(it.prompt, it.history, w), false) }
	if opts.Batch == "-" {
		// stdin is read once: every line is held, so that a bad line stops the run before any output
		var items []batchItem
		if err := eachBatchLine(opts.Env.In, "stdin", func(it batchItem) error { items = append(items, it); return nil }); err != nil {
			return err
		}
		for _, it := range items {
			if err := score(it); err != nil {
				return err
			}
		}
		return out.Flush()
	}
	// A file is read twice, each line parsed and dropped: the first pass checks every line (a bad one
	// stops the run before any output, as on stdin), the second scores. Memory is then the longest line,
	// not the file (the trace review: a 331 MB batch peaked at 746 MB).
	f, err := regular.Open(opts.Batch)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := eachBatchLine(f, opts.Batch, func(batchItem) error { return nil }); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := eachBatchLine(f, opts.Batch, score); err != nil {
		return err
	}
	return out.Flush()
}

// eachBatchLine parses the --batch lines of in (name in errors, with the line number) and hands each
// item to fn; blank lines are skipped.
func eachBatchLine(in io.Reader, name string, fn func(batchItem) error) error {
	r := bufio.NewReader(in)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			it, perr := parseBatchLine(line)
			if perr != nil {
				return fmt.Errorf("%s:%d: %v", name, n, perr)
			}
			if ferr := fn(it); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

func parseBatchLine(line []byte) (batchItem, error) {
	var bl batchLine
	if err := json.Unmarshal(line, &bl); err != nil {
		return batchItem{}, fmt.Errorf("bad JSON: %v", err)
	}
	if bl.Prompt == nil {
		return batchItem{}, errors.New(`missing "prompt" (a string)`)
	}
	it := batchItem{prompt: *bl.Prompt}
	if h := bytes.TrimSpace(bl.History); len(h) > 0 && !bytes.Equal(h, []byte("null")) {
		if err := json.Unmarshal(h, &it.history); err != nil {
			return batchItem{}, errors.New(`"history" must be a list of file paths or null`)
		}
		if it.history == nil {
			it.history = []string{}
		}
	}
	return it, nil
}
