package store

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/ldd-tools/tune/internal/weights"
)

// ProposalIDs lists the ids (p-…) of the proposal files in the store at dir, sorted; a missing or
// unreadable store lists none. Shell completion uses it.
func ProposalIDs(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, ProposalsDir, "p-*.json"))
	var out []string
	for _, p := range files {
		out = append(out, strings.TrimSuffix(filepath.Base(p), ".json"))
	}
	sort.Strings(out)
	return out
}

// VersionNames lists the version names (v0001, …) of the store at dir; a missing or unreadable store
// lists none. Shell completion uses it.
func VersionNames(dir string) []string {
	s, err := Open(dir, nil)
	if err != nil {
		return nil
	}
	nums, err := s.Versions()
	if err != nil {
		return nil
	}
	out := make([]string, len(nums))
	for i, n := range nums {
		out[i] = weights.VersionName(n)
	}
	return out
}
