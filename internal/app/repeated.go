package app

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"

	"github.com/ldd-tools/tune/internal/traceparse"
)

// repeatedTasks finds a task that an earlier log of the same read already gave: the same meta time and
// title, the key the evidence ledger and the explore draw identify a task by (evolve.TaskKey). A copy
// of a log (trace.log.bak, a project copied beside the original, both matched by one glob) would
// otherwise enter the accumulated evidence twice, and a doubled table's e-value is about the square of
// the single one's (docs/decisions.md#a-task-in-two-logs). Only with two or more logs; memory is one
// 8-byte hash per task read.
type repeatedTasks struct {
	seed  maphash.Seed
	first map[uint64]int // key hash → the log that gave it first
	// found, per log, the repeats of each earlier log: how many and the first one's line
	found map[int]map[int]*repeat
}

type repeat struct{ n, line int }

func newRepeatedTasks(logs int) *repeatedTasks {
	if logs < 2 {
		return nil
	}
	return &repeatedTasks{seed: maphash.MakeSeed(), first: map[uint64]int{}, found: map[int]map[int]*repeat{}}
}

// repeated reports whether task t of log i repeats a task of an earlier log (and notes it). A task
// repeated within one log is the log's own business and is not dropped here.
func (r *repeatedTasks) repeated(i int, t *traceparse.Task) bool {
	if r == nil {
		return false
	}
	var h maphash.Hash
	h.SetSeed(r.seed)
	if !t.MetaTime.IsZero() {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(t.MetaTime.UnixNano()))
		h.Write(b[:])
	} else {
		h.WriteString(t.MetaTimestamp)
	}
	h.WriteByte(0)
	h.WriteString(t.Title)
	k := h.Sum64()
	j, ok := r.first[k]
	if !ok {
		r.first[k] = i
		return false
	}
	if j == i {
		return false
	}
	if r.found[i] == nil {
		r.found[i] = map[int]*repeat{}
	}
	if rp := r.found[i][j]; rp != nil {
		rp.n++
	} else {
		r.found[i][j] = &repeat{n: 1, line: t.Line}
	}
	return true
}

// warnings says, for log i (named name), which earlier logs it repeated tasks of: one warning per
// earlier log, at the first repeat's line.
func (r *repeatedTasks) warnings(i int, name string, names []string) []traceparse.Warning {
	if r == nil || len(r.found[i]) == 0 {
		return nil
	}
	var out []traceparse.Warning
	for _, j := range slices.Sorted(maps.Keys(r.found[i])) {
		rp := r.found[i][j]
		out = append(out, traceparse.Warning{File: name, Line: rp.line, Reason: fmt.Sprintf(
			"this task and %d more are tasks of %s again (the same meta time and title: a copy?): counted once", rp.n-1, names[j])})
	}
	return out
}
