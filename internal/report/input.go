package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/BurntSushi/toml"

	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/tomlbound"
	"github.com/ldd-tools/tune/internal/weights"
)

// The proposal report's input is saved when the proposal is written, so that `tune report proposal`
// renders the very bytes propose or nightly wrote without re-running a step (docs/decisions.md,
// "Architecture and output (issue 15)"). TOML, not JSON: the screen holds NaN (an empty margin) and
// JSON has no NaN; TOML keeps every float exactly (shortest round-trip form), NaN and ±Inf included.
// The weights (Before, After) are not saved: the store holds them (the parent version and the
// proposal's candidate) and LoadProposalInput's caller puts them back.

// EncodeProposalInput is the saved form of in (without its weights): the bytes the store writes beside
// the proposal and whose sha256 it logs (store.Store.Propose).
func EncodeProposalInput(in ProposalReport) ([]byte, error) {
	in.Before, in.After = weights.Weights{}, weights.Weights{}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(in); err != nil {
		return nil, fmt.Errorf("report input of %s: %w", in.ID, err)
	}
	return buf.Bytes(), nil
}

// LoadProposalInput reads an input EncodeProposalInput wrote; Before and After are zero. sha is the
// sha256 (hex) of the bytes read, for the caller to check against the one the log records.
func LoadProposalInput(path string) (in ProposalReport, sha string, err error) {
	data, err := regular.ReadLimitedNoFollow(path, regular.ProposalInput)
	if err != nil {
		return in, "", fmt.Errorf("report input: %w", err)
	}
	sum := sha256.Sum256(data)
	sha = hex.EncodeToString(sum[:])
	md, err := tomlbound.Decode(data, &in)
	if err != nil {
		return in, sha, fmt.Errorf("report input %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return in, sha, fmt.Errorf("report input %s: unknown key %s (written by another version of tune?)", path, und[0])
	}
	return in, sha, nil
}
