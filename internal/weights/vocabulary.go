package weights

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
