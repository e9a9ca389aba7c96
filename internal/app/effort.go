package app

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ldd-tools/tune/internal/effort"
	"github.com/ldd-tools/tune/internal/exitcode"
	"github.com/ldd-tools/tune/internal/pricing"
	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/transcript"
)

// EffortOptions are tune effort's choices, validated by the command.
type EffortOptions struct {
	// Repo is the directory whose agents and skills are censused ("" = no census); the command has
	// checked that it is a directory.
	Repo       string
	CensusOnly bool     // read no transcripts
	Paths      []string // transcript paths; none: the default roots
	// Pricing and CostMode price the requests as tune audit's flags of the same names do.
	Pricing  string
	CostMode pricing.Mode
}

// EffortResult is what tune effort prints.
type EffortResult struct {
	Report *effort.Report
	// CensusWarnings are the census's warnings (files named under Repo), ObservedWarnings the
	// transcripts' (both are in Report.Warnings too).
	CensusWarnings   []effort.Warning
	ObservedWarnings []effort.Warning
	// Repo is the repository the census read: Repo of the options, else the project root when it
	// holds a Claude Code set-up (CensusRoot), else "".
	Repo string
	// Roots are where the transcripts were looked for; NoTranscripts says none was found there.
	Roots         []string
	NoTranscripts bool
}

// Effort takes the census of Repo and observes the effort levels in the transcripts. On an error
// after the census, the result holds the census and its warnings.
func Effort(env Env, opts EffortOptions) (*EffortResult, error) {
	prices, err := LoadPrices(env, opts.Pricing, opts.CostMode)
	if err != nil {
		return nil, err
	}
	var census *effort.Census
	repo := CensusRoot(env, opts.Repo)
	if repo != "" {
		if census, err = effort.TakeCensus(os.DirFS(repo)); err != nil {
			return nil, err
		}
	}
	rep := effort.NewReport(repo, census)
	n := len(rep.Warnings)
	res := &EffortResult{Report: rep, CensusWarnings: rep.Warnings[:n:n], Repo: repo}
	if opts.CensusOnly {
		return res, nil
	}
	files, roots, err := FindTranscripts(env, opts.Paths)
	if err != nil {
		return res, err
	}
	res.Roots, res.NoTranscripts = roots, len(files) == 0
	obs, err := effort.Observe(files, effort.Options{Census: census, Scan: ScanOptions("", ""), Prices: prices, Open: openFile})
	if err != nil {
		return res, err
	}
	rep.AddObserved(obs)
	res.ObservedWarnings = obs.Warnings
	return res, nil
}

func openFile(name string) (io.ReadCloser, error) { return regular.Open(name) }

// CensusRoot is the repository the audit report's effort section reads pins from
// (docs/decisions.md#effort-conformance-issue-14): repo when given (--repo), else the project root
// (the directory of env.Config, tune.toml) when it holds a Claude Code set-up (effort.HasSetup), else
// "" (no census).
func CensusRoot(env Env, repo string) string {
	if repo != "" || env.Config == "" {
		return repo
	}
	root := filepath.Dir(env.Config)
	if effort.HasSetup(os.DirFS(root)) {
		return root
	}
	return ""
}

// PinsNote is the note that says where the effort pins were read: repo, given as --repo (flag) or
// found as the project root (CensusRoot). tune effort, tune audit --report and tune report audit
// say it in these words.
func PinsNote(repo, flag string) string {
	if flag == "" {
		return "effort pins read from " + repo + " (the project root)"
	}
	return "effort pins read from " + repo
}

// CheckRepo checks a --repo flag (tune effort, tune audit --report, tune report audit): an existing
// directory. One that is not a directory is a usage error; one that cannot be read is not.
func CheckRepo(repo string) error {
	if repo == "" {
		return nil
	}
	info, err := os.Stat(repo)
	if err != nil {
		return fmt.Errorf("--repo: %w", err)
	}
	if !info.IsDir() {
		return exitcode.FlagErrorf("--repo %s: not a directory", repo)
	}
	return nil
}

// EffortSection is the audit report's effort conformance section over the files an audit read, in a
// pass of its own (tune report audit, whose arms are read apart; tune audit --report reads it in the
// audit's own pass, attachEffortSection), with the audit's line rules (scan: ScanOptions without an
// effort label) and prices, checked against the census of repo ("" reads none: shifts are then the
// effort-<level> skills and agents are not judged). It returns the census's warnings (files named
// under repo).
func EffortSection(files []string, repo string, scan transcript.Options, prices *pricing.Table) (*report.EffortSection, []effort.Warning, error) {
	census, err := sectionCensus(repo)
	if err != nil {
		return nil, nil, err
	}
	obs, err := effort.Observe(files, effort.Options{Census: census, Scan: scan, Prices: prices, Open: openFile})
	if err != nil {
		return nil, nil, err
	}
	section, warnings := sectionOf(obs, census)
	return section, warnings, nil
}

// attachEffortSection makes the audit's own scan read the effort section too (effort.Attach): one
// pass over the transcripts for tune audit --report. finish builds the section from the scan's result.
func attachEffortSection(scan *transcript.Options, repo string, prices *pricing.Table) (finish func(*transcript.Result) (*report.EffortSection, []effort.Warning), err error) {
	census, err := sectionCensus(repo)
	if err != nil {
		return nil, err
	}
	observed := effort.Attach(scan, effort.Options{Census: census, Prices: prices, Open: openFile})
	return func(res *transcript.Result) (*report.EffortSection, []effort.Warning) {
		return sectionOf(observed(res), census)
	}, nil
}

// sectionCensus is the census of repo's pins ("" reads none: nil).
func sectionCensus(repo string) (*effort.Census, error) {
	if repo == "" {
		return nil, nil
	}
	return effort.TakeCensus(os.DirFS(repo))
}

// sectionOf is the report's effort section of what was observed, and the census's warnings.
func sectionOf(obs *effort.Observed, census *effort.Census) (*report.EffortSection, []effort.Warning) {
	var warnings []effort.Warning
	if census != nil {
		warnings = census.Warnings
	}
	return effort.Section(obs, census != nil), warnings
}
