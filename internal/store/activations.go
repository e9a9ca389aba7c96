package store

import "time"

// Activation is a moment a version became the active one: the init entry, an apply, a rollback.
type Activation struct {
	Version int
	// Parent is the version active before it (0 for init).
	Parent int
	Time   time.Time
	Action string
	// Proposal is the applied proposal's id (apply only).
	Proposal string
	Change   string
}

// Activations lists, in log order, every log entry that changed the active version. Reports use it
// to attribute a task without weights= on its meta line to the version active when it began
// (docs/decisions.md#accuracy-additions). A store without a log has none.
func (s *Store) Activations() ([]Activation, error) {
	entries, err := s.Entries()
	if err != nil {
		return nil, err
	}
	var out []Activation
	for _, e := range entries {
		if changesActive(e.Action) && e.Result > 0 {
			out = append(out, Activation{Version: e.Result, Parent: e.Parent, Time: e.Time, Action: e.Action, Proposal: e.Proposal, Change: e.Change})
		}
	}
	return out, nil
}
