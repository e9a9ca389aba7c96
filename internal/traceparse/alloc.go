package traceparse

import (
	"unsafe"

	"github.com/ldd-tools/tune/internal/weights"
)

// The allocators of the parser: where entries' text and small values live (entryMemory: an arena for
// text, slabs for values), so that a line costs no allocation of its own (docs/decisions.md#streaming-reads).

// entryMemory is where entries' text and small values live: an arena for the lines' text and slabs for the
// values entries point to. A parallel read gives each batch an entryMemory of its own; a read whose tasks are
// not kept (Transient) hands the batch and its memory out again once no open task points into them
// (docs/decisions.md#streaming-reads).
type entryMemory struct {
	text      arena
	ints      slab[int]
	floats    slab[float64]
	fieldPoss slab[fieldPos]
	strs      slab[string]
	signals   slab[weights.SignalWeight]
	taskKeys  slab[taskKeys]
	heads     slab[metaHead]
}

// recycling makes s keep its blocks for reuse after reset.
func (s *entryMemory) recycling() {
	s.text.recycle, s.ints.recycle, s.floats.recycle, s.fieldPoss.recycle, s.strs.recycle, s.signals.recycle = true, true, true, true, true, true
	s.taskKeys.recycle, s.heads.recycle = true, true
}

// sizeFor sizes the first blocks of an empty entryMemory for the entries of about n bytes of lines: a batch's
// text is about 1.5 times its lines, so one chunk holds it.
func (s *entryMemory) sizeFor(n int) {
	s.text.chunk = n
	s.ints.size, s.floats.size, s.fieldPoss.size, s.strs.size, s.signals.size = 256, 256, 512, 256, 256
	s.taskKeys.size, s.heads.size = 128, 128
}

// reset hands out the kept blocks again from their start. Only for a recycling entryMemory, once nothing
// points into it any more.
func (s *entryMemory) reset() {
	s.text.reset()
	s.ints.reset()
	s.floats.reset()
	s.fieldPoss.reset()
	s.strs.reset()
	s.signals.reset()
	s.taskKeys.reset()
	s.heads.reset()
}

// arena holds the text of many lines in append-only chunks, so that a line's string is a slice of a
// large block rather than an allocation of its own. It is strings.Builder's technique (a string made
// over bytes that are never written again, with unsafe.String) with chunks that never move, and with
// one more use: a recycling arena keeps its chunks and fills them again after reset, which is sound
// only once no string of the chunks is used any more (Transient reads; docs/decisions.md#streaming-reads).
type arena struct {
	buf     []byte // the chunk being filled: its bytes up to len are taken
	chunk   int    // size of the last chunk started
	recycle bool
	kept    [][]byte // a recycling arena's chunks, in the order they are filled
	next    int      // kept[next:] are not in use since the last reset
}

// maxKeptChunk bounds a chunk a recycling arena keeps: one made for a huge line is left to the GC.
const maxKeptChunk = 4 << 20

// reserve makes room for n more bytes in the current chunk, so that the line being built never
// moves. Chunks double up to 1 MB: a tail read of a few KB stays small.
func (a *arena) reserve(n int) {
	if cap(a.buf)-len(a.buf) >= n {
		return
	}
	for a.next < len(a.kept) {
		c := a.kept[a.next]
		a.next++
		if cap(c) >= n {
			a.buf = c[:0]
			return
		}
	}
	a.chunk = min(max(2*a.chunk, 4<<10), 1<<20)
	a.buf = make([]byte, 0, max(n, a.chunk))
	if a.recycle && cap(a.buf) <= maxKeptChunk {
		a.kept = append(a.kept, a.buf)
		a.next = len(a.kept)
	}
}

func (a *arena) reset() { a.buf, a.next = nil, 0 }

// Len is the number of bytes taken in the current chunk.
func (a *arena) Len() int { return len(a.buf) }

// String returns the taken bytes of the current chunk; reserve guarantees they are never written again
// (until a reset of a recycling arena).
func (a *arena) String() string { return unsafe.String(unsafe.SliceData(a.buf), len(a.buf)) }

func (a *arena) Write(b []byte)       { a.buf = append(a.buf, b...) }
func (a *arena) WriteString(s string) { a.buf = append(a.buf, s...) }
func (a *arena) writeByte(c byte)     { a.buf = append(a.buf, c) }

// slab hands out small values and short slices from shared chunks: one allocation per chunk
// instead of one each. Chunks grow to 1024 elements, so a small read allocates little. A recycling
// slab keeps its chunks and hands them out again after reset.
type slab[T any] struct {
	free    []T
	size    int
	recycle bool
	kept    [][]T
	next    int
}

// maxKeptChunks bounds the chunks a recycling slab keeps.
const maxKeptChunks = 256

func (s *slab[T]) grow(n int) {
	for s.next < len(s.kept) {
		c := s.kept[s.next]
		s.next++
		if len(c) >= n {
			s.free = c
			return
		}
	}
	s.size = min(max(2*s.size, 32), 1024)
	s.free = make([]T, max(n, s.size))
	if s.recycle && len(s.kept) < maxKeptChunks && len(s.free) <= 4*1024 {
		s.kept = append(s.kept, s.free)
		s.next = len(s.kept)
	}
}

func (s *slab[T]) reset() { s.free, s.next = nil, 0 }

func (s *slab[T]) new(v T) *T {
	if len(s.free) == 0 {
		s.grow(1)
	}
	p := &s.free[0]
	*p, s.free = v, s.free[1:]
	return p
}

// open returns an empty slice over the free space of the slab with room for n elements, for the
// caller to append to in place and then close.
func (s *slab[T]) open(n int) []T {
	if len(s.free) < n {
		s.grow(n)
	}
	return s.free[:0]
}

// close takes the elements appended to vs (from open) out of the free space and returns them with
// no spare capacity, nil when there are none. Had the appends outgrown the room asked for, vs would
// be an allocation of its own and is returned as it is.
func (s *slab[T]) close(vs []T) []T {
	if len(vs) == 0 {
		return nil
	}
	if cap(vs) == cap(s.free) && &vs[0] == &s.free[:1][0] {
		s.free = s.free[len(vs):]
	}
	return vs[:len(vs):len(vs)]
}

// clone returns a copy of vs with no spare capacity (appending to it cannot touch its neighbours),
// nil when vs is empty.
func (s *slab[T]) clone(vs []T) []T {
	if len(vs) == 0 {
		return nil
	}
	if len(vs) > len(s.free) {
		s.grow(len(vs))
	}
	out := s.free[:len(vs):len(vs)]
	copy(out, vs)
	s.free = s.free[len(vs):]
	return out
}
