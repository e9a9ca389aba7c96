package redact

import (
	"hash/maphash"
	"strings"
	"sync/atomic"
)

// The fields of a trace log repeat (loss=0.300, skill=dialectical-cot, files=api/handler.go): since
// every field is redacted (docs/decisions.md#hostile-files-issue-25), a short value's result is
// remembered in a small direct-mapped table, so a repeated value costs a hash and a compare instead of
// the prefilters and the gitleaks keyword scan. Lock-free: a slot holds an immutable entry, replaced
// whole; a race only loses a memo.
const (
	cacheSlots  = 4096
	cacheMaxLen = 64 // longer text (titles, prompts) is rarely repeated exactly
)

type cacheEntry struct {
	in, out string
	n       int
}

var (
	cacheSeed  = maphash.MakeSeed()
	cacheTable [cacheSlots]atomic.Pointer[cacheEntry]
)

// countCached is Count through the memo for short strings.
func countCached(s string, count func(string) (string, int)) (string, int) {
	if len(s) > cacheMaxLen {
		return count(s)
	}
	slot := &cacheTable[maphash.String(cacheSeed, s)%cacheSlots]
	if e := slot.Load(); e != nil && e.in == s {
		return e.out, e.n
	}
	out, n := count(s)
	// copies: s may alias a buffer its caller reuses (the streamed trace reader does), and a memo must
	// not change when that buffer does
	in := strings.Clone(s)
	memo := in
	if n > 0 {
		memo = out
	}
	slot.Store(&cacheEntry{in: in, out: memo, n: n})
	return out, n
}
