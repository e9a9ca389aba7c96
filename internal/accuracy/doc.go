// Package accuracy computes the dispatch-accuracy report of `tune accuracy`: per dispatched level
// (L0…L4) how many closed tasks, their median iteration count and final loss, the complete rate,
// and the overkill and underkill rates, with the top signals and the terminals.
//
// The definitions, the window and the rounding are those of the LDD reference's
// `ldd_trace telemetry dispatch` (aggregator.dispatch_accuracy), so that Summary marshals to the same
// JSON, field for field (docs/decisions.md#accuracy-definitions):
//
//   - closed tasks only (at least one close line); the window keeps a task whose meta timestamp is
//     at or after now − days;
//   - a task's level is its meta line's level; tasks without one count in n_tasks_total only;
//   - k is the number of non-baseline iterations; the final loss is loss_final on the last close,
//     else the last iteration's loss;
//   - overkill: L3/L4, terminal complete, k ≤ 1, final loss ≤ 0.01 or unknown;
//   - underkill: L0/L1 that ended failed or aborted, or needed k ≥ 5;
//   - medians are the middle value (mean of the two middle values); median_k is rounded to 2
//     places, median_final_loss to 3, rates to 4, as Python's round does (half to even on the
//     exact binary value);
//   - top_signals: the three signal names on most of the level's meta lines, ties in order of
//     first appearance; terminals counted by name, "(unknown)" for a close without one.
//
// tune reads some logs further than the reference reader does (a BOM, a v0.10.1 level_chosen=, a
// line with unbalanced quotes, a missing loss kept unknown rather than read as 0): every counted
// task whose reading departs from the reference's is listed in Report.Beyond with the reasons, so
// the difference from the reference's numbers is always accounted for. tune's own additions —
// a Wilson interval for every rate and the same summary split by weights version, dispatch source
// and log — are fields the reference does not have.
//
// The package is pure: tasks and options in, a report out.
package accuracy
