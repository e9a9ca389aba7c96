package cli

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/pricing"
	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/transcript"
)

// newCmdReportAudit builds `tune report audit`; it shares reportOptions with the other reports.
func newCmdReportAudit(opts *reportOptions, run func(kind string) func(*cobra.Command, []string) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit [PATH...] [--arm NAME=PATH...]",
		Short: "Report on transcripts: spend shares, thinking by class and effort, and an A/B of arms",
		Long: `Write the EVAL report of a transcript audit: token totals, the share of weighted spend of each token
kind (with a chart; standard and TTL-aware prices, as tune audit), the headline figures, thinking by
class (main, subagent, compaction, side-question) and effort, and — with two or more --arm — the A/B
table of tune audit ab (medians with 95% CIs, Mann–Whitney p, Holm, bootstrap ratio, "~" for no
detected difference) with a chart of every run per arm.

Transcripts are found as tune audit finds them (PATH arguments, else CLAUDE_CONFIG_DIR or the default
folders). With --arm and no PATH, the spend part covers the arms' transcripts, each labelled with its
arm name as the effort where the transcript records none. Arms that mix Claude Code versions with
different output-token semantics are refused unless --allow-mixed (the report then says so loudly).

The report holds numbers and labels only: no transcript text is ever copied into it.`,
		Example: `  tune report audit ~/.claude/projects/-home-me-shop-api
  tune report audit --arm high=runs/high --arm xhigh=runs/xhigh --out reports/`,
		Args: cobra.ArbitraryArgs,
		RunE: run("audit"),
	}
	cmd.Flags().StringArrayVar(&opts.Arms, "arm", nil, "an A/B arm: `NAME=PATH` (repeatable; the first is the baseline)")
	cmd.Flags().BoolVar(&opts.AllowMixed, "allow-mixed", false, "compare arms whose Claude Code versions count output tokens differently")
	return cmd
}

func auditReportRun(opts *reportOptions) (app.ReportResult, error) {
	res := app.ReportResult{Report: "audit"}
	// The spend part streams from the scans (of the paths, else of the arms) into one aggregate.
	spend := newAuditAggregates(audit.Options{})
	overArms := len(opts.Paths) == 0 && len(opts.Arms) > 0
	var arms []audit.Arm
	var armScans []*transcript.Result
	if len(opts.Arms) > 0 {
		// tune audit ab's own parsing of NAME=PATH, so that both commands read arms the same way.
		ab := auditABOptions{Arms: opts.Arms, Format: "text", PairBy: "order", Alpha: 0.05, Confidence: 0.95}
		if err := ab.validate(); err != nil {
			return res, err
		}
		for _, spec := range ab.arms {
			files, err := findArmFiles(spec)
			if err != nil {
				return res, err
			}
			rb := audit.NewRunBuilder(spec.Name, spec.Paths)
			scan := scanOptions("", spec.Name)
			scan.Sink = rb
			if overArms {
				scan.Sink = audit.Tee{rb, spend.sink()}
			}
			armScan, err := scanWithProgress(opts.IO, files, scan)
			if err != nil {
				return res, err
			}
			warnSkipped(opts.IO.ErrOut, armScan)
			armScans = append(armScans, armScan)
			arms = append(arms, audit.Arm{Name: spec.Name, Runs: rb.Runs(armScan)})
		}
	}
	var overview *transcript.Result
	if overArms {
		overview = mergeScans(armScans)
	} else {
		files, roots, err := findTranscripts(opts.Paths, opts.Env.Getenv)
		if err != nil {
			return res, err
		}
		if len(files) == 0 {
			return res, fmt.Errorf("no transcript (*.jsonl) found in %s", describeRoots(roots))
		}
		scan := scanOptions("", "")
		scan.Sink = spend.sink()
		if overview, err = scanWithProgress(opts.IO, files, scan); err != nil {
			return res, err
		}
		warnSkipped(opts.IO.ErrOut, overview)
	}
	var ab *audit.ABReport
	if len(arms) > 0 {
		var err error
		ab, err = audit.CompareArms(arms, audit.ABOptions{Alpha: 0.05, Confidence: 0.95, AllowMixed: opts.AllowMixed})
		var mixed *audit.MixedVersionsError
		if errors.As(err, &mixed) {
			return res, fmt.Errorf("%w\n(tune report audit takes --allow-mixed too)", err)
		}
		if err != nil {
			return res, err
		}
	}
	in := spend.reportInput(audit.InputOf(overview), ab)
	var err error
	if in.Effort, err = effortSection(overview.Files); err != nil {
		return res, err
	}
	res.Files, err = report.WriteAudit(opts.OutDir, in)
	return res, err
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

// reportInput is the audit report of the aggregates (see AuditReportFrom).
func (a *auditAggregates) reportInput(in audit.Input, ab *audit.ABReport) report.AuditReport {
	return AuditReportFrom(a.spend.Report(), a.thinking, in, ab)
}

// AuditReportFrom converts an audit — the aggregate report, thinking by class and effort, what was
// read and, when arms were compared, tune audit ab's comparison — into the audit report's input:
// numbers and labels only, never transcript text.
func AuditReportFrom(rep *audit.Report, thinking *audit.ClassEffort, input audit.Input, ab *audit.ABReport) report.AuditReport {
	t, sh := rep.Totals, rep.Shares
	if input.Prices == "" {
		input.Prices = pricesLine(pricing.Embedded(), "")
	}
	in := report.AuditReport{
		Files: input.Files, Sessions: input.Sessions, Skipped: map[string]int{},
		Totals: report.TokenTotals{Requests: t.Requests, Input: int64(t.InputTokens), Output: int64(t.OutputTokens),
			CacheWrite: int64(t.CacheCreationInputTokens), CacheRead: int64(t.CacheReadInputTokens), Thinking: int64(t.ThinkingTokens),
			ThinkingExactRequests: t.ThinkingExactRequests, ThinkingEstimatedRequests: t.ThinkingEstimatedRequests,
			CostUSD: t.PricedCostUSD, UnpricedRequests: t.UnpricedRequests, Cost1hPremiumUSD: t.Cost1hPremiumUSD, Prices: input.Prices},
	}
	for k, n := range input.Skipped {
		if n > 0 {
			in.Skipped[k] = n
		}
	}
	if t.Requests > 0 {
		c := t.CostByKindUSD
		in.Spend = []report.SpendShare{
			{Kind: "input", CostUSD: c.Input, ShareOfCost: sh.Cost.Input, Share: sh.Spend.Input, ShareTTLAware: sh.TTL.Input},
			{Kind: "output", CostUSD: c.Output, ShareOfCost: sh.Cost.Output, Share: sh.Spend.Output, ShareTTLAware: sh.TTL.Output},
			{Kind: "cache write", CostUSD: c.CacheWrite, ShareOfCost: sh.Cost.CacheWrite, Share: sh.Spend.CacheWrite, ShareTTLAware: sh.TTL.CacheWrite},
			{Kind: "cache read", CostUSD: c.CacheRead, ShareOfCost: sh.Cost.CacheRead, Share: sh.Spend.CacheRead, ShareTTLAware: sh.TTL.CacheRead},
		}
		sort.SliceStable(in.Spend, func(i, j int) bool { return in.Spend[i].CostUSD > in.Spend[j].CostUSD })
		in.Figures = append(in.Figures,
			report.Figure{Name: "thinking share of output tokens", Value: sh.ThinkingOfOutput, Share: true},
			report.Figure{Name: "thinking share of weighted spend", Value: sh.Spend.Thinking, Share: true},
			report.Figure{Name: "weighted spend outside the main loop", Value: sh.Spend.NonMain, Share: true})
		for _, f := range []struct {
			name  string
			v     *float64
			share bool
		}{
			{"main-loop share of thinking", sh.ThinkingInMain, true},
			{"mean thinking per request, main loop", sh.MeanThinkingMain, false},
			{"mean thinking per request, outside the main loop", sh.MeanThinkingSub, false},
			{"mean cached context per main-loop request", sh.MeanContextMain, false},
		} {
			if f.v != nil {
				v := *f.v
				if !f.share {
					v = math.Round(v*10) / 10 // a mean of token counts: one decimal is all it means
				}
				in.Figures = append(in.Figures, report.Figure{Name: f.name, Value: v, Share: f.share})
			}
		}
	}
	if sh.ThinkingEstimated {
		in.Notes = append(in.Notes, "Some thinking tokens are estimated from the stored thinking text (characters / 4); Claude Code stores a summary, so these are lower bounds.")
	}
	if sh.ThinkingIncomplete {
		in.Notes = append(in.Notes, fmt.Sprintf("%d requests record no usable thinking (neither a count nor text): thinking totals are lower bounds.", t.ThinkingUnknownRequests))
	}
	if sh.OutputPartialVersion {
		in.Notes = append(in.Notes, "Some requests come from Claude Code versions before 2.1.70, whose transcripts keep streaming snapshots of output_tokens: output and its shares are lower bounds.")
	}
	in.Thinking = thinkingGroups(thinking, t.ThinkingTokens)
	if ab != nil {
		in.AB = abComparison(ab)
	}
	return in
}

// thinkingGroups is the report's thinking table: by class (fixed order) and, within a class, by
// effort (low to max).
func thinkingGroups(thinking *audit.ClassEffort, totalThinking uint64) []report.ThinkingGroup {
	var out []report.ThinkingGroup
	for _, g := range thinking.Groups() {
		effort := g.Effort
		if effort == audit.NoEffort {
			effort = ""
		}
		share := 0.0
		if totalThinking > 0 {
			share = float64(g.Totals.ThinkingTokens) / float64(totalThinking)
		}
		out = append(out, report.ThinkingGroup{Class: g.Class.String(), Effort: effort, Requests: g.Totals.Requests,
			Output: int64(g.Totals.OutputTokens), Thinking: int64(g.Totals.ThinkingTokens), ShareOfThinking: share,
			Estimated: g.Totals.ThinkingEstimatedRequests > 0})
	}
	return out
}

// metricUnits label the chart axes of the A/B metrics.
var metricUnits = map[string]string{"requests": "requests", "output_tokens": "tokens", "thinking_tokens": "tokens",
	"wall_seconds": "seconds", "active_seconds": "seconds"}

func abComparison(ab *audit.ABReport) *report.ABComparison {
	out := &report.ABComparison{Paired: ab.Paired, Warnings: ab.Notes}
	for _, a := range ab.Arms {
		out.Arms = append(out.Arms, a.Name)
	}
	// Footnotes: each distinct warning once, with the metrics it concerns.
	var notes []string
	concerns := map[string][]string{}
	for _, m := range ab.Metrics {
		stat := func(arm string) report.ArmStat {
			s := m.Arms[arm]
			st := report.ArmStat{Arm: arm, N: s.N, Median: orNaN(s.Median), Lo: orNaN(s.Lo), Hi: orNaN(s.Hi), HasCI: s.Lo != nil && s.Hi != nil}
			for i := range ab.Runs {
				if r := &ab.Runs[i]; r.Arm == arm {
					if v, ok := r.Value(m.Name); ok {
						st.Runs = append(st.Runs, v)
					}
				}
			}
			return st
		}
		out.Metrics = append(out.Metrics, report.ABMetric{Name: m.Name, Unit: metricUnits[m.Name],
			Arms: [2]report.ArmStat{stat(m.Baseline), stat(m.Arm)}, P: orNaN(m.P), PHolm: orNaN(m.PHolm), Significant: m.Significant,
			Ratio: orNaN(m.Ratio), RatioLo: orNaN(m.RatioLo), RatioHi: orNaN(m.RatioHi)})
		for _, w := range m.Warnings {
			if _, ok := concerns[w]; !ok {
				notes = append(notes, w)
			}
			if c := concerns[w]; len(c) == 0 || c[len(c)-1] != m.Name {
				concerns[w] = append(c, m.Name)
			}
		}
	}
	for _, w := range notes {
		out.Footnotes = append(out.Footnotes, strings.Join(concerns[w], ", ")+": "+w)
	}
	return out
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
