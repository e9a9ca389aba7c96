// Package traceout is `tune trace`'s read of whole logs and tail reads into a TaskWriter, and the JSON
// writers of its tasks: JSON Lines (--format jsonl) and the --json document, byte for byte what
// encoding/json writes. It depends on nothing heavier than the trace reader, so that the light `tune`
// binary streams JSON without starting the plotting and Parquet stacks of tune-full
// (docs/decisions.md#streaming-reads); the text table is view's, the Parquet writer export's.
//
// Read keeps no task once its writer has taken it, so its memory does not follow the logs.
package traceout
