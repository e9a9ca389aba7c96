// Package tracecmd is the `tune trace` command (its flags, help and their checks) and its JSON run,
// shared by the light tune binary and tune-full as scorecmd is: the light binary streams
// `--format json|jsonl` of named logs itself, without tune-full's start-up (the plotting and Parquet
// stacks), and hands every other trace to tune-full (docs/decisions.md#streaming-reads).
package tracecmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/cmdutil"
	"github.com/ldd-tools/tune/internal/exitcode"
	"github.com/ldd-tools/tune/internal/textfmt"
	"github.com/ldd-tools/tune/internal/traceout"
	"github.com/ldd-tools/tune/internal/traceparse"
)

// Env is where the command writes. Out and ErrOut are read when it runs: the full tree sizes Out for
// its tables after the command is built.
type Env struct {
	Out, ErrOut *io.Writer
}

// Options are tune trace's flags and arguments.
type Options struct {
	Env     *Env
	Logs    []string
	Last    int
	LastSet bool // --last given; otherwise the default depends on the logs
	JSON    bool
	Format  string // text | json | jsonl | parquet
	Out     string // --out FILE (parquet)
	Force   bool
	Strict  bool
	MaxLine int // --max-line-mb
}

// NewCmd builds `tune trace`; run gets the checked options.
func NewCmd(env *Env, run func(*Options) error) *cobra.Command {
	opts := &Options{Env: env}
	cmd := &cobra.Command{
		Use:   "trace [LOG...]",
		Short: "Read LDD trace logs: tasks, levels, outcomes, and every line that could not be read",
		Long: `Read one or more .ldd/trace.log files (default: the nearest .ldd/trace.log, in the current
directory or a parent up to the repository root, named on stderr when found above) and list their
tasks: the meta line that opened each (level, dispatch, title), its iterations, its last close
(terminal, final loss).

Every era of the format is read, from hand-written v0.3.1 logs to the v0.14 writer. Lines before
the first meta line form one legacy task without a level. A missing loss is unknown ("—"), never
0. Δloss is recomputed within each task, loop and epoch rather than trusted from the writer.

Nothing is dropped silently: every line is parsed or skipped, and the summary says how many of
each. Skipped lines (a continuation of a value that held a newline, an incomplete last line
still being written, …) and lines kept with a caveat (unbalanced quotes read by a whitespace
split, a malformed signals= pair, …) are listed on stderr with file, line and reason.

--last N reads only the last N tasks of each log, backwards from its end, so its cost does not
grow with the log. Then line numbers count from where the read started (the byte offset is
given too); byte offsets are exact in any case. The default is decided for each log alone, however many
are given: the whole log when it is under 1 MB, its last 20 tasks otherwise; --last 0 reads everything.

--json prints {"tasks": [...], "lines": {"read", "parsed", "skipped", "blank", "comment"},
"warnings": [{"file", "line", "offset", "reason", "skipped"}], "tails": [{"file", "offset"}]}.
Task fields: source, line, offset, meta_timestamp, legacy, level, dispatch, creativity, signals
[{name, weight}], weights_version, task, loops, loops_used, closed, terminal, loss_final (null
when unknown), loss_final_from (close | iteration), regression_followed, regression_of, files,
iterations (its iteration, close and epoch lines, each with its fields and the recomputed
delta_loss).

--format jsonl streams one JSON object per task and line (the fields of --json's tasks) as the logs
are read, in memory that does not grow with them: the way to hand a year of logs to jq, DuckDB
(read_json_auto) or a pipeline. Warnings stay on stderr. A whole-log text view of more than 1,000
tasks shows the last 1,000 rows; the summary counts every task.

--format parquet --out FILE writes one row per task for DuckDB, Spark or Trino (docs/scale.md): the
columns are --json's task fields without the iterations, plus their counts iteration_count and k
(the non-baseline ones) and omitted (null unless the task was summarised); meta_timestamp is a UTC
timestamp, signals a list of {name, weight}, counts 64-bit integers. It is zstd-compressed and written
in row groups of at most 65,536 tasks as the logs are read, never the whole log in memory. The file
appears whole or not at all: the bytes go to a hidden temp file beside FILE, renamed into place only
when complete, so an unwritable directory or a full disk ends with an error naming FILE and nothing
under that name. An existing FILE needs --force (then it is replaced only by a complete export).

A line longer than --max-line-mb (default 1 MB; the longest real trace line is 267 bytes) is skipped
as it is read, never held, and reported like any skipped line, so a log of garbage cannot exhaust memory.
A task keeps its first 10,000 entries (4 MB of lines); past that (a legacy log without meta lines
is one task) its lines still count for its close, loss and files, its iterations are counted, and
"omitted" in its JSON says what was not kept; a warning names the task and the line.

--strict exits 1 when any line was skipped (blank and comment lines aside).`,
		Example: `  tune trace
  tune trace .ldd/trace.log --last 5
  tune trace projects/*/.ldd/trace.log --json | jq '.tasks[] | select(.level == "L1")'
  tune trace --strict ci/trace.log
  tune trace --last 0 --format jsonl .ldd/trace.log | jq -c 'select(.regression_followed)'
  tune trace --last 0 --format parquet --out lake/tasks/$(hostname).parquet .ldd/trace.log`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Logs = args
			opts.LastSet = cmd.Flags().Changed("last")
			if opts.MaxLine < 1 || opts.MaxLine > 1024 {
				return exitcode.FlagErrorf("--max-line-mb %d: want 1 to 1024", opts.MaxLine)
			}
			if err := cmdutil.CheckFormat(cmd); err != nil {
				return err
			}
			if opts.Format == "parquet" && opts.Out == "" {
				return exitcode.FlagErrorf("--format parquet needs --out FILE (Parquet is not for a terminal)")
			}
			if opts.Format != "parquet" && opts.Out != "" {
				return exitcode.FlagErrorf("--out writes a Parquet file: give --format parquet too")
			}
			if opts.Force && opts.Out == "" {
				return exitcode.FlagErrorf("--force replaces the --out file; give --out too")
			}
			if opts.Last < 0 {
				return exitcode.FlagErrorf("--last %d: want a number of tasks, or 0 for all", opts.Last)
			}
			return run(opts)
		},
	}
	cmd.Flags().IntVar(&opts.Last, "last", 0, "read only the last `N` tasks of each log, 0 for all (default: all for one log under 1 MB, else 20)")
	cmdutil.Want(cmd, "last", "a number of tasks, e.g. --last 20 (0 for all)")
	cmdutil.AddFormatFlags(cmd, &opts.Format, &opts.JSON, []string{"text", "json", "jsonl", "parquet"},
		"output `format`: text, json (one document), jsonl (one task per line, streamed) or parquet (--out)", "print tasks, line counts and warnings as JSON (--format json)")
	cmd.Flags().StringVar(&opts.Out, "out", "", "write the --format parquet export to `FILE` (atomically: all of it or nothing)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace an existing --out file")
	cmd.Flags().IntVar(&opts.MaxLine, "max-line-mb", traceparse.DefaultMaxLineBytes>>20, "skip (and report) lines longer than `N` MB instead of reading them")
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "exit 1 if any line was skipped (blank and comment lines aside)")
	return cmd
}

// Streams reports whether RunJSON serves the options: --format json or jsonl.
func Streams(opts *Options) bool { return opts.Format == "json" || opts.Format == "jsonl" }

// RunJSON reads opts.Logs into the JSON Lines or the JSON document on Out, with the warnings on
// ErrOut as they are found (the document keeps those of whole-log reads).
func RunJSON(opts *Options) error {
	out, errOut := *opts.Env.Out, *opts.Env.ErrOut
	var w traceout.TaskWriter = traceout.NewTaskJSONL(out)
	if opts.Format == "json" {
		w = traceout.NewTaskJSON(out)
	}
	res, err := traceout.Read(traceout.Options{Logs: opts.Logs, Last: opts.Last, LastSet: opts.LastSet, MaxLine: opts.MaxLine,
		KeepWarnings: opts.Format == "json"}, w, func(warn traceparse.Warning, tailed bool) { Warn(errOut, warn, tailed) })
	if err != nil {
		return err
	}
	return Strict(opts, res)
}

// Warn prints one warning of a read on w, as every form of tune trace does; tailed: its line counts from
// a tail read, so the exact byte offset is given as well.
func Warn(w io.Writer, warn traceparse.Warning, tailed bool) {
	io.WriteString(w, cmdutil.WarnLine(traceout.WarningText(warn, tailed)))
}

// Strict is the --strict check of a read: an error when a line was skipped.
func Strict(opts *Options, res *traceout.Result) error {
	if opts.Strict && res.Skipped > 0 {
		return fmt.Errorf("--strict: %s skipped (see the warnings)", textfmt.Plural(res.Skipped, "line"))
	}
	return nil
}
