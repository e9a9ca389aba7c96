package app

import (
	"slices"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/exitcode"
	"github.com/ldd-tools/tune/internal/pricing"
	"github.com/ldd-tools/tune/internal/transcript"
)

// The option rules of the transcript use cases (audit, audit ab, effort): what the command's flag values may be, alone and
// together, and how they become the options. Every refusal is a usage error (*exitcode.FlagError)
// naming the flags, so that any front end refuses the same choices the same way.

// AuditFlags are the values of tune audit's flags that AuditOptions holds in another form.
type AuditFlags struct {
	Out      string // --out: the --report directory, or with --format parquet the Parquet file
	Timezone string // --timezone: Location
	CostMode string // --cost-mode: CostMode
	WeekDay  string // --start-of-week: WeekStart
}

// Complete checks tune audit's options together with fl and fills in what fl gives: Location,
// ReportDir (fl.Out, else env.ReportsDir), Out, CostMode and WeekStart. Format is checked already
// (cmdutil.CheckFormat). A bad $TZ, which no flag gave, and a --repo that cannot be read are errors
// but not usage errors.
func (o *AuditOptions) Complete(env Env, fl AuditFlags) error {
	outDir := fl.Out
	if o.Format == "parquet" {
		if outDir == "" {
			return exitcode.FlagErrorf("--format parquet needs --out FILE (or a directory with --partition-by day)")
		}
		o.Out, outDir = outDir, env.ReportsDir // the report always goes to the --reports-dir
	}
	if o.Format != "parquet" && (o.PartitionBy != "" || o.Force) {
		return exitcode.FlagErrorf("--partition-by and --force go with --format parquet")
	}
	if o.PartitionBy != "" && o.PartitionBy != "day" {
		return exitcode.FlagErrorf("--partition-by %q: want day", o.PartitionBy)
	}
	if outDir != "" && !o.Report && o.Format != "parquet" {
		return exitcode.FlagErrorf("--out is where --report writes: add --report")
	}
	if o.Repo != "" && !o.Report {
		return exitcode.FlagErrorf("--repo gives the pins of --report's effort section: add --report")
	}
	if err := CheckRepo(o.Repo); err != nil {
		return err
	}
	if outDir == "" {
		outDir = env.ReportsDir
	}
	o.ReportDir = outDir
	if o.By != "" {
		if !slices.Contains(audit.GroupBys, o.By) {
			return exitcode.FlagErrorf("--by %q: want %s", o.By, strings.Join(audit.GroupByNames(), ", "))
		}
		if o.Format == "csv" || o.Format == "jsonl" || o.Format == "parquet" {
			return exitcode.FlagErrorf("--by %s and --format %s conflict: csv, jsonl and parquet have one row per request (group them in DuckDB, or use --json for the groups)", o.By, o.Format)
		}
	}
	if fl.WeekDay != "" {
		if o.By != audit.ByWeek {
			return exitcode.FlagErrorf("--start-of-week goes with --by week")
		}
		var err error
		if o.WeekStart, err = audit.ParseWeekday(fl.WeekDay); err != nil {
			return exitcode.FlagErrorf("--start-of-week %v", err)
		}
	}
	if o.Breakdown && o.By == "" {
		return exitcode.FlagErrorf("--breakdown breaks the --by rows down by model: add --by (e.g. --by day)")
	}
	for _, d := range []struct {
		flag string
		v    *string
	}{{"--since", &o.Since}, {"--until", &o.Until}} {
		if *d.v != "" {
			day, err := audit.ParseDay(*d.v)
			if err != nil {
				return exitcode.FlagErrorf("%s %v", d.flag, err)
			}
			*d.v = day
		}
	}
	if o.Since != "" && o.Until != "" && o.Since > o.Until {
		return exitcode.FlagErrorf("--since %s is after --until %s", o.Since, o.Until)
	}
	var err error
	if o.PartitionBy == "day" {
		// The partitions are UTC days, and --since/--until choose which are written: read them as
		// UTC days too, so that a nightly job exporting yesterday writes that one day whole and no
		// part of its neighbours (docs/decisions.md#parquet-exports).
		if fl.Timezone != "" && fl.Timezone != "UTC" && fl.Timezone != "Etc/UTC" {
			return exitcode.FlagErrorf("--partition-by day writes UTC days, and its --since/--until are UTC days: drop --timezone %s", fl.Timezone)
		}
		o.Location = time.UTC
	} else if o.Location, err = Zone(fl.Timezone, env.Getenv); err != nil && fl.Timezone != "" {
		return exitcode.AsFlagError(err) // a bad --timezone is a usage error, a bad $TZ is not
	} else if err != nil {
		return err
	}
	if o.CostMode, err = ParseCostMode(fl.CostMode); err != nil {
		return err
	}
	if err := CheckMaxLineBytes(o.MaxLineBytes); err != nil {
		return err
	}
	return CheckCCUsage(o.CCUsage)
}

// Complete checks tune audit ab's options: the arms come from armFlags (--arm NAME=PATH, ParseArms)
// or from the effort levels (ByEffort), the baseline is one of them, --pair-by goes with --paired
// (pairBySet: it was given), the levels lie between 0 and 1, and --ccusage names a report.
func (o *AuditABOptions) Complete(armFlags []string, pairBySet bool) error {
	switch {
	case o.ByEffort && len(armFlags) > 0:
		return exitcode.FlagErrorf("--arm and --by-effort are exclusive: arms come from labels or from the effort field")
	case !o.ByEffort && len(armFlags) == 0:
		return exitcode.FlagErrorf("give the arms: --arm NAME=PATH (at least two names), or --by-effort")
	case !o.ByEffort && len(o.Paths) > 0:
		return exitcode.FlagErrorf("with --arm, paths belong to the arms (NAME=PATH); %q is extra", o.Paths[0])
	}
	if !o.ByEffort {
		var err error
		if o.Arms, err = ParseArms(armFlags); err != nil {
			return err
		}
	}
	if o.Baseline != "" && !o.ByEffort {
		if !slices.ContainsFunc(o.Arms, func(a Arm) bool { return a.Name == o.Baseline }) {
			return exitcode.FlagErrorf("--baseline %q is not one of the arms", o.Baseline)
		}
	}
	if o.PairBy != "order" && o.PairBy != "task" {
		return exitcode.FlagErrorf("--pair-by %q: want order or task", o.PairBy)
	}
	if pairBySet && !o.Paired {
		// An unpaired comparison was silently run instead of the paired one asked for.
		return exitcode.FlagErrorf("--pair-by %s needs --paired", o.PairBy)
	}
	if !(o.Alpha > 0 && o.Alpha < 1) { // written so that NaN fails too
		return exitcode.FlagErrorf("--alpha %v: want a level between 0 and 1", o.Alpha)
	}
	if !(o.Confidence > 0 && o.Confidence < 1) {
		return exitcode.FlagErrorf("--confidence %v: want a level between 0 and 1", o.Confidence)
	}
	if err := CheckMaxLineBytes(o.MaxLineBytes); err != nil {
		return err
	}
	return CheckCCUsage(o.CCUsage)
}

// Complete checks tune effort's options and fills CostMode from its flag: --census-only reads the pins
// of --repo and no transcript.
func (o *EffortOptions) Complete(costMode string) error {
	if o.CensusOnly && o.Repo == "" {
		return exitcode.FlagErrorf("--census-only needs --repo: the directory that holds agents/ and skills/")
	}
	if o.CensusOnly && len(o.Paths) > 0 {
		return exitcode.FlagErrorf("--census-only reads no transcripts: drop the PATH arguments")
	}
	var err error
	o.CostMode, err = ParseCostMode(costMode)
	return err
}

// ParseCostMode reads a --cost-mode value (tune audit, tune report audit).
func ParseCostMode(s string) (pricing.Mode, error) {
	m, err := pricing.ParseMode(s)
	if err != nil {
		return "", exitcode.FlagErrorf("--cost-mode %v", err)
	}
	return m, nil
}

// ParseArms reads --arm NAME=PATH values into at least two arms; a name given twice gathers its
// paths. tune audit ab and tune report audit read arms with it, the same way. A bad value is a
// usage error.
func ParseArms(values []string) ([]Arm, error) {
	var arms []Arm
	for _, a := range values {
		name, path, ok := strings.Cut(a, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || path == "" {
			return nil, exitcode.FlagErrorf("--arm %q: want NAME=PATH", a)
		}
		i := slices.IndexFunc(arms, func(x Arm) bool { return x.Name == name })
		if i < 0 {
			arms = append(arms, Arm{Name: name})
			i = len(arms) - 1
		}
		arms[i].Paths = append(arms[i].Paths, path)
	}
	if len(arms) < 2 {
		return nil, exitcode.FlagErrorf("need at least two arms, got %d (--arm NAME=PATH with different names)", len(arms))
	}
	return arms, nil
}

// CheckMaxLineBytes refuses a --max-line-bytes below 1: the scanner reads 0 and less as its default
// (64 MiB), which is not what "skip lines longer than N bytes" says.
func CheckMaxLineBytes(n int) error {
	if n < 1 {
		return exitcode.FlagErrorf("--max-line-bytes %d: want a number of bytes of at least 1 (the default is %d)", n, transcript.DefaultMaxLineBytes)
	}
	return nil
}

// CheckCCUsage checks a --ccusage value: "" or one of CCUsageModes (a usage error otherwise).
func CheckCCUsage(mode string) error {
	if mode == "" || slices.Contains(CCUsageModes, mode) {
		return nil
	}
	return exitcode.FlagErrorf("--ccusage %q: want %s", mode, strings.Join(CCUsageModes, ", "))
}
