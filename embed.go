// Package tune holds the files the binary carries with it.
package tune

import _ "embed"

// ReferenceWeights is weights/v0001.toml, the reference scorer's values. `tune score` falls back to it
// when it runs outside a project that has a weights store (an agent's hook calls it from anywhere).
//
//go:embed weights/v0001.toml
var ReferenceWeights []byte
