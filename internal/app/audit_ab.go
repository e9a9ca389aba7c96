package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/effort"
	"github.com/ldd-tools/tune/internal/exitcode"
	"github.com/ldd-tools/tune/internal/pricing"
	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/transcript"
)

// Arm is an A/B arm as --arm NAME=PATH gives it: a name and the paths of its transcripts.
type Arm struct {
	Name  string
	Paths []string
}

// AuditABOptions are tune audit ab's choices, validated by the command.
type AuditABOptions struct {
	Arms []Arm // labelled arms; with ByEffort none
	// ByEffort makes the arms from the effort level the runs under Paths (none: the default roots)
	// record.
	ByEffort     bool
	Paths        []string
	Baseline     string // the baseline arm ("" = the first)
	CCUsage      string
	MaxLineBytes int
	// ABOptions are the comparison's: pairing, levels, mixed versions.
	audit.ABOptions
}

// AuditABResult is what tune audit ab prints.
type AuditABResult struct {
	Report *audit.ABReport
	// NoEffort counts the runs --by-effort left out because they record no effort level, of Runs.
	NoEffort, Runs int
}

// AuditAB compares the arms' runs. On an error after the scans, the result holds what was counted.
func AuditAB(env Env, opts AuditABOptions, hooks ScanHooks) (*AuditABResult, error) {
	res := &AuditABResult{}
	var arms []audit.Arm
	if opts.ByEffort {
		files, roots, err := FindTranscripts(env, opts.Paths)
		if err != nil {
			return res, err
		}
		rb := audit.NewRunBuilder("", roots)
		scan := ScanOptions(opts.CCUsage, "")
		scan.MaxLineBytes = opts.MaxLineBytes
		scan.Sink = rb
		read, err := hooks.scan(files, scan)
		if err != nil {
			return res, err
		}
		var noEffort []audit.Run
		arms, noEffort = audit.ArmsByEffort(rb.Runs(read))
		res.NoEffort, res.Runs = len(noEffort), len(noEffort)+countRuns(arms)
		if len(arms) < 2 {
			var found []string
			for _, a := range arms {
				found = append(found, fmt.Sprintf("%s (%d runs)", a.Name, len(a.Runs)))
			}
			return res, fmt.Errorf("--by-effort needs runs at two effort levels; found %s. Transcripts record the effort only from Claude Code 2.1.21x on: for older runs label the arms with --arm NAME=PATH",
				orNone(strings.Join(found, ", ")))
		}
	} else {
		var err error
		if arms, _, err = scanArms(opts.Arms, opts.CCUsage, opts.MaxLineBytes, nil, hooks); err != nil {
			return res, err
		}
	}
	if opts.Baseline != "" {
		i := 0
		for i < len(arms) && arms[i].Name != opts.Baseline {
			i++
		}
		if i == len(arms) {
			return res, exitcode.FlagErrorf("--baseline %q is not one of the arms", opts.Baseline)
		}
		arms = append([]audit.Arm{arms[i]}, append(arms[:i:i], arms[i+1:]...)...)
	}
	var err error
	res.Report, err = audit.CompareArms(arms, opts.ABOptions)
	return res, err
}

// scanArms reads each arm's transcripts into its runs, its requests labelled with the arm's name
// where they record no effort; also into also when it is set.
func scanArms(specs []Arm, ccusage string, maxLineBytes int, also transcript.Sink, hooks ScanHooks) ([]audit.Arm, []*transcript.Result, error) {
	var arms []audit.Arm
	var scans []*transcript.Result
	for _, spec := range specs {
		files, err := findArmFiles(spec)
		if err != nil {
			return nil, nil, err
		}
		rb := audit.NewRunBuilder(spec.Name, spec.Paths)
		scan := ScanOptions(ccusage, spec.Name)
		scan.MaxLineBytes = maxLineBytes
		scan.Sink = rb
		if also != nil {
			scan.Sink = audit.Tee{rb, also}
		}
		read, err := hooks.scan(files, scan)
		if err != nil {
			return nil, nil, err
		}
		scans = append(scans, read)
		arms = append(arms, audit.Arm{Name: spec.Name, Runs: rb.Runs(read)})
	}
	return arms, scans, nil
}

func findArmFiles(spec Arm) ([]string, error) {
	files, err := transcript.Discover(spec.Paths)
	if err != nil {
		return nil, fmt.Errorf("arm %s: %w", spec.Name, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("arm %s: no transcript (*.jsonl) in %s", spec.Name, strings.Join(spec.Paths, ", "))
	}
	return files, nil
}

func countRuns(arms []audit.Arm) int {
	n := 0
	for _, a := range arms {
		n += len(a.Runs)
	}
	return n
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// ReportAuditOptions are tune report audit's choices, validated by the command.
type ReportAuditOptions struct {
	Paths      []string // transcript paths; none: the arms' transcripts, else the default roots
	Arms       []Arm
	AllowMixed bool
	OutDir     string
	Pricing    string       // price file overriding the embedded table, as tune audit's
	CostMode   pricing.Mode // where a request's cost comes from ("" = auto)
	Repo       string       // the effort section's pins: CensusRoot(env, Repo)
}

// ReportAudit writes the EVAL report of an audit of the transcripts and, with two or more arms, of
// tune audit ab's comparison of them.
func ReportAudit(env Env, opts ReportAuditOptions, hooks ScanHooks) (ReportResult, error) {
	res := ReportResult{Report: "audit"}
	prices, err := LoadPrices(env, opts.Pricing, opts.CostMode)
	if err != nil {
		return res, err
	}
	// The spend part streams from the scans (of the paths, else of the arms) into one aggregate.
	spend := newAuditAggregates(audit.Options{Prices: prices})
	overArms := len(opts.Paths) == 0 && len(opts.Arms) > 0
	var also transcript.Sink
	if overArms {
		also = spend.sink()
	}
	arms, armScans, err := scanArms(opts.Arms, "", 0, also, hooks)
	if err != nil {
		return res, err
	}
	var overview *transcript.Result
	if overArms {
		overview = mergeScans(armScans)
	} else {
		files, roots, err := FindTranscripts(env, opts.Paths)
		if err != nil {
			return res, err
		}
		if len(files) == 0 {
			return res, fmt.Errorf("no transcript (*.jsonl) found in %s", DescribeRoots(roots))
		}
		scan := ScanOptions("", "")
		scan.Sink = spend.sink()
		if overview, err = hooks.scan(files, scan); err != nil {
			return res, err
		}
	}
	var ab *audit.ABReport
	if len(arms) > 0 {
		ab, err = audit.CompareArms(arms, audit.ABOptions{Alpha: 0.05, Confidence: 0.95, AllowMixed: opts.AllowMixed})
		var mixed *audit.MixedVersionsError
		if errors.As(err, &mixed) {
			return res, fmt.Errorf("%w\n(tune report audit takes --allow-mixed too)", err)
		}
		if err != nil {
			return res, err
		}
	}
	input := audit.InputOf(overview)
	input.Prices = prices.Describe(opts.Pricing)
	in := spend.reportInput(input, ab)
	repo := CensusRoot(env, opts.Repo)
	var warnings []effort.Warning
	if in.Effort, warnings, err = EffortSection(overview.Files, repo, ScanOptions("", ""), prices); err != nil {
		return res, err
	}
	for _, w := range warnings {
		res.Warnings = append(res.Warnings, effort.WarningText(repo, w))
	}
	if repo != "" {
		res.Notes = append(res.Notes, PinsNote(repo, opts.Repo))
	}
	res.Files, err = report.WriteAudit(opts.OutDir, in)
	return res, err
}
