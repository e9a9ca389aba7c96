package report

import (
	"math"
	"time"

	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/weights"
)

// Hand-built, realistic report inputs: what evolve, store and audit hand over after a typical nightly run.
// They are shaped like the real thing (reference weights, the contract scenario names, token counts in the
// range of the bundled transcripts) so that the goldens read like real reports.

func referenceWeights() weights.Weights { return testutil.ReferenceWeights() }

// derive returns w as a new version with one signal changed by delta half-points.
func derive(w weights.Weights, version int, s weights.Signal, delta weights.Half, reason string, created time.Time) weights.Weights {
	w.Parent, w.Version, w.Reason, w.Created = w.Version, version, reason, created
	w.Signals[s] += delta
	return w
}

// secretTitle is a task title with a pasted key: the report must never show the key.
const secretKey = "sk-ant-api03-Zx9QmT4vLr8NwP2kYb6HcJ"
const secretTitle = "rotate the deploy key " + secretKey + " in ci/secrets.yaml"

func sampleProposal() ProposalReport {
	before := referenceWeights()
	before.Version = 3
	after := before
	after.Version, after.Parent = 0, 3
	after.Signals[weights.Ambiguous]++ // the halved step: +0.5
	return ProposalReport{
		ID: "p-4f1c2a9be07d", Created: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC), Parent: 3,
		Decision: "halve", Reason: "3 low-side regressions share ambiguous", Confidence: "provisional",
		Window: &Window{Size: 20, Triggered: true, Trigger: 3, Logs: []WindowLog{
			{Source: "projects/api/.ldd/trace.log", Labelled: 31, Tasks: 20, Closed: 18, Eligible: 5, ResolvedByActive: count(2), LedgerUsed: count(3), MedianLossFinal: loss(0.25),
				First: "2026-11-20T09:12:03Z", Last: "2026-11-30T17:40:55Z"},
			{Source: "projects/web/.ldd/trace.log", Labelled: 9, Tasks: 9, Closed: 9, Eligible: 2, ResolvedByActive: count(0), LedgerUsed: count(0), MedianLossFinal: loss(0.5),
				First: "2026-11-22T08:00:00Z", Last: "2026-11-29T12:05:41Z"},
		}},
		Flagged: []FlaggedTask{
			{MetaTimestamp: "2026-11-21T10:02:11Z", Title: "tidy the retry helper, maybe split it?", Level: "L1",
				Source: "projects/api/.ldd/trace.log", Line: 41, Evidence: []string{"regression_followed"},
				Signals: []string{"ambiguous", "single-file"}},
			{MetaTimestamp: "2026-11-24T14:30:00Z", Title: secretTitle, Level: "L1",
				Source: "projects/api/.ldd/trace.log", Line: 77, Evidence: []string{"regression_of 2026-11-25T08:00:12Z"},
				Signals: []string{"ambiguous"}},
			{MetaTimestamp: "2026-11-27T16:45:09Z", Title: "clean up *whatever* is slow in [search]", Level: "L0",
				Source: "projects/web/.ldd/trace.log", Line: 12, Evidence: []string{"same-area 2026-11-28T11:20:00Z (web/search.go)"},
				Signals: []string{"ambiguous", "explicit-bugfix"}, Redetected: true},
		},
		Screen: []ScreenRow{
			{Signal: "ambiguous", A: 3, B: 2, C: 0, D: 13, Phi: 0.67, LogOdds: 3.52, Z: 2.14, FisherP: 0.0098, HolmP: 0.088, MinP: 0.0025, Consistent: true, Verdict: "candidate", Chosen: true},
			{Signal: "single-file", A: 1, B: 6, C: 2, D: 9, Phi: -0.07, LogOdds: -0.31, Z: -0.22, FisherP: 0.71, HolmP: 1, MinP: 0.0025, Verdict: "no signal"},
			{Signal: "explicit-bugfix", A: 1, B: 4, C: 2, D: 11, Phi: 0.04, LogOdds: 0.25, Z: 0.17, FisherP: 0.56, HolmP: 1, MinP: 0.0025, Verdict: "no signal"},
			{Signal: "unknown-file-territory", A: 0, B: 1, C: 3, D: 14, Phi: -0.1, LogOdds: -0.48, Z: -0.22, FisherP: 1, HolmP: 1, MinP: 0.17, Verdict: "underpowered"},
		},
		Attempts: []Attempt{
			{Change: "ambiguous +1", Decision: "revert", SuiteLossBefore: 1, SuiteLossAfter: 0.8, ScenariosWorse: []string{"user-override-down"},
				MotivatingUp: 3, Motivating: 3, Note: "a scenario's loss rose", Lifted: 3, Parity: "1 of 255 parity prompts change level (up 1, down 0), too-high cost 0.004 ≤ budget 0.030"},
			{Change: "ambiguous +0.5", Decision: "halve", SuiteLossBefore: 1, SuiteLossAfter: 0.6, MotivatingUp: 2, Motivating: 3, Lifted: -1},
		},
		Replay: []ScenarioLoss{
			{Scenario: "bugfix-single-file", Expected: "L0", LevelBefore: "L0", LevelAfter: "L0"},
			{Scenario: "ambiguous-refactor", Expected: "L2", LevelBefore: "L1", LevelAfter: "L2", LossBefore: 2},
			{Scenario: "greenfield-service", Expected: "L3|L4", LevelBefore: "L3", LevelAfter: "L3"},
			{Scenario: "cross-layer-contract", Expected: "L3", LevelBefore: "L2", LevelAfter: "L2", LossBefore: 2, LossAfter: 2},
			{Scenario: "user-override-down", Expected: "L1", LevelBefore: "L1", LevelAfter: "L1", LossBefore: 1, LossAfter: 1},
		},
		SuiteLossBefore: 1, SuiteLossAfter: 0.6,
		Before: before, After: after,
		Decisive: []TaskScore{
			{Title: "tidy the retry helper, maybe split it?", Parent: -2, Candidate: -1.5},
			{Title: secretTitle, Parent: -2.5, Candidate: -2},
			{Title: "clean up *whatever* is slow in [search]", Parent: -3, Candidate: -2.5},
		},
		Discordant:  &SignTest{Better: 1, Worse: 0, P: 1, MinP: 1, Verdict: "insufficient evidence"},
		LeaveOneOut: &LeaveOneOut{Agree: 4, Folds: 5, Flips: []string{"ambiguous-refactor"}},
		Holdout:     &Holdout{Scenarios: 4, LossBefore: loss(0.5), LossAfter: loss(0.25), Verdict: "better", Reads: 2},
		Warnings:    []string{"task 2026-11-27T16:45:09Z: recorded level L0 disagrees with its recorded signals (raw -3 → L1)"},
	}
}

func loss(v float64) *float64 { return &v }

func sampleHistory() HistoryReport {
	at := func(day, hour int) time.Time { return time.Date(2026, 11, day, hour, 0, 0, 0, time.UTC) }
	v1 := referenceWeights()
	v2 := derive(v1, 2, weights.Ambiguous, 1, "apply p-4f1c2a9be07d: ambiguous +0.5", at(2, 9))
	v3 := derive(v2, 3, weights.ContractRuleHit, 2, "apply p-9b0e33c1d2aa: contract-rule-hit +1", at(9, 9))
	v4 := v2
	v4.Version, v4.Parent, v4.Created, v4.Reason = 4, 3, at(12, 10), "rollback to v0002: docs tasks over-dispatched (see https://ops:hunter2@wiki.example.com/x)"
	return HistoryReport{
		Active:   4,
		Versions: []weights.Weights{v1, v2, v3, v4},
		Entries: []HistoryEntry{
			{Serial: 1, Time: at(1, 3), Action: "init", Result: 1, Reason: "store created"},
			{Serial: 2, Time: at(1, 3), Action: "revert", Parent: 1, Proposal: "p-4f1c2a9be07d", Change: "ambiguous +1", Decision: "revert",
				SuiteLossBefore: loss(0.6), SuiteLossAfter: loss(0.8), Evidence: 3, Reason: "scenario loss rose: user-override-down 1→2"},
			{Serial: 3, Time: at(1, 3), Action: "halve", Parent: 1, Proposal: "p-4f1c2a9be07d", Change: "ambiguous +0.5", Decision: "halve",
				SuiteLossBefore: loss(0.6), SuiteLossAfter: loss(0.4), Evidence: 3},
			{Serial: 4, Time: at(2, 9), Action: "apply", Parent: 1, Result: 2, Proposal: "p-4f1c2a9be07d"},
			{Serial: 5, Time: at(8, 3), Action: "accept", Parent: 2, Proposal: "p-9b0e33c1d2aa", Change: "contract-rule-hit +1", Decision: "accept",
				SuiteLossBefore: loss(0.4), SuiteLossAfter: loss(0.3), Evidence: 4},
			{Serial: 6, Time: at(9, 9), Action: "apply", Parent: 2, Result: 3, Proposal: "p-9b0e33c1d2aa"},
			{Serial: 7, Time: at(12, 10), Action: "rollback", Parent: 3, Result: 4, Restores: 2, Reason: "docs tasks over-dispatched"},
			{Serial: 8, Time: at(15, 3), Action: "revert", Parent: 4, Proposal: "p-0c7d55e18f03", Change: "bucket L1 edge -1", Decision: "revert",
				SuiteLossBefore: loss(0.4), SuiteLossAfter: loss(0.5), Evidence: 3, Reason: "suite loss rose 0.400 → 0.500"},
		},
	}
}

// sampleAudit has the token totals of the 20 bundled spotter transcripts (ccusage's numbers) and an A/B of
// two effort arms with six and four runs.
func sampleAudit() AuditReport {
	in, out, cw, cr := 9165.0, 195801.0, 2079960.0, 77423878.0
	std := in + 5*out + 0.1*cr + 1.25*cw
	ttl := in + 5*out + 0.1*cr + 2*cw
	nan := math.NaN()
	return AuditReport{
		Files: 20, Sessions: 20,
		Totals: TokenTotals{Requests: 1349, Input: 9165, Output: 195801, CacheWrite: 2079960, CacheRead: 77423878,
			Thinking: 16240, ThinkingExactRequests: 0, ThinkingEstimatedRequests: 212,
			CostUSD: 51.74, Cost1hPremiumUSD: 2.67, Prices: "ccusage 20.0.24 offline prices (table extracted 2026-12-02)"},
		Skipped: map[string]int{"truncated": 1, "not-object": 0, "malformed": 2},
		Spend: []SpendShare{
			{Kind: "cache read", CostUSD: 33.59, ShareOfCost: 0.649, Share: 0.1 * cr / std, ShareTTLAware: 0.1 * cr / ttl},
			{Kind: "cache write", CostUSD: 13.82, ShareOfCost: 0.267, Share: 1.25 * cw / std, ShareTTLAware: 2 * cw / ttl},
			{Kind: "output", CostUSD: 4.28, ShareOfCost: 0.083, Share: 5 * out / std, ShareTTLAware: 5 * out / ttl},
			{Kind: "input", CostUSD: 0.05, ShareOfCost: 0.001, Share: in / std, ShareTTLAware: in / ttl},
		},
		Figures: []Figure{
			{Name: "thinking share of output", Value: 16240.0 / 195801, Share: true},
			{Name: "main-loop share of thinking", Value: 0.97, Share: true},
			{Name: "mean thinking per request, main loop", Value: 88.4},
			{Name: "mean thinking per request, subagents", Value: 21.5},
			{Name: "mean cached context per main-loop request", Value: 61234},
		},
		Notes: []string{"thinking tokens are partly estimated from stored thinking text (characters / 4): a lower bound"},
		Thinking: []ThinkingGroup{
			{Class: "main", Effort: "high", Requests: 170, Output: 150210, Thinking: 15752, ShareOfThinking: 0.97, Estimated: true},
			{Class: "subagent", Effort: "", Requests: 1160, Output: 44020, Thinking: 488, ShareOfThinking: 0.03, Estimated: true},
			{Class: "compaction", Effort: "", Requests: 19, Output: 1571, Thinking: 0, ShareOfThinking: 0},
		},
		Effort: &EffortSection{Requests: 40, WithEffort: 36, Census: true,
			Shifts:         []EffortCount{{"ok", 9}, {"no-op: lone call", 2}, {"ignored", 1}, {"unexpected level", 1}},
			Reasserts:      []EffortCount{{"re-asserted", 1}, {"not re-asserted", 1}},
			SubagentShifts: 1, StuckSessions: 1,
			Agents: []EffortAgent{{Agent: "general-purpose", Observed: "high 3", Runs: 1, Verdict: "inherits"},
				{Agent: "hotfixer", Pinned: "low", Observed: "low 3, medium 1", Runs: 2, Verdict: "off its pin"}},
			Levels: []EffortLevel{{"medium", 12, 3400, 0, 0.3}, {"high", 24, 5800, 100, 0.62}, {"unknown", 4, 300, 0, 0.08}}},
		AB: &ABComparison{
			Arms: []string{"medium", "high"},
			Metrics: []ABMetric{
				{Name: "output_tokens", Unit: "tokens", P: 0.0095, PHolm: 0.038, Significant: true, Ratio: 1.68, RatioLo: 1.21, RatioHi: 2.49,
					Arms: [2]ArmStat{
						{Arm: "medium", N: 4, Median: 8550, Runs: []float64{8000, 9100, 7600, 9900}},
						{Arm: "high", N: 6, Median: 14400, Lo: 9800, Hi: 20100, HasCI: true, Runs: []float64{12000, 15500, 9800, 20100, 13300, 17750}},
					}},
				{Name: "requests", Unit: "requests", P: 0.352, PHolm: 0.704, Ratio: 1.2, RatioLo: 0.8, RatioHi: 1.6,
					Arms: [2]ArmStat{
						{Arm: "medium", N: 4, Median: 62.5, Runs: []float64{55, 70, 61, 64}},
						{Arm: "high", N: 6, Median: 75, Lo: 58, Hi: 90, HasCI: true, Runs: []float64{58, 90, 71, 79, 66, 84}},
					}},
				{Name: "thinking_tokens", Unit: "tokens", P: 0.61, PHolm: 0.704, Ratio: nan, RatioLo: nan, RatioHi: nan,
					Arms: [2]ArmStat{
						{Arm: "medium", N: 4, Median: 0, Runs: []float64{0, 0, 0, 12}},
						{Arm: "high", N: 6, Median: 0, Lo: 0, Hi: 40, HasCI: true, Runs: []float64{0, 40, 0, 0, 22, 0}},
					}},
				{Name: "wall_seconds", Unit: "seconds", P: 0.067, PHolm: 0.201, Ratio: 1.45, RatioLo: 1.05, RatioHi: 2.0,
					Arms: [2]ArmStat{
						{Arm: "medium", N: 4, Median: 318, Runs: []float64{300, 356, 280, 336}},
						{Arm: "high", N: 6, Median: 435, Lo: 388, Hi: 602, HasCI: true, Runs: []float64{410, 388, 530, 460, 602, 395}},
					}},
			},
			Footnotes: []string{"medium: 4 runs are too few for a 95 % CI of the median (6 needed)."},
		},
	}
}

func count(n int) *int { return &n }
