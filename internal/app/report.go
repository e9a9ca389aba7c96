package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/fixtures"
	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/weights"
)

// ReportResult is what tune report prints (and its --json shape).
type ReportResult struct {
	Report string   `json:"report"`
	Files  []string `json:"files"`
	// Replayed is true when the proposal's window and screen were recovered from its trace logs.
	Replayed *bool    `json:"replayed,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

// ReportProposal writes the EVAL report of a proposal (a file or an id; "" = the newest) into outDir.
// logs are the trace logs it was made from (default: the sources of its flagged tasks).
func ReportProposal(env Env, proposal string, logs []string, outDir string) (ReportResult, error) {
	res := ReportResult{Report: "proposal"}
	s, err := store.Open(env.WeightsDir, nil)
	if err != nil {
		return res, err
	}
	var p *store.Proposal
	if proposal != "" {
		p, err = s.ResolveProposal(proposal)
	} else {
		p, err = s.NewestProposal()
	}
	if err != nil {
		return res, err
	}
	parent, err := s.Version(p.Parent)
	if err != nil {
		return res, fmt.Errorf("proposal %s: parent version: %w", p.ID, err)
	}
	in, replayed, notes := recoverProposalReport(env, p, parent, logs)
	res.Replayed, res.Notes = &replayed, notes
	res.Files, err = report.WriteProposal(outDir, in)
	return res, err
}

// recoverProposalReport re-runs the evolution step that made p, on its trace logs against its parent, and
// uses the full result when it reproduces p (same content id). Otherwise the report holds what the file
// has, plus a fresh replay of the fixtures under the parent and the candidate.
func recoverProposalReport(env Env, p *store.Proposal, parent weights.Weights, logs []string) (report.ProposalReport, bool, []string) {
	var notes []string
	if len(logs) == 0 {
		logs = evidenceSources(p)
	}
	fx, fxErr := fixtures.LoadSuite(env.FixturesDir)
	if fxErr != nil {
		notes = append(notes, fmt.Sprintf("fixtures: %v; the report has no replay", fxErr))
	}
	if fxErr == nil && len(logs) > 0 {
		step, why := rerunStep(env, p, parent, logs, fx)
		if step != nil {
			return report.FromSteps([]*evolve.StepResult{step}, parent, p), true, notes
		}
		notes = append(notes, "window and screen not recovered: "+why)
	}
	in := report.FromProposal(p, parent)
	if fxErr == nil {
		suite := evolve.PrepareSuite(fx.Scenarios)
		in.Replay = report.ReplayRows(suite.Score(&parent), suite.Score(&p.Candidate))
	}
	return in, false, notes
}

func evidenceSources(p *store.Proposal) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range p.Evidence {
		if f.Source != "" && !seen[f.Source] {
			seen[f.Source] = true
			out = append(out, f.Source)
		}
	}
	sort.Strings(out)
	return out
}

// rerunStep runs the step of propose again and returns it when it reproduces p; why says otherwise.
func rerunStep(env Env, p *store.Proposal, parent weights.Weights, logs []string, fx fixtures.Suite) (*evolve.StepResult, string) {
	for _, l := range logs {
		if _, err := os.Stat(l); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Sprintf("trace log %s is not here (pass --logs)", l)
		}
	}
	_, read, err := ReadTraceLogs(logs)
	if err != nil {
		return nil, err.Error()
	}
	_, resolve, err := ActiveWeights(env.WeightsDir)
	if err != nil {
		return nil, err.Error()
	}
	step, err := evolve.Step(evolve.StepInput{Tasks: read.Tasks, Parent: parent, WeightsFor: resolve,
		Suite: evolve.PrepareSuite(fx.Scenarios), Holdout: evolve.PrepareSuite(fx.Holdout)})
	if err != nil {
		return nil, err.Error()
	}
	if again := ProposalFromSteps([]*evolve.StepResult{step}, &parent, step.Candidate, p.Created); again.ComputeID() != p.ID {
		return nil, fmt.Sprintf("re-running the step on %s gives %s, not %s (the logs moved on, or other logs were read: pass --logs)",
			strings.Join(logs, ", "), again.ComputeID(), p.ID)
	}
	step.Warnings = append(parseWarnings(read), step.Warnings...)
	return step, ""
}

// ReportHistory writes the EVAL report of the weights store into outDir.
func ReportHistory(env Env, outDir string) (ReportResult, error) {
	res := ReportResult{Report: "history"}
	s, err := store.Open(env.WeightsDir, nil)
	if err != nil {
		return res, err
	}
	in, err := report.HistoryFromStore(s)
	if err != nil {
		return res, err
	}
	res.Files, err = report.WriteHistory(outDir, in)
	return res, err
}
