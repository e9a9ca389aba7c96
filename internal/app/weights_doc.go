package app

import (
	"time"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/weights"
)

// WeightsDoc is the JSON form of a version (tune weights show --json). Signals, buckets and cost keep
// the table order of the TOML file (store.NumberMap), the same shape as a proposal's candidate.
type WeightsDoc struct {
	Version  string          `json:"version"`
	Parent   string          `json:"parent,omitempty"`
	Active   bool            `json:"active"`
	Created  *time.Time      `json:"created,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Evidence string          `json:"evidence,omitempty"`
	Signals  store.NumberMap `json:"signals"`
	Buckets  store.NumberMap `json:"buckets"`
	Cost     store.NumberMap `json:"cost"`
}

// Doc is the JSON form of the version ref resolved to.
func (ref *WeightsRef) Doc() WeightsDoc {
	w := &ref.Weights
	d := WeightsDoc{Version: ref.Label, Active: ref.Active, Reason: w.Reason, Evidence: w.Evidence}
	if w.Parent > 0 {
		d.Parent = weights.VersionName(w.Parent)
	}
	if !w.Created.IsZero() {
		t := w.Created.UTC()
		d.Created = &t
	}
	d.Signals, d.Buckets, d.Cost = store.WeightsJSON(w)
	return d
}
