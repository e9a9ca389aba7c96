package store

import (
	"fmt"
	"sort"
	"time"

	"github.com/ldd-tools/tune/internal/weights"
)

// The evidence ledger (docs/decisions.md#evidence-ledger): every apply entry of the hash-chained log
// records, in its ledger field, the keys of the tasks that supported the change. A task that supported
// an applied change never counts as evidence again — not after a later apply, and not after a rollback
// (the rollback undoes the weights, not the fact that the evidence was spent; a human who wants it
// counted again re-records the task).

// Ledger returns every ledgered task key with the version its apply wrote ("v0002"), read from the log.
func (s *Store) Ledger() (map[string]string, error) {
	entries, err := s.Entries()
	if err != nil {
		return nil, err
	}
	return ledgerOf(entries), nil
}

func ledgerOf(entries []LogEntry) map[string]string {
	out := map[string]string{}
	for _, e := range entries {
		if e.Action != ActionApply {
			continue
		}
		for _, k := range e.Ledger {
			if _, seen := out[k]; !seen {
				out[k] = weights.VersionName(e.Result)
			}
		}
	}
	return out
}

// EvidenceWatermark is the latest evidence_through of an apply entry (zero when none): the accumulated
// evidence starts after it, so evidence an applied change used is never reused, whatever the ledger's
// keys (docs/decisions.md#spent-evidence). A rollback does not move it back.
func (s *Store) EvidenceWatermark() (time.Time, error) {
	entries, err := s.Entries()
	if err != nil {
		return time.Time{}, err
	}
	var out time.Time
	for _, e := range entries {
		if e.Action != ActionApply || e.EvidenceThrough == "" {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, e.EvidenceThrough); err == nil && t.After(out) {
			out = t
		}
	}
	return out, nil
}

// ledgerKeys are a proposal's task keys, sorted and without repeats.
func ledgerKeys(p *Proposal) []string {
	seen := map[string]bool{}
	var keys []string
	for _, t := range p.Evidence {
		if t.Key != "" && !seen[t.Key] {
			seen[t.Key] = true
			keys = append(keys, t.Key)
		}
	}
	sort.Strings(keys)
	return keys
}

// checkLedger refuses a proposal that names a task an earlier apply already used.
func (st *state) checkLedger(p *Proposal) error {
	var entries []LogEntry
	for _, l := range st.lines {
		if l.OK {
			entries = append(entries, l.Entry)
		}
	}
	used := ledgerOf(entries)
	for _, k := range ledgerKeys(p) {
		if v, ok := used[k]; ok {
			return fmt.Errorf("proposal %s is supported by task %s, which already supported the change applied as %s: a task supports at most one applied change; run `tune evolve` again",
				p.ID, k, v)
		}
	}
	return nil
}
