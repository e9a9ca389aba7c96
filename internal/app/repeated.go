package app

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
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
	// warned, per log, the earlier logs whose tasks it was found to repeat
	warned map[int]map[int]bool
}

func newRepeatedTasks(logs int) *repeatedTasks {
	if logs < 2 {
		return nil
	}
	return &repeatedTasks{seed: maphash.MakeSeed(), first: map[uint64]int{}, warned: map[int]map[int]bool{}}
}

// repeated reports whether task t of log i repeats a task of an earlier log of names; w is the warning
// to give when it is the first repeat of that log's tasks here. A task repeated within one log is the
// log's own business and is not dropped here.
func (r *repeatedTasks) repeated(i int, t *traceparse.Task, names []string) (dup bool, w *traceparse.Warning) {
	// A task of a log from before meta lines (its time is its first line's, its title made up) or
	// without a meta time or a title has no key that tells it apart from another log's: never a repeat.
	if r == nil || t.Legacy || t.MetaTimestamp == "" || t.Title == "" {
		return false, nil
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
		"a task of %s again (the same meta time and title: a copy of that log?): counted once, as is every later repeat of its tasks here", names[j])}
}

// repeatWarned reports whether warns, a log's warnings so far, already say what w says: a night from
// the state keeps the warning of the night that met the first repeat.
func repeatWarned(warns []traceparse.Warning, w traceparse.Warning) bool {
	return slices.ContainsFunc(warns, func(o traceparse.Warning) bool { return o.File == w.File && o.Reason == w.Reason })
}
