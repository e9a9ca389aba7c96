package cli

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/cmdutil"
	"github.com/ldd-tools/tune/internal/transcript"
	"github.com/ldd-tools/tune/internal/view"
)

type auditOptions struct {
	IO  *IOStreams
	Env app.Env // the project's directories and tune.toml, as the command runs

	// The flags fill the use case's options, and flags the values it holds in another form
	// (AuditOptions.Complete reads them).
	app.AuditOptions
	flags app.AuditFlags
	JSON  bool
	Notes io.Writer // stderr, or io.Discard with --quiet
}

// NewCmdAudit builds `tune audit` (and `tune audit ab`).
func NewCmdAudit(f *Factory) *cobra.Command {
	return newCmdAudit(f, nil)
}

func newCmdAudit(f *Factory, runF func(*auditOptions) error) *cobra.Command {
	opts := &auditOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "audit [PATH...]",
		Short: "Show what Claude Code transcripts cost and where tokens, thinking and money go",
		Long: `Read Claude Code transcripts and show what they cost and where the money and the reasoning effort
go: the cost in USD at each model's prices (ccusage 20.0.24's offline price table, embedded and
versioned; --pricing FILE overrides it), its share by token kind (cache reads, cache writes, input,
output, thinking, outside the main loop), the same shares of the effort design's weighted spend (one set
of token weights for every model: output ×5, cache read ×0.1, cache write ×1.25; TTL-aware: 1-hour cache
writes ×2), how much of the thinking happens in the main loop, mean thinking per request in and
outside the main loop, and the mean cached context per main-loop request.

The cost is ccusage's: per token kind, 1-hour cache writes at twice the input price, tokens of a kind
above 200,000 in one request at the model's long-context price, fast mode at the model's multiplier. A
model the table lacks is named in a warning and its cost is unknown (null in --json, "≥" in the
table), never 0; a request without tokens costs 0. Transcripts of Claude Code 1.0.x record a costUSD
on each line: by default (--cost-mode auto, ccusage's default) a request that has one costs that, the
others are priced; --cost-mode calculate always prices the tokens, --cost-mode display takes recorded
costs only (a request without one counts $0), as ccusage's --mode. CCUSAGE_MODEL_ALIASES is read as
ccusage reads it (MODEL=ALIAS pairs separated by ',' or ';', or a JSON object): an alias renames a
model and prices one the table lacks.

--by breaks it down, one row per group with absolute tokens and cost and a total row: day, week (from
Sunday, or --start-of-week), month, session, project, model, effort, class (main, subagent, compaction, side-question) or
block (ccusage's 5-hour billing blocks). Days, weeks and months are those of --timezone (default $TZ,
else the system's zone, as ccusage). --breakdown adds one row per model inside each group.
--since/--until keep the requests of those days (inclusive); with --by block they keep the blocks that
start on those days, whole, as ccusage's blocks report.

Transcripts are found as ccusage finds them: the comma-separated entries of CLAUDE_CONFIG_DIR (each a
Claude config directory or its projects/ directory), else ~/.config/claude/projects and
~/.claude/projects. PATH arguments replace that: a config directory, a projects/ directory, any folder
(searched for *.jsonl; symbolic links are not followed) or a file. A PATH in which no file holds a Claude
Code record is an error; a file that cannot be read is left out with a warning (--strict: an error), and
nothing readable at all is an error.

Claude Code writes one line per streamed content block, each repeating the request's usage, and
copies subagent calls into the parent file (agent_progress). Lines are merged into one record per
request as ccusage 20.x merges them — key (message.id, requestId), the largest usage, sidechain lines
never overriding the main loop, /btw replays collapsed — so token totals and cost equal "ccusage claude
daily". Thinking tokens are exact where usage.output_tokens_details records them, else estimated from
the thinking text (characters/4) and flagged, else unknown.

Bad lines never stop the audit: lines that are not JSON objects, truncated lines (a session still
being written) and invalid usage records are counted by reason, shown once on stderr and in --json
under "skipped". Unlike ccusage, records written with spaces or pretty-printed over several lines are
read; --ccusage REPORT reads lines exactly as that ccusage report does (only daily counts agent_progress
copies; session, weekly, monthly and blocks do not, and count a /btw replay as a request unless it has
the parent line's timestamp), for cross-checks.

--json prints {"totals", "shares", "groups", "skipped", "unreadable_files", ...}; every totals object
has cost_usd. --format csv|jsonl prints one row per request instead (session, class, model, effort,
tokens, thinking and its source, cost_usd, …), for DuckDB and the like; --by does not apply to rows.

--format parquet --out FILE writes the same rows as a Parquet file (columns named as the jsonl
fields; zstd; first and last as timestamps, tokens as 64-bit integers, cost_usd null when unpriced),
in row groups of at most 65,536 rows, never the whole file in memory. It is written whole or not at all: the bytes go to a hidden
temp file beside FILE, renamed into place only when complete, so an unwritable directory or a full
disk ends with an error naming FILE and no file under that name. An existing FILE needs --force.

--partition-by day makes --out a directory of Hive-style day=YYYY-MM-DD/requests.parquet files, one
per UTC day of the requests; --since/--until then name UTC days (--timezone is refused), so a
nightly job adds yesterday, and only yesterday:
  tune audit --format parquet --partition-by day --out lake/requests \
    --since "$(date -u -d yesterday +%F)" --until "$(date -u -d yesterday +%F)"
A day exported already is refused, and then nothing is written (give --force to replace the days
the run holds; days it does not hold are never touched). Every day's file is finished before any
is put in place, so a failed run adds no day and leaves no empty day directory behind (a killed
one leaves whole days and hidden .day=…tmp-… files in the root, which no engine reads).
docs/scale.md has the DuckDB, Spark and Trino queries that reproduce the audit's totals from them.

--report also writes the EVAL report of the audit (Markdown and an SVG chart, numbers and labels
only, never transcript text) into --out (default the --reports-dir; with --format parquet always the
--reports-dir), from the same single pass, plus one pass of tune effort's reader for its effort
conformance section (shift verdicts, re-asserts, subagents against their pins, spend per level),
checked against the pins of --repo DIR, else of the project root (the directory of tune.toml) when
it holds agents/, skills/, .claude/ or settings.json, else of no repository: it is the report "tune
report audit" writes for the same transcripts. The written paths are printed on stderr.

Memory stays nearly flat however large the input: requests are finalised as each session's files
have been read, and only a few dozen bytes per request are kept, for copies of it in later
sessions (resumed or forked sessions). --format csv|jsonl keeps about twice that, to write the rows
in order at the end. --report also runs tune effort's pass, which keeps each session's levels as
spans (one per change of level) for its timeline: more when the level changes often.`,
		Example: `  tune audit
  tune audit --by day --since 2026-02-01 --until 2026-02-28 --timezone Europe/Paris
  tune audit --by month --breakdown
  tune audit ~/.claude/projects/-home-me-shop-api --by session
  tune audit --by effort --label high runs/high
  tune audit --json | jq .shares.spend
  tune audit --format csv > requests.csv
  tune audit --format parquet --out requests.parquet
  tune audit --format parquet --partition-by day --out lake/requests
  tune audit --report --out reports/
  tune audit ab --arm low=runs/low --arm high=runs/high`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths, opts.Env, opts.Notes = args, f.Env(), f.noteOut()
			if err := cmdutil.CheckFormat(cmd); err != nil {
				return err
			}
			if err := opts.Complete(opts.Env, opts.flags); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return auditRun(opts)
		},
	}
	cmd.Flags().StringVar((*string)(&opts.By), "by", "", "break down by `KEY`: "+strings.Join(audit.GroupByNames(), ", "))
	cmd.Flags().StringVar(&opts.Since, "since", "", "only requests from `DATE` (YYYY-MM-DD or YYYYMMDD, inclusive, in --timezone; UTC with --partition-by day)")
	cmd.Flags().StringVar(&opts.Until, "until", "", "only requests up to `DATE` (YYYY-MM-DD or YYYYMMDD, inclusive, in --timezone; UTC with --partition-by day)")
	cmd.Flags().StringVar(&opts.flags.Timezone, "timezone", "", "`ZONE` of days, weeks and months (IANA name such as UTC or Europe/Paris; default $TZ, else the system's)")
	cmd.Flags().BoolVar(&opts.Breakdown, "breakdown", false, "break each --by row down by model")
	cmd.Flags().StringVar(&opts.flags.WeekDay, "start-of-week", "", "with --by week: the `DAY` weeks start on (sunday, the default as in ccusage, monday, … saturday)")
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "fail on a transcript file that cannot be read (by default it is left out with a warning)")
	cmd.Flags().StringVar(&opts.Pricing, "pricing", "", "read prices from `FILE` (JSON as the embedded table; its models replace or add to the embedded ones)")
	cmd.Flags().StringVar(&opts.flags.CostMode, "cost-mode", "auto", costModeUsage)
	cmdutil.AddFormatFlags(cmd, &opts.Format, &opts.JSON, []string{"text", "json", "csv", "jsonl", "parquet"},
		"output `FORMAT`: text, json, csv, jsonl or parquet (csv, jsonl and parquet: one row per request)", "print the report as JSON (same as --format json)")
	cmd.Flags().StringVar(&opts.CCUsage, "ccusage", "", "read lines exactly as ccusage 20.0.24's `REPORT` does: "+strings.Join(app.CCUsageModes, ", "))
	cmd.Flags().StringVar(&opts.Label, "label", "", "effort `LEVEL` of requests whose transcript records none (e.g. the effort the runs were started with)")
	addMaxLineBytesFlag(cmd, &opts.MaxLineBytes)
	cmd.Flags().BoolVar(&opts.Report, "report", false, "also write the EVAL report of the audit (as tune report audit)")
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "with --report: check the effort section against the pins of the agents and skills in `DIR` (default the project root, when it holds them)")
	cmd.Flags().StringVar(&opts.flags.Out, "out", "", "write the --report into `DIR` (default the --reports-dir); with --format parquet, the Parquet file (or partition root)")
	cmd.Flags().StringVar(&opts.PartitionBy, "partition-by", "", "with --format parquet: `day` writes one file per UTC day under --out (Hive-style day=YYYY-MM-DD)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "with --format parquet: replace existing files")
	cmd.AddCommand(newCmdAuditAB(f, nil))
	return cmd
}

// costModeUsage is the --cost-mode flag's help (tune audit, tune report audit and tune effort).
const costModeUsage = "where a request's cost comes from, as ccusage's --mode: `MODE` auto (the costUSD Claude Code 1.0.x recorded on the line, else the prices), calculate (always the prices) or display (recorded costUSD only, else $0)"

func auditRun(opts *auditOptions) error {
	hooks, printer := view.ScanHooks(opts.IO.ErrOut, opts.IO.ErrIsTerminal)
	res, err := app.Audit(opts.Env, opts.AuditOptions, opts.IO.Out, hooks)
	printer.Clear()
	if res == nil {
		return err
	}
	view.AuditNotes(opts.IO.ErrOut, opts.Notes, res, opts.Repo)
	switch {
	case err != nil:
		return err
	case opts.Format == "parquet":
		view.Wrote(opts.IO.ErrOut, res.ParquetRows, "request", opts.Out)
	case opts.Format == "json":
		return view.AuditJSON(opts.IO.Out, res.Report, res.Input)
	case opts.Format == "text":
		return view.AuditText(opts.IO.Out, res.Report, res.Input)
	}
	return nil
}

// addMaxLineBytesFlag is --max-line-bytes of every command that reads transcripts (audit, audit ab).
func addMaxLineBytesFlag(cmd *cobra.Command, n *int) {
	cmd.Flags().IntVar(n, "max-line-bytes", transcript.DefaultMaxLineBytes, "skip transcript lines longer than `N` bytes (counted as too-long in the warnings) instead of holding them in memory")
}
