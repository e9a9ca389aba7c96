// Package report renders the EVAL reports — proposal, history and audit — as Markdown (tablewriter v1's
// Markdown renderer) with SVG charts (gonum/plot), for reviewers reading them in a pull request.
//
// Rendering is pure: every Render function takes plain input values (ProposalReport, HistoryReport,
// AuditReport) and returns the files it would write, as bytes. The converters from the values that
// produce the data (the evolution steps, a proposal, the weights store) are the application layer's
// (internal/app/report_inputs.go), so that report never reads the store. The file I/O is WriteFiles (the Write*
// helpers put rendered files under a directory through internal/atomicfile) and the saved proposal
// input's form (EncodeProposalInput, LoadProposalInput; the store writes it and logs its hash:
// docs/decisions.md#reports-from-stored-inputs).
//
// Rules every report follows:
//   - Same input, same bytes: no clock (times come from the input), no map iteration, no randomness
//     (the strip charts jitter by a fixed sequence), and gonum/plot's SVG output is itself deterministic.
//   - File names are derived from the input: proposal-<id>.md, history-<hash>.md, audit-<hash>.md, and
//     <base>-<chart>.svg beside them, so a report can be regenerated and diffed.
//   - Free text from traces (task titles, sources, labels) passes through Redact before it is written, and
//     no raw transcript text ever reaches a report: the audit input holds only numbers and labels.
package report
