package weights

import (
	"fmt"
	"strconv"
	"strings"
)

// Decision is what measuring a change decided: the words the evolution step, the proposals, the
// evolution log and the reports share. It marshals as its word (JSON, TOML).
type Decision string

// Decisions. Only accept and halve can be applied.
const (
	DecisionAccept Decision = "accept"
	DecisionHalve  Decision = "halve"
	DecisionRevert Decision = "revert"
	DecisionNone   Decision = "none"
)

// Applicable reports whether a proposal with this decision can be applied (accept or halve).
func (d Decision) Applicable() bool { return d == DecisionAccept || d == DecisionHalve }

// ChangeKind is what a change moves: a signal weight, a bucket edge, or (in a diff of two versions) a cost.
type ChangeKind string

// Kinds of change.
const (
	ChangeSignal ChangeKind = "signal"
	ChangeBucket ChangeKind = "bucket"
	ChangeCost   ChangeKind = "cost"
)

// ChangeLabel names a change of a signal weight or of a bucket edge (name: the signal, or the edge's
// level) as tune's tables and reports spell it: "ambiguous +1", "bucket L1 edge -1". (The evolve step
// table said "bucket L1 -1" above an attempts table saying "bucket L1 edge -1" until issue 26.)
func ChangeLabel(kind ChangeKind, name string, delta Half) string {
	if kind == ChangeBucket {
		return "bucket " + name + " edge " + delta.String()
	}
	return name + " " + delta.String()
}

// ParseChangeLabel reads what ChangeLabel writes: "<signal> <delta>" or "bucket <level> edge <delta>",
// the delta signed ("+1", "-0.5"). The name is returned as written; the caller checks it names a signal
// or an edge. The store replays logged attempts with it.
func ParseChangeLabel(label string) (kind ChangeKind, name string, delta Half, err error) {
	f := strings.Fields(label)
	var deltaText string
	switch {
	case len(f) == 4 && f[0] == "bucket" && f[2] == "edge":
		kind, name, deltaText = ChangeBucket, f[1], f[3]
	case len(f) == 2:
		kind, name, deltaText = ChangeSignal, f[0], f[1]
	default:
		return "", "", 0, fmt.Errorf(`want "<signal> <delta>" or "bucket <edge> edge <delta>"`)
	}
	v, err := strconv.ParseFloat(deltaText, 64)
	if err != nil {
		return "", "", 0, fmt.Errorf("delta %q is not a number", deltaText)
	}
	if delta, err = HalfFromFloat(v); err != nil {
		return "", "", 0, err
	}
	return kind, name, delta, nil
}

// DiffLabel names one value that differs between two versions (name: the signal, the edge's level or
// the cost key) as the apply and rollback lines of the evolution log, the store's checks and tune
// watch's "changes" spell it: "ambiguous +1", "bucket L1 +0.5", "cost too_low +1". A signal reads as in
// ChangeLabel; a bucket edge has no "edge" because those lines are persisted (hash-chained) and tune
// watch --json is a lock: issue 26 kept their bytes rather than make the two spellings one.
func DiffLabel(kind ChangeKind, name string, delta Half) string {
	switch kind {
	case ChangeBucket:
		return "bucket " + name + " " + delta.String()
	case ChangeCost:
		return "cost " + name + " " + delta.String()
	}
	return ChangeLabel(kind, name, delta)
}
