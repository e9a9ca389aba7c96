package store

import (
	"crypto/sha256"
	"encoding/binary"
	"sync"
)

// contentMemo keeps, per process, what a pure function computed from a file's bytes, keyed by the hash
// of those bytes: the same bytes always give the same value, and a changed file is computed anew, so a
// memo can never serve a stale or tampered file. Every store read parses the evolution log and checks
// the active version's proposal, and one night reads the store about twenty times; with a year of
// evidence both files are hundreds of kilobytes (docs/decisions.md#store-reads-by-content).
type contentMemo[V any] struct {
	mu    sync.Mutex
	m     map[[sha256.Size]byte]V
	bytes int64 // the summed size of the contents kept
}

// maxMemoized bounds a memo: a process meets a handful of logs and proposals; only a hostile many would
// fill it, and then it starts again.
const maxMemoized = 16

// maxMemoBytes bounds the contents a memo keeps values of (a value is about as large as its content: the
// log's lines keep their bytes): 16 logs at the log's 64 MiB limit would be a gigabyte held for the
// process's life. A content over it is computed and not kept. Eighth review
// (docs/decisions.md#eighth-review-store-reads-by-content).
const maxMemoBytes = 16 << 20

// get returns compute's value for data (and the strings it also depends on), computing it at most once
// per content while it is kept.
func (c *contentMemo[V]) get(data []byte, compute func() V, also ...string) V {
	// Each part is framed by its length: with a separator alone, ("a", "\x00b") and ("a\x00", "b") would
	// share a key, and the strings come from the log (a logged hash is any JSON string). Eighth review.
	h := sha256.New()
	var n [8]byte
	for _, part := range append([][]byte{data}, stringsAsBytes(also)...) {
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
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
	size := int64(len(data))
	if size > maxMemoBytes {
		return v
	}
	c.mu.Lock()
	if _, ok := c.m[key]; !ok {
		if c.m == nil || len(c.m) >= maxMemoized || c.bytes+size > maxMemoBytes {
			c.m, c.bytes = map[[sha256.Size]byte]V{}, 0
		}
		c.m[key] = v
		c.bytes += size
	}
	c.mu.Unlock()
	return v
}

func stringsAsBytes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}
