package app

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/atomicfile"
	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/effort"
	"github.com/ldd-tools/tune/internal/export"
	"github.com/ldd-tools/tune/internal/pricing"
	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/transcript"
)

// ProgressMinBytes is the input size from which a scan reports its progress (ScanHooks.Progress).
const ProgressMinBytes = 64 << 20

// ScanHooks let the command layer follow the transcript scans of the audit use cases as they happen.
type ScanHooks struct {
	// Progress, when set, receives the bytes read so far and the total of a scan whose input is at
	// least ProgressMinBytes.
	Progress func(done, total int64)
	// Scanned, when set, receives each scan's result (its skipped lines and unreadable files) as soon
	// as the scan ends, before anything else happens.
	Scanned func(res *transcript.Result)
}

// scan scans files and hands the result to the hooks.
func (h ScanHooks) scan(files []string, opt transcript.Options) (*transcript.Result, error) {
	if h.Progress != nil && transcript.TotalSize(files) >= ProgressMinBytes {
		opt.Progress = h.Progress
	}
	res, err := transcript.Scan(files, opt)
	if err == nil && h.Scanned != nil {
		h.Scanned(res)
	}
	return res, err
}

// AuditOptions are tune audit's choices, validated by the command.
type AuditOptions struct {
	Paths     []string // transcript paths; none: the default roots
	By        audit.GroupBy
	Breakdown bool
	WeekStart time.Weekday   // first day of a week (Sunday, the zero value, as ccusage)
	Location  *time.Location // of days, weeks, months, --since and --until
	Since     string
	Until     string
	// Format is text, json (Audit returns the report), csv or jsonl (rows written to out as they
	// come), or parquet (rows written to Out).
	Format       string
	CCUsage      string       // the ccusage report whose line rules apply ("" = tune's)
	Label        string       // effort of requests that record none
	Pricing      string       // price file overriding the embedded table
	CostMode     pricing.Mode // where a request's cost comes from ("" = auto)
	Strict       bool
	MaxLineBytes int
	// Report writes the EVAL report of the audit into ReportDir; its effort section reads the pins
	// of CensusRoot(env, Repo).
	Report    bool
	ReportDir string
	Repo      string
	// Out, PartitionBy and Force are the Parquet export's file (or partition root), "day" or "", and
	// whether existing files are replaced.
	Out         string
	PartitionBy string
	Force       bool
}

// AuditResult is what tune audit prints.
type AuditResult struct {
	// Roots are where the transcripts were looked for; NoTranscripts says none was found there
	// (without PATH arguments, which fail instead).
	Roots         []string
	NoTranscripts bool
	// Unpriced counts the requests of each model without a price.
	Unpriced map[string]int
	// Report and Input are the audit (text and json formats).
	Report *audit.Report
	Input  audit.Input
	// ReportFiles are the files --report wrote; ParquetRows the rows of the Parquet export.
	ReportFiles []string
	ParquetRows int64
	// CensusRepo is the repository the report's effort section read pins from ("" none), and
	// CensusWarnings its census's warnings (files named under it).
	CensusRepo     string
	CensusWarnings []effort.Warning
	// EmptyRange names the --since/--until range when no request falls in it ("" otherwise).
	EmptyRange string
}

// Audit reads the transcripts once and aggregates them (text, json, --report), writes one row per
// request to out (csv, jsonl) or exports them (parquet). On an error after the scan, the result
// still holds what was found, for the warnings.
func Audit(env Env, opts AuditOptions, out io.Writer, hooks ScanHooks) (*AuditResult, error) {
	prices, err := LoadPrices(env, opts.Pricing, opts.CostMode)
	if err != nil {
		return nil, err
	}
	files, roots, each, err := findTranscripts(env, opts.Paths)
	if err != nil {
		return nil, err
	}
	res := &AuditResult{Roots: roots, NoTranscripts: len(files) == 0 && len(opts.Paths) == 0, Unpriced: map[string]int{}}
	// Requests are aggregated as the scan finalises them, never all held; rows are written at the end,
	// in order of first appearance, from compact records.
	scan := ScanOptions(opts.CCUsage, opts.Label)
	scan.Strict = opts.Strict
	scan.MaxLineBytes = opts.MaxLineBytes
	// A path without a transcript record fails before any row is written.
	scan.Check = func(r *transcript.Result) error { return checkTranscriptPaths(opts.Paths, each, r) }
	dates := audit.DateRange{Since: opts.Since, Until: opts.Until, Location: opts.Location}
	var aggs *auditAggregates
	if opts.Format == "text" || opts.Format == "json" || opts.Report {
		aggs = newAuditAggregates(audit.Options{By: opts.By, Location: opts.Location, Prices: prices, Breakdown: opts.Breakdown, WeekStart: opts.WeekStart})
		scan.Sink = audit.Filter{Range: dates, Next: aggs.sink()}
		if opts.By == audit.ByBlock && !dates.Open() {
			// Blocks are cut from every request and selected whole by their start day (ccusage's
			// blocks report); thinking by class and effort still takes the requests of those days.
			aggs = newAuditAggregates(audit.Options{By: opts.By, Location: opts.Location, Prices: prices, Breakdown: opts.Breakdown, Blocks: dates})
			scan.Sink = audit.Tee{aggs.spend, audit.Filter{Range: dates, Next: aggs.thinking}}
		}
	}
	// rowWriter is the csv/jsonl or Parquet output: rows of the requests in the date range.
	var rows interface {
		Write(r *transcript.Request, cost audit.Cost) error
		Close() error
	}
	var rowErr error
	switch opts.Format {
	case "csv", "jsonl":
		w, err := audit.NewRowWriter(out, opts.Format)
		if err != nil {
			return res, err
		}
		rows = w
	case "parquet":
		pq, err := newAuditParquet(opts.Out, opts.PartitionBy, opts.Force)
		if err != nil {
			return res, err
		}
		defer pq.Abort() // nothing once committed
		defer func() { res.ParquetRows = pq.Rows() }()
		rows = pq
		if p, ok := pq.(*partitionedParquet); ok {
			// The days in order: one day's file open at a time, whatever the number of days.
			scan.OrderBy, p.InDayOrder = export.DayKey, true
		}
	}
	if rows != nil {
		scan.OnRequest = func(r *transcript.Request) {
			if rowErr == nil && dates.Contains(r) {
				// Priced once: the cost fills the row's cost_usd and counts an unpriced model.
				c := audit.Price(prices, r)
				rowErr = rows.Write(r, c)
				if !c.Known {
					res.Unpriced[c.Model]++
				}
			}
		}
	}
	// The report's effort section is read by this same scan, one pass over the transcripts: it adds
	// its request counting to OnRequest (after the rows) and its session analysis to Check.
	var effortSection func(*transcript.Result) (*report.EffortSection, []effort.Warning)
	if opts.Report {
		res.CensusRepo = CensusRoot(env, opts.Repo)
		if effortSection, err = attachEffortSection(&scan, res.CensusRepo, prices); err != nil {
			return res, err
		}
	}
	read, err := hooks.scan(files, scan)
	if err != nil {
		return res, err
	}
	if aggs != nil {
		res.Report = aggs.spend.Report()
		res.Unpriced = res.Report.Totals.UnpricedModels
	}
	res.Input = audit.InputOf(read)
	if res.Report != nil && !dates.Open() {
		// The header's sessions are those of the range, as its requests are.
		res.Input.Sessions = res.Report.Sessions
		if res.Report.Totals.Requests == 0 {
			res.EmptyRange = dates.String()
		}
	}
	res.Input.Prices = prices.Describe(opts.Pricing)
	if opts.Report {
		in := aggs.reportInput(res.Input, nil)
		in.Effort, res.CensusWarnings = effortSection(read)
		if res.ReportFiles, err = report.WriteAudit(opts.ReportDir, in); err != nil {
			return res, err
		}
	}
	if rows == nil {
		return res, nil
	}
	if rowErr != nil {
		return res, rowErr
	}
	return res, rows.Close()
}

// LoadPrices is the embedded price table, overridden by the --pricing file at path ("" = none), in
// cost mode mode ("" = auto), with the model aliases of CCUSAGE_MODEL_ALIASES (as ccusage reads it).
func LoadPrices(env Env, path string, mode pricing.Mode) (*pricing.Table, error) {
	t := pricing.Embedded()
	if path != "" {
		f, err := regular.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--pricing: %w", err)
		}
		defer f.Close()
		if t, err = t.Override(f, path); err != nil {
			return nil, err
		}
	}
	if mode != "" && mode != pricing.ModeAuto {
		t = t.WithMode(mode)
	}
	if env.Getenv != nil {
		if aliases := pricing.ParseAliases(env.Getenv(pricing.AliasesEnv)); aliases != nil {
			t = t.WithAliases(aliases)
		}
	}
	return t, nil
}

// Zone is the zone of the audit's days, weeks and months: --timezone (flag), else $TZ (a leading ":"
// dropped, as POSIX allows), else the system's zone — ccusage's default.
func Zone(flag string, getenv func(string) string) (*time.Location, error) {
	name := flag
	if name == "" && getenv != nil {
		name = getenv("TZ")
	}
	if name == "" {
		return time.Local, nil
	}
	loc, err := time.LoadLocation(strings.TrimPrefix(name, ":"))
	switch {
	case err != nil && flag != "":
		return nil, fmt.Errorf("--timezone %q: not a time zone (want an IANA name such as UTC or America/New_York)", name)
	case err != nil:
		return nil, fmt.Errorf("TZ=%q: not a time zone (set --timezone)", name)
	}
	return loc, nil
}

// CCUsageModes are the ccusage 20.0.24 reports whose line rules ScanOptions reproduces (--ccusage).
var CCUsageModes = []string{"daily", "weekly", "monthly", "session", "blocks"}

// ScanOptions are the transcript reader's options for a --ccusage report's line rules ("" = tune's)
// and an effort label.
func ScanOptions(ccusage, label string) transcript.Options {
	opt := transcript.Options{Label: label}
	switch ccusage {
	case "daily":
		opt.CCUsage, opt.MaxTotal = true, true
	case "session", "weekly", "monthly", "blocks":
		// Only ccusage's daily report counts agent_progress copies (docs/decisions.md#cost-and-date-views-in-the-audit-issue-13).
		opt.CCUsage, opt.MaxTotal, opt.NoProgress, opt.ReplaySameTime, opt.TieSpeed = true, true, true, true, true
	}
	return opt
}

// FindTranscripts lists the transcript files of paths, or of the default roots (CLAUDE_CONFIG_DIR,
// else ~/.config/claude/projects and ~/.claude/projects) when there is none.
func FindTranscripts(env Env, paths []string) (files, roots []string, err error) {
	files, roots, _, err = findTranscripts(env, paths)
	return files, roots, err
}

// findTranscripts is FindTranscripts that also returns the files of each PATH argument (in paths
// order; nil without paths), so that checkTranscriptPaths need not walk them again (a second walk of
// the 1 GB corpus's directories was 2 % of the audit's time).
func findTranscripts(env Env, paths []string) (files, roots []string, each [][]string, err error) {
	if len(paths) > 0 {
		// Discover of all paths is the sorted, deduplicated union of each path's files.
		for _, p := range paths {
			found, err := transcript.Discover([]string{p})
			if err != nil {
				return nil, nil, nil, err
			}
			each = append(each, found)
			files = append(files, found...)
		}
		sort.Strings(files)
		return slices.Compact(files), paths, each, nil
	}
	roots = paths
	if len(roots) == 0 {
		home := env.getenv("HOME")
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		getenv := env.Getenv
		if getenv == nil {
			getenv = func(string) string { return "" }
		}
		if roots, err = transcript.Roots(getenv, home); err != nil {
			return nil, nil, nil, err
		}
	}
	files, err = transcript.Discover(roots)
	return files, roots, nil, err
}

// DescribeRoots names where transcripts were looked for, in messages.
func DescribeRoots(roots []string) string {
	if len(roots) == 0 {
		return "~/.config/claude/projects or ~/.claude/projects (neither exists; set CLAUDE_CONFIG_DIR or pass a path)"
	}
	return strings.Join(roots, ", ")
}

// checkTranscriptPaths fails on a PATH argument none of whose files holds a Claude Code record
// (garbage is not an audit of zero requests), and when no file of any PATH could be read (nothing
// readable is not an audit of zero requests either; an unreadable file next to readable ones is left
// out with a warning).
func checkTranscriptPaths(paths []string, each [][]string, res *transcript.Result) error {
	unreadable := make(map[string]string, len(res.Unreadable))
	for _, u := range res.Unreadable {
		unreadable[u.File] = u.Err
	}
	readable := slices.ContainsFunc(each, func(files []string) bool {
		return slices.ContainsFunc(files, func(f string) bool { _, left := unreadable[f]; return !left })
	})
	if !readable && len(res.Unreadable) > 0 {
		first := res.Unreadable[0]
		if len(res.Unreadable) == 1 {
			return fmt.Errorf("%s: nothing readable: %s", first.File, first.Err)
		}
		return fmt.Errorf("nothing readable: none of the %d files could be read (the first, %s: %s)", len(res.Unreadable), first.File, first.Err)
	}
	for i, p := range paths {
		files := each[i]
		if transcript.NoRecordsIn(res, files) {
			what := "no *.jsonl file"
			if len(files) > 0 {
				n := "1 file"
				if len(files) != 1 {
					n = fmt.Sprintf("%d files", len(files))
				}
				what = "no Claude Code transcript record (no line with a timestamp) in " + n
				if skipped := skippedIn(res.Warnings, files); skipped != "" {
					what = "no usable Claude Code transcript record in " + n + ": " + skipped
				}
			}
			return fmt.Errorf("%s: %s", p, what)
		}
	}
	return nil
}

// skippedIn names the first skipped lines of files (the scan's warnings, in scan order) as
// "reason at FILE:LINE", so that an audit that found nothing says why: lines over --max-line-bytes,
// counts over the token limit, malformed JSON. "" when none of the files had a line skipped.
func skippedIn(warnings []transcript.Warning, files []string) string {
	var parts []string
	more := 0
	for _, w := range warnings {
		if !slices.Contains(files, w.File) {
			continue
		}
		if len(parts) == 3 {
			more++
			continue
		}
		parts = append(parts, fmt.Sprintf("%s at %s:%d", w.Reason, w.File, w.Line))
	}
	if len(parts) == 0 {
		return ""
	}
	out := "lines skipped: " + strings.Join(parts, ", ")
	if more > 0 {
		out += fmt.Sprintf(" and %d more", more)
	}
	return out
}

// auditAggregates are what a scan streams into for tune audit and its EVAL report: the spend
// aggregate (broken down as tune audit --by asks; the report reads its totals and shares) and
// thinking by class and effort. tune audit --report and tune report audit both fill one and write
// the report through reportInput, so the two give the same report for the same transcripts.
type auditAggregates struct {
	spend    *audit.Aggregator
	thinking *audit.ClassEffort
}

func newAuditAggregates(opt audit.Options) *auditAggregates {
	return &auditAggregates{spend: audit.New(opt), thinking: audit.NewClassEffort()}
}

func (a *auditAggregates) sink() transcript.Sink { return audit.Tee{a.spend, a.thinking} }

// reportInput is the audit report of the aggregates (see report.FromAudit).
func (a *auditAggregates) reportInput(in audit.Input, ab *audit.ABReport) report.AuditReport {
	return report.FromAudit(a.spend.Report(), a.thinking, in, ab)
}

// mergeScans joins what the scans of several arms read (files, sessions, lines, skips) for the spend
// part of the report; their requests went to the aggregates as they were read.
func mergeScans(scans []*transcript.Result) *transcript.Result {
	out := &transcript.Result{Skipped: map[string]int{}}
	for _, s := range scans {
		out.Sessions = append(out.Sessions, s.Sessions...)
		out.Files = append(out.Files, s.Files...)
		out.Bytes += s.Bytes
		out.Warnings = append(out.Warnings, s.Warnings...)
		for k, n := range s.Skipped {
			out.Skipped[k] += n
		}
	}
	sort.SliceStable(out.Sessions, func(i, j int) bool { return out.Sessions[i].ID < out.Sessions[j].ID })
	return out
}

// auditParquet is the --format parquet output: one file, or one per day.
type auditParquet interface {
	Write(r *transcript.Request, cost audit.Cost) error
	Close() error
	Abort()
	Rows() int64
}

func newAuditParquet(out, partitionBy string, force bool) (auditParquet, error) {
	if partitionBy == "day" {
		days, err := newDayFiles(out, force)
		if err != nil {
			return nil, err
		}
		return &partitionedParquet{PartitionedRequests: export.NewPartitionedRequests(days), days: days}, nil
	}
	f, err := export.CreateFile(out, force)
	if err != nil {
		return nil, err
	}
	return &fileParquet{f: f, w: export.NewRequestParquet(f)}, nil
}

type fileParquet struct {
	f *atomicfile.File
	w *export.RequestParquet
}

func (p *fileParquet) Write(r *transcript.Request, c audit.Cost) error { return p.w.Write(r, c) }
func (p *fileParquet) Abort()                                          { p.f.Abort() }
func (p *fileParquet) Rows() int64                                     { return p.w.Rows }
func (p *fileParquet) Close() error {
	if err := p.w.Close(); err != nil {
		return err
	}
	return p.f.Commit()
}

type partitionedParquet struct {
	*export.PartitionedRequests
	days *dayFiles
	done bool // Close succeeded
}

func (p *partitionedParquet) Rows() int64 { return p.PartitionedRequests.Rows }

func (p *partitionedParquet) Close() error {
	err := p.PartitionedRequests.Close()
	p.done = err == nil
	return err
}

// Abort drops the days not committed, and the root when this export made it and it stayed empty;
// it does nothing once Close succeeded (an export of no request leaves its empty root).
func (p *partitionedParquet) Abort() {
	if p.done {
		return
	}
	p.PartitionedRequests.Abort()
	p.days.abortRoot()
}
