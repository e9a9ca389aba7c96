package app

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/ldd-tools/tune/internal/traceparse"
)

// repeatedTasks finds a task that an earlier log of the same read already gave: the same meta line
// (taskPrint). A copy of a log
// (trace.log.bak, a project copied beside the original, a merged view, all matched by one glob) would
// otherwise enter the accumulated evidence twice, and a doubled table's e-value is about the square of
// the single one's (docs/decisions.md#a-task-in-two-logs). Only with two or more logs; memory is one
// 8-byte print per task read.
type repeatedTasks struct {
	first map[uint64]int // print → the log that gave it first
	// warned, per log, the earlier logs whose tasks it was found to repeat
	warned map[int]map[int]bool
}

func newRepeatedTasks(logs int) *repeatedTasks {
	if logs < 2 {
		return nil
	}
	return &repeatedTasks{first: map[uint64]int{}, warned: map[int]map[int]bool{}}
}

// taskPrint is a task's print: an FNV-1a (64-bit) hash of its meta line (its time as an instant, the
// fields read from it and every key=value it holds), the same in every run (nightly states keep
// prints). ok is false for a task whose meta line does not tell it apart from another log's: a task of a
// log from before meta lines (its time is its first line's, its title made up) or one without a meta
// time or a title.
func taskPrint(t *traceparse.Task) (p uint64, ok bool) {
	if t.Legacy || t.MetaTimestamp == "" || t.Title == "" {
		return 0, false
	}
	h := fnv64(fnvOffset)
	if t.MetaTime.IsZero() {
		h.field(t.MetaTimestamp)
	} else {
		var b [20]byte // one instant however it is spelt
		h.field(string(strconv.AppendInt(b[:0], t.MetaTime.UnixNano(), 10)))
	}
	for _, s := range []string{t.Title, t.Level, t.Dispatch, t.Creativity, t.WeightsVersion} {
		h.field(s)
	}
	for _, s := range t.Signals {
		h.field(s.Name)
		h.int(int64(s.Weight))
	}
	// and every other key=value of the meta line, in its order (regression_of=, loops=, files=, …)
	for k, v := range t.Meta.Fields.All() {
		h.field(k)
		h.field(v)
	}
	return uint64(h), true
}

// fnv64 is FNV-1a, 64 bits, over strings without copying them: hash/fnv takes bytes, and converting
// each field allocated (957 ns and 6.6 allocations a task against 610 ns and 0.3, BenchmarkTaskPrint);
// maphash does not allocate but its seeds are
// random per process, and a print must be the same in every run (the nightly states keep them).
type fnv64 uint64

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// field hashes s and a 0 byte after it, so that ("ab", "c") and ("a", "bc") differ.
func (h *fnv64) field(s string) {
	x := *h
	for i := 0; i < len(s); i++ {
		x ^= fnv64(s[i])
		x *= fnvPrime
	}
	*h = x * fnvPrime // ^ 0
}

func (h *fnv64) int(n int64) {
	var b [20]byte
	h.field(string(strconv.AppendInt(b[:0], n, 10)))
}

// repeated reports whether task t (print p, ok) of log i repeats a task of an earlier log of names; w
// is the warning to give when it is the first repeat of that log's tasks here. A task repeated within one
// log is the log's own business and is not dropped here.
func (r *repeatedTasks) repeated(i int, t *traceparse.Task, p uint64, ok bool, names []string) (dup bool, w *traceparse.Warning) {
	if r == nil || !ok {
		return false, nil
	}
	j, seen := r.first[p]
	if !seen {
		r.first[p] = i
		return false, nil
	}
	if j == i {
		return false, nil
	}
	if r.warned[i] == nil {
		r.warned[i] = map[int]bool{}
	}
	if r.warned[i][j] {
		return true, nil
	}
	r.warned[i][j] = true
	// The reason names the earlier log and nothing that depends on how much of the log was read, so
	// that a night from its state, which reads only the new tasks and keeps the warnings of the nights
	// before, warns as a whole read does (repeatWarned).
	return true, &traceparse.Warning{File: t.Source, Line: t.Line, Reason: fmt.Sprintf(
		"a task of %s again (the same meta line: a copy of that log?): counted once, there, as is every later repeat of its tasks here; while logs share tasks, a night reads them whole", names[j])}
}

// repeatWarned reports whether warns, a log's warnings so far, already say what w says: a night from
// the state keeps the warning of the night that met the first repeat.
func repeatWarned(warns []traceparse.Warning, w traceparse.Warning) bool {
	return slices.ContainsFunc(warns, func(o traceparse.Warning) bool { return o.File == w.File && o.Reason == w.Reason })
}

// encodePrints is a log's prints as a state keeps them: sorted, each once, 8 bytes little-endian, base64.
func encodePrints(ps []uint64) string {
	ps = slices.Compact(slices.Sorted(slices.Values(ps)))
	b := make([]byte, 8*len(ps))
	for i, p := range ps {
		binary.LittleEndian.PutUint64(b[8*i:], p)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// decodePrints reads encodePrints' form; ok is false for anything else (a state is hostile input).
func decodePrints(s string) (ps []uint64, ok bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%8 != 0 {
		return nil, false
	}
	ps = make([]uint64, len(b)/8)
	for i := range ps {
		ps[i] = binary.LittleEndian.Uint64(b[8*i:])
		if i > 0 && ps[i] <= ps[i-1] {
			return nil, false
		}
	}
	return ps, true
}
