package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/ldd-tools/tune/internal/faultpoint"
)

// Reports are not part of the store, but the documented CI step commits reports/, so a temp file that a
// killed report write left there would be committed with them. Verify reports such files as stale (named
// by their path) and Repair removes them, as it does the store's own
// (docs/decisions.md#crash-injection-in-a-real-process).

// staleReports lists the temp files of killed writes in s.ReportsDir (paths; none when it is "" or absent).
func (s *Store) staleReports() []string {
	if s.ReportsDir == "" {
		return nil
	}
	entries, err := os.ReadDir(s.ReportsDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if isTemp(e.Name()) && e.Type().IsRegular() {
			out = append(out, filepath.Join(s.ReportsDir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

// staleReportProblems are Verify's findings about s.ReportsDir.
func (s *Store) staleReportProblems() []Problem {
	var out []Problem
	for _, p := range s.staleReports() {
		out = append(out, Problem{Kind: ProblemStale, File: p,
			Message: "a temp file left by a report write that was killed before it finished (a commit of the reports would take it along); `tune repair` removes it"})
	}
	return out
}

// removeStaleReports removes what staleReports lists.
func (s *Store) removeStaleReports() error {
	for _, p := range s.staleReports() {
		faultpoint.Reach(faultpoint.Remove, p)
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
