package audit

import (
	"sort"

	"github.com/ldd-tools/tune/internal/transcript"
)

// Tee passes every request to each of its sinks, so that one scan feeds several aggregates.
type Tee []transcript.Sink

var _ transcript.Sink = Tee(nil)

// Add passes r to every sink.
func (t Tee) Add(r *transcript.Request) {
	for _, s := range t {
		s.Add(r)
	}
}

// Remove passes the retraction of r to every sink.
func (t Tee) Remove(r *transcript.Request) {
	for _, s := range t {
		s.Remove(r)
	}
}

// ClassEffort aggregates requests by class and, within a class, by effort: where thinking goes, the
// audit report's thinking table. It is a transcript.Sink.
type ClassEffort struct {
	byClass [transcript.ClassSideQuestion + 1]*Aggregator
}

var _ transcript.Sink = (*ClassEffort)(nil)

// NewClassEffort starts an empty breakdown.
func NewClassEffort() *ClassEffort { return &ClassEffort{} }

func (c *ClassEffort) class(r *transcript.Request) *Aggregator {
	if int(r.Class) >= len(c.byClass) {
		return nil
	}
	if c.byClass[r.Class] == nil {
		c.byClass[r.Class] = NewAggregator(ByEffort)
	}
	return c.byClass[r.Class]
}

// Add counts one request.
func (c *ClassEffort) Add(r *transcript.Request) {
	if a := c.class(r); a != nil {
		a.Add(r)
	}
}

// Remove takes out a request added before.
func (c *ClassEffort) Remove(r *transcript.Request) {
	if a := c.class(r); a != nil {
		a.Remove(r)
	}
}

// ClassEffortGroup is one class × effort cell. Effort is NoEffort when none was recorded or given.
type ClassEffortGroup struct {
	Class  transcript.Class
	Effort string
	Totals Totals
}

// Groups returns the non-empty cells: classes in their fixed order (main, subagent, compaction,
// side-question), efforts from low to max within a class.
func (c *ClassEffort) Groups() []ClassEffortGroup {
	var out []ClassEffortGroup
	for class, a := range c.byClass {
		if a == nil {
			continue
		}
		groups := a.Report().Groups
		sort.SliceStable(groups, func(i, j int) bool { return EffortLess(groups[i].Key, groups[j].Key) })
		for _, g := range groups {
			out = append(out, ClassEffortGroup{Class: transcript.Class(class), Effort: g.Key, Totals: g.Totals})
		}
	}
	return out
}
