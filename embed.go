// Package tune holds the files the binary carries with it.
package tune

import (
	"embed"
	"io/fs"
)

// ReferenceWeights is weights/v0001.toml, the reference scorer's values. `tune score` falls back to it
// when it runs outside a project that has a weights store (an agent's hook calls it from anywhere);
// `tune init` writes it as a new store's v0001, and the store compares an unsigned v0001 with it.
//
//go:embed weights/v0001.toml
var ReferenceWeights []byte

// EscalationPlaybook is docs/escalation.md, printed by `tune help escalation`, so that the playbook an
// escalation points to exists wherever the binary does.
//
//go:embed docs/escalation.md
var EscalationPlaybook string

//go:embed fixtures/suite fixtures/holdout
var fixtures embed.FS

// Fixtures is the fixture suite the binary carries, laid out as a fixtures directory (suite/*.toml,
// holdout/*.toml): `tune init` writes it into a new project, and detect and replay read it outside one.
func Fixtures() fs.FS {
	sub, err := fs.Sub(fixtures, "fixtures")
	if err != nil {
		panic(err) // a constant path inside an embed.FS
	}
	return sub
}

// ParityPrompts is testdata/ldd/parity.jsonl: the 255 real prompts with the reference scorer's output.
// The evolve loop replays every candidate on them to price a change that sends prompts too high
// (docs/decisions.md#parity-price).
//
//go:embed testdata/ldd/parity.jsonl
var ParityPrompts []byte

//go:embed docs/ci
var ci embed.FS

// CIRecipes are docs/ci: the crontab script, the GitHub Actions workflows and the GitLab CI jobs of
// docs/nightly.md, which `tune init --ci` writes into a repository.
func CIRecipes() fs.FS {
	sub, err := fs.Sub(ci, "docs/ci")
	if err != nil {
		panic(err) // a constant path inside an embed.FS
	}
	return sub
}
