package store

import (
	"strings"

	"github.com/ldd-tools/tune/internal/weights"
)

// Change is one differing value between two weights versions.
type Change struct {
	Kind weights.ChangeKind
	Name string       // signal name, bucket edge "L0".."L3", or cost key
	Old  weights.Half // cost values are whole numbers, kept as Half for one type
	New  weights.Half
}

// Delta is New - Old.
func (c Change) Delta() weights.Half { return c.New - c.Old }

// String is the difference as the log's apply and rollback lines record it (weights.DiffLabel):
// "ambiguous +1", "bucket L1 +0.5", "cost too_low +1".
func (c Change) String() string { return weights.DiffLabel(c.Kind, c.Name, c.Delta()) }

// Changes lists what differs from a to b: signals in table order, then bucket edges, then costs.
func Changes(a, b *weights.Weights) []Change {
	var out []Change
	for _, s := range weights.Signals() {
		if a.Signals[s] != b.Signals[s] {
			out = append(out, Change{weights.ChangeSignal, s.String(), a.Signals[s], b.Signals[s]})
		}
	}
	for i := range a.Buckets.Edges {
		if a.Buckets.Edges[i] != b.Buckets.Edges[i] {
			out = append(out, Change{weights.ChangeBucket, bucketNames[i], a.Buckets.Edges[i], b.Buckets.Edges[i]})
		}
	}
	costs := []struct {
		name string
		a, b int
	}{{"too_low", a.Cost.TooLow, b.Cost.TooLow}, {"too_high", a.Cost.TooHigh, b.Cost.TooHigh}, {"other_item", a.Cost.OtherItem, b.Cost.OtherItem}}
	for _, c := range costs {
		if c.a != c.b {
			out = append(out, Change{weights.ChangeCost, c.name, weights.Whole(c.a), weights.Whole(c.b)})
		}
	}
	return out
}

func describeChanges(cs []Change) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, ", ")
}

// sameContent reports whether two versions hold the same weights, edges and costs.
func sameContent(a, b *weights.Weights) bool { return len(Changes(a, b)) == 0 }
