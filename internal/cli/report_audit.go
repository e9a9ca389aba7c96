package cli

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldd-tools/tune/internal/audit"
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

func auditReportRun(opts *reportOptions) (reportResult, error) {
	res := reportResult{Report: "audit"}
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
			scan, err := scanWithProgress(opts.IO, files, scanOptions("", spec.Name))
			if err != nil {
				return res, err
			}
			warnSkipped(opts.IO.ErrOut, scan)
			armScans = append(armScans, scan)
			arms = append(arms, audit.Arm{Name: spec.Name, Runs: audit.RunsOf(scan, spec.Name, spec.Paths)})
		}
	}
	var overview *transcript.Result
	if len(opts.Paths) > 0 || len(arms) == 0 {
		files, roots, err := findTranscripts(opts.Paths, opts.Getenv)
		if err != nil {
			return res, err
		}
		if len(files) == 0 {
			return res, fmt.Errorf("no transcript (*.jsonl) found in %s", describeRoots(roots))
		}
		if overview, err = scanWithProgress(opts.IO, files, scanOptions("", "")); err != nil {
			return res, err
		}
		warnSkipped(opts.IO.ErrOut, overview)
	} else {
		overview = mergeScans(armScans)
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
	var err error
	res.Files, err = report.WriteAudit(opts.OutDir, AuditReportFrom(overview, ab))
	return res, err
}

// mergeScans joins the scans of several arms for the spend part of the report.
func mergeScans(scans []*transcript.Result) *transcript.Result {
	out := &transcript.Result{Skipped: map[string]int{}}
	for _, s := range scans {
		out.Requests = append(out.Requests, s.Requests...)
		out.Sessions = append(out.Sessions, s.Sessions...)
		out.Files = append(out.Files, s.Files...)
		for k, n := range s.Skipped {
			out.Skipped[k] += n
		}
	}
	sort.SliceStable(out.Sessions, func(i, j int) bool { return out.Sessions[i].ID < out.Sessions[j].ID })
	return out
}

// AuditReportFrom converts a transcript scan and, when arms were compared, tune audit ab's comparison
// into the audit report's input: numbers and labels only. `tune audit --report` can call it with the
// scan it already has and report.WriteAudit(dir, in).
func AuditReportFrom(scan *transcript.Result, ab *audit.ABReport) report.AuditReport {
	rep := audit.Aggregate(scan.Requests, "")
	input := audit.InputOf(scan)
	t, sh := rep.Totals, rep.Shares
	in := report.AuditReport{
		Files: input.Files, Sessions: input.Sessions, Skipped: map[string]int{},
		Totals: report.TokenTotals{Requests: t.Requests, Input: int64(t.InputTokens), Output: int64(t.OutputTokens),
			CacheWrite: int64(t.CacheCreationInputTokens), CacheRead: int64(t.CacheReadInputTokens), Thinking: int64(t.ThinkingTokens),
			ThinkingExactRequests: t.ThinkingExactRequests, ThinkingEstimatedRequests: t.ThinkingEstimatedRequests},
	}
	for k, n := range scan.Skipped {
		if n > 0 {
			in.Skipped[k] = n
		}
	}
	if t.Requests > 0 {
		in.Spend = []report.SpendShare{
			{Kind: "input", Share: sh.Spend.Input, ShareTTLAware: sh.TTL.Input},
			{Kind: "output", Share: sh.Spend.Output, ShareTTLAware: sh.TTL.Output},
			{Kind: "cache write", Share: sh.Spend.CacheWrite, ShareTTLAware: sh.TTL.CacheWrite},
			{Kind: "cache read", Share: sh.Spend.CacheRead, ShareTTLAware: sh.TTL.CacheRead},
		}
		sort.SliceStable(in.Spend, func(i, j int) bool { return in.Spend[i].Share > in.Spend[j].Share })
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
	in.Thinking = thinkingGroups(scan.Requests, t.ThinkingTokens)
	if ab != nil {
		in.AB = abComparison(ab)
	}
	return in
}

// thinkingGroups is thinking by class (fixed order) and, within a class, by effort (low to max).
func thinkingGroups(reqs []transcript.Request, totalThinking uint64) []report.ThinkingGroup {
	byClass := map[transcript.Class][]transcript.Request{}
	for i := range reqs {
		byClass[reqs[i].Class] = append(byClass[reqs[i].Class], reqs[i])
	}
	var out []report.ThinkingGroup
	for c := transcript.ClassMain; c <= transcript.ClassSideQuestion; c++ {
		if len(byClass[c]) == 0 {
			continue
		}
		groups := audit.Aggregate(byClass[c], audit.ByEffort).Groups
		sort.SliceStable(groups, func(i, j int) bool { return audit.EffortLess(groups[i].Key, groups[j].Key) })
		for _, g := range groups {
			effort := g.Key
			if effort == audit.NoEffort {
				effort = ""
			}
			share := 0.0
			if totalThinking > 0 {
				share = float64(g.Totals.ThinkingTokens) / float64(totalThinking)
			}
			out = append(out, report.ThinkingGroup{Class: c.String(), Effort: effort, Requests: g.Totals.Requests,
				Output: int64(g.Totals.OutputTokens), Thinking: int64(g.Totals.ThinkingTokens), ShareOfThinking: share,
				Estimated: g.Totals.ThinkingEstimatedRequests > 0})
		}
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
