// Package export writes what tune reads in the formats other tools take: Parquet for the tasks of
// trace logs (a traceout.TaskWriter; their JSON writers are traceout's) and for the audit's requests, so that
// DuckDB, Spark or Trino can query a year of logs or an organisation's transcripts
// (docs/decisions.md#streaming-and-exports-issue-17, docs/scale.md).
//
// Every writer takes its rows one at a time, as the reader produces them, and keeps none of them: its
// memory follows one row group at most, never the input. The package is pure: writers in, errors out;
// the atomic file handling is AtomicFile's.
package export
