// Package evolve is one evolution step of the level scorer (docs/decisions.md#evolution-step): it reads tasks that
// traceparse produced, finds the low-side regressions, accumulates the evidence across nights and logs,
// tests every signal with an anytime-valid e-value, weighs +1 and +2 with the stated losses, replays the
// fixture suite under the parent and the candidate, and decides.
//
// Every stage is a pure function that returns its data and its warnings; nothing prints, nothing reads a
// file. The stages, in order (docs/decisions.md, issue 28):
//
//	Logs       every labelled task of each trace log, resolved; the window is the last 20 of a log
//	Eligible   dispatched auto, level L0/L1, closed, final loss known (bump and override-down never),
//	           still L0/L1 under the active weights, not in the evidence ledger
//	Evidence   from the task's horizon (the Horizon labelled tasks after it): regression_followed=true;
//	           a later task with regression_of=<meta timestamp>; same-area (the weak kind) only when the
//	           first two later same-area tasks, within SameAreaDistance, both failed; a single failing
//	           first one (a weak witness) flags nothing but counts in the excess, net of the placebos
//	           (the nearest earlier same-area task failed)
//	Settled    Horizon later labelled tasks, or the log quiet for SettleAfter: only settled tasks after
//	           the evidence watermark enter the accumulated tables
//	Trigger    >= 3 flagged tasks in the windows, or a passing signal with >= 3 counted regressions low
//	Screen     per signal the 2x2 table over the accumulated evidence and its e-value (LogEValueStrata, mixed over onsets: LogEValueOnsets);
//	           a candidate needs e >= Threshold (Bonferroni over the nine signals at EvidenceAlpha)
//	Loss rule  +1 and +2 on every candidate, weighed by the regressions avoided (the lifted carriers'
//	           current excess x too_low: since a supported change point of their rate, else over the
//	           whole history) against the levels raised without need (x too_high) on the history's
//	           tasks (the parity prompts' side bounded by the parity budget); the best within the drift
//	           bound is proposed
//	Replay     every fixture scored under parent and candidate (detected once, re-weighted)
//	Decide     accept when the suite loss does not rise and no scenario's loss rises (or the loss a
//	           change adds on the fixtures is paid for by its expected gain on the history) and the
//	           motivating tasks move up; the holdout vetoes (or, priced, its added loss is paid with the
//	           suite's); else its half when the loss rule expects it
//	           to gain; else revert (then a bucket edge, when the rule allows one)
//
// Detect runs the stages up to the proposal; Step runs them all.
package evolve
