// Package traceparse reads LDD `.ldd/trace.log` files of every format era (v0.3.1 hand-written logs to
// the v0.14 writer) and segments them into tasks. It follows the reference reader
// (scripts/ldd_trace/store.py of loss-driven-development) line for line, except where this project
// took a Decision (docs/decisions.md#trace-logs):
//
//   - A UTF-8 BOM is stripped (at the start of the file and of any line, for logs joined with cat).
//   - `\n`, `\r\n` and a lone `\r` end a line.
//   - Loop `architect` reads as `design` (as the reference does) and `refinement` as `refine`.
//   - On iteration and close lines `loss_norm` is also given as `loss` and `Δloss_norm` as `Δloss`
//     (when the new key is absent), and `r=`/`o=`/`phase=` as `k` when `k` is absent.
//   - On meta lines `level_chosen` is also given as `level`, and the long `dispatch_source`
//     (auto-level, user-bump, …) as the short `dispatch` (auto, bump, …), when those are absent.
//   - Δloss is recomputed within task + loop + epoch (Entry.DeltaLoss); the writer's own Δ crosses
//     task and epoch boundaries and flipped its sign convention across eras, so it is kept in
//     Fields only as written.
//   - A missing loss is unknown (nil), never 0.
//   - A line whose quotes do not balance is kept by a whitespace split, with a warning, when a
//     timestamp and a loop can still be read; the reference drops it silently.
//   - A line that does not start with a timestamp (YYYY-MM-DD…) is skipped and reported: it is most
//     often the continuation of a value that held a newline. The reference would read its first
//     word as a timestamp.
//   - A last line without a line end is skipped as "incomplete last line": it may be a write still in
//     progress, and a cut `loss_final=0.1|00` would otherwise be misread.
//   - A line holding the Tier-2 magic prefix ⟪LDD-TRACE-v1⟫ anywhere is read from just after it.
//   - Epoch lines stay in their task's Entries (kind "epoch") so the boundary is visible; they never
//     count as iterations.
//
// Line accounting: every physical line is counted in LineCounts.Read and is either parsed
// (LineCounts.Parsed: it became an Entry) or skipped (LineCounts.Skipped). Blank and comment lines are
// skipped lines, counted in Blank and Comment and not reported as warnings; every other skipped line
// has a Warning with Skipped set. So Read == Parsed + Skipped, and
// Skipped == Blank + Comment + (number of warnings with Skipped set).
//
// Line numbers: Parse and a ReadLast that reaches the start of the file number lines from 1 at the
// start of the file. A ReadLast that stops earlier (the point of reading backwards) does not know how
// many lines precede its start without reading them, so it numbers lines from 1 at the byte offset
// recorded in Result.Tails; every Entry, Task and Warning also carries Offset, the absolute byte offset
// of its line, which stays exact because logs only grow.
//
// Speed: classifying a line (tokens, its text, its fields and entry) depends on the line alone, so
// logs bigger than one 256 KB batch are classified on all CPUs while the task segmentation consumes
// the batches in order; smaller input (a tail read) is parsed in place. The parser is bound by memory
// more than by computation, so a line costs no allocation of its own: its text (the line, then the
// unquoted text of its quoted tokens) is a slice of a large append-only arena, Entry.Fields holds
// 32-bit offsets into it rather than a map, entries are built in place in the arrays that tasks then
// slice, and small values come from shared slabs.
//
// The package is pure: it never prints and never writes to a log. Problems are returned as warnings.
package traceparse
