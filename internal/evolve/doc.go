// Package evolve is one evolution step of the level scorer (docs/decisions.md#evolution-step): it reads tasks that
// traceparse produced, finds the low-side regressions in the window, screens the signals behind them,
// proposes one weight change, replays the fixture suite under the parent and the candidate, and decides.
//
// Every stage is a pure function that returns its data and its warnings; nothing prints, nothing reads a
// file. The stages, in order:
//
//	Windows    last 20 tasks with a level label, per trace log
//	Eligible   dispatched auto, level L0/L1, closed, final loss known (bump and override-down never)
//	Evidence   regression_followed=true; a later task with regression_of=<meta timestamp>; a later
//	           same-area task (files= overlap, else paths named in task/action/layer text) whose final
//	           loss is above the window median (strict, unknown losses excluded)
//	Trigger    >= 3 distinct flagged tasks
//	Screen     per signal the 2x2 table over the closed window tasks, Fisher, Holm, verdict, consistency
//	Proposal   +1 on the consistent candidate with the highest z, else a bucket edge by one when >= 3
//	           flagged tasks sit exactly on the upper edge of their bucket, else none
//	Replay     every fixture scored under parent and candidate (detected once, re-weighted)
//	Decide     accept when the suite loss does not rise, no scenario's loss rises and the motivating
//	           tasks move up; else +0.5; else revert (then a bucket edge, when the rule allows one)
//
// Detect runs the stages up to the proposal; Step runs them all. The decisions the reference leaves open
// are documented where they are made (see docs/decisions.md#evolution-step).
package evolve
