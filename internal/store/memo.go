package store

import (
	"crypto/sha256"
	"sync"
)

// contentMemo keeps, per process, what a pure function computed from a file's bytes, keyed by the hash
// of those bytes: the same bytes always give the same value, and a changed file is computed anew, so a
// memo can never serve a stale or tampered file. Every store read parses the evolution log and checks
// the active version's proposal, and one night reads the store about twenty times; with a year of
// evidence both files are hundreds of kilobytes (docs/decisions.md#store-reads-by-content).
type contentMemo[V any] struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]V
}

// maxMemoized bounds a memo: a process meets a handful of logs and proposals; only a hostile many would
// fill it, and then it starts again.
const maxMemoized = 16

// get returns compute's value for data (and the strings it also depends on), computing it at most once
// per content while it is kept.
func (c *contentMemo[V]) get(data []byte, compute func() V, also ...string) V {
	h := sha256.New()
	h.Write(data)
	for _, a := range also {
		h.Write([]byte{0})
		h.Write([]byte(a))
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	c.mu.Lock()
	v, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return v
	}
	v = compute()
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxMemoized {
		c.m = map[[sha256.Size]byte]V{}
	}
	c.m[key] = v
	c.mu.Unlock()
	return v
}
