package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/BurntSushi/toml"

	"github.com/ldd-tools/tune/internal/atomicfile"
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

// SaveProposalInput writes in (without its weights) to path, atomically and 0644.
func SaveProposalInput(path string, in ProposalReport) error {
	in.Before, in.After = weights.Weights{}, weights.Weights{}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(in); err != nil {
		return fmt.Errorf("report input %s: %w", path, err)
	}
	if err := regular.RealDirs(filepath.Dir(filepath.Dir(path)), filepath.Dir(path)); err != nil {
		return err // proposals/ and inputs/: a link would take the write outside the store
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, buf.Bytes(), atomicfile.Public)
}

// LoadProposalInput reads an input SaveProposalInput wrote; Before and After are zero.
func LoadProposalInput(path string) (ProposalReport, error) {
	var in ProposalReport
	data, err := regular.ReadLimitedNoFollow(path, regular.ProposalInput)
	if err != nil {
		return in, fmt.Errorf("report input: %w", err)
	}
	md, err := tomlbound.Decode(data, &in)
	if err != nil {
		return in, fmt.Errorf("report input %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return in, fmt.Errorf("report input %s: unknown key %s (written by another version of tune?)", path, und[0])
	}
	return in, nil
}
