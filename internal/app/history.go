package app

import (
	"fmt"
	"time"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/weights"
)

// HistoryVersion is one version file as tune history lists it.
type HistoryVersion struct {
	Version string    `json:"version"`
	Parent  string    `json:"parent,omitempty"`
	Created time.Time `json:"created"`
	Reason  string    `json:"reason"`
	Active  bool      `json:"active"`
}

// HistoryResult is what tune history reports (and its --json shape).
type HistoryResult struct {
	Active   string           `json:"active"`
	Serial   int              `json:"serial"`
	Lineage  string           `json:"lineage,omitempty"`
	Versions []HistoryVersion `json:"versions"`
	Entries  []store.LogEntry `json:"entries"`
	// Left is how many earlier entries Latest left out.
	Left int `json:"-"`
	// NoStore is the store directory when it does not exist and nobody chose it: outside a project
	// nothing has happened yet, which is not an error (the result is otherwise empty).
	NoStore string `json:"-"`
}

// Latest keeps the latest limit entries (0: all) and counts the ones it leaves out in Left.
func (r *HistoryResult) Latest(limit int) {
	if limit > 0 && len(r.Entries) > limit {
		r.Left = len(r.Entries) - limit
		r.Entries = r.Entries[r.Left:]
	}
}

// History reads the evolution log and the version files of the store in weightsDir. builtin says no
// flag, variable or project chose weightsDir (Env.Builtin): then a missing store is NoStore.
func History(weightsDir string, builtin bool) (*HistoryResult, error) {
	if builtin && missing(weightsDir) {
		return &HistoryResult{NoStore: weightsDir}, nil
	}
	s, err := store.Open(weightsDir, nil)
	if err != nil {
		return nil, err
	}
	active, err := s.ActiveVersion()
	if err != nil {
		return nil, err
	}
	entries, err := s.Entries()
	if err != nil {
		return nil, err
	}
	nums, err := s.Versions()
	if err != nil {
		return nil, err
	}
	serial, lineage := s.Head()
	rep := HistoryResult{Active: weights.VersionName(active), Serial: serial, Lineage: lineage, Versions: []HistoryVersion{}, Entries: entries}
	if rep.Entries == nil {
		rep.Entries = []store.LogEntry{}
	}
	for _, n := range nums {
		// history lists what is on disk even when a file was edited (verify reports that), so it reads
		// the raw file rather than the checked Version.
		w, err := weights.Load(fmt.Sprintf("%s/%s.toml", weightsDir, weights.VersionName(n)))
		if err != nil {
			return nil, err
		}
		hv := HistoryVersion{Version: weights.VersionName(n), Created: w.Created, Reason: w.Reason, Active: n == active}
		if w.Parent > 0 {
			hv.Parent = weights.VersionName(w.Parent)
		}
		rep.Versions = append(rep.Versions, hv)
	}
	return &rep, nil
}
