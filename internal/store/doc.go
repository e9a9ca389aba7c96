// Package store is the weights store: immutable version files (weights/v0001.toml …), an append-only,
// hash-chained evolution log (weights/evolution.jsonl), an atlas.sum-style checksum file over the version
// files (weights/weights.sum), and the pending proposals written by the evolution step
// (weights/proposals/<id>.json, listed newest first by NewestProposal and PendingProposals).
// Only the store writes these files; internal/app decides when.
//
// Safety rules: every write is temp file → fsync → rename → fsync dir (internal/atomicfile); mutations hold weights/.lock; a
// writer whose expected serial is stale is refused; a multi-step operation writes weights/.pending.json
// first and removes it last, so an interrupted one is visible to Verify and resolved by Repair.
package store
