package app

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/ldd-tools/tune/internal/accuracy"
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
	// Input says where a proposal report's input came from: "saved" (written with the proposal, so the
	// report is byte for byte the one propose or nightly wrote) or "proposal file" (a proposal from
	// before inputs were saved: no window, no screen beyond its own rows, a fresh replay).
	Input string   `json:"input,omitempty"`
	Notes []string `json:"notes,omitempty"`
	// Warnings are about the inputs (a census file's bad frontmatter, as FILE:LINE: reason).
	Warnings []string `json:"warnings,omitempty"`
}

// reportInput is the store's encoder of the report input of the proposal it stores (Store.Propose):
// converted from the steps behind it, and kept in *in for the caller's reports.
func reportInput(steps []*evolve.StepResult, parent weights.Weights, warnings []evolve.Warning, in *report.ProposalReport) func(*store.Proposal) ([]byte, error) {
	return func(p *store.Proposal) ([]byte, error) {
		*in = ProposalReportFromSteps(steps, parent, p, warnings)
		return report.EncodeProposalInput(*in)
	}
}

// ReportProposal writes the EVAL report of a proposal (a file or an id; "" = the newest) into outDir
// from the input saved with it: it never re-runs a step, so it rewrites the very bytes propose or
// nightly wrote. A proposal without a saved input gets what its file holds and a fresh replay of the
// fixtures, and a note says so.
func ReportProposal(env Env, proposal string, outDir string) (ReportResult, error) {
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
	logged, err := s.LoggedInputSHA256(p.ID)
	if err != nil {
		return res, err
	}
	in, sha, err := report.LoadProposalInput(s.InputPath(p.ID))
	switch {
	case err == nil && in.ID == p.ID && (logged == "" || logged == sha):
		res.Input = "saved"
		in.Before, in.After = parent, p.Candidate
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return res, err
	default:
		res.Input = "proposal file"
		switch {
		case err == nil && logged != "" && logged != sha:
			res.Notes = append(res.Notes, fmt.Sprintf("the saved report input of %s does not match the sha256 %s records for it (edited?): window and screen left out; tune verify names the file", p.ID, store.LogFile))
		default:
			res.Notes = append(res.Notes, "no saved report input for "+p.ID+": window and screen not recorded")
		}
		in = ProposalReportOf(p, parent)
		fx, err := env.LoadSuite()
		if err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("fixtures: %v; the report has no replay", err))
		} else {
			in.Replay = replayOf(fx.Scenarios, parent, p.Candidate)
		}
	}
	res.Files, err = report.WriteProposal(outDir, in)
	return res, err
}

// replayOf is the report's replay table: the suite scored under a proposal's parent and its candidate.
func replayOf(scenarios []fixtures.Scenario, parent, candidate weights.Weights) []report.ScenarioLoss {
	suite := evolve.PrepareSuite(scenarios)
	return ReplayRows(suite.Score(&parent), suite.Score(&candidate))
}

// ReportHistory writes the EVAL report of the weights store into outDir.
func ReportHistory(env Env, outDir string, logs []string) (ReportResult, error) {
	res := ReportResult{Report: "history"}
	s, err := store.Open(env.WeightsDir, nil)
	if err != nil {
		return res, err
	}
	in, err := HistoryReportOf(s)
	if err != nil {
		return res, err
	}
	if len(logs) > 0 {
		if in.Accuracy, err = accuracyByVersion(env, s, logs); err != nil {
			return res, err
		}
	}
	res.Files, err = report.WriteHistory(outDir, in)
	return res, err
}

// accuracyByVersion is the dispatch accuracy of every closed task of the logs (whatever its age), split
// by the weights version it was dispatched under.
func accuracyByVersion(env Env, s *store.Store, logs []string) ([]accuracy.Group, error) {
	vs, err := versionStarts(s)
	if err != nil {
		return nil, err
	}
	// The whole history: a window of a century (the reference's own "lifetime" value).
	b := accuracy.NewBuilder(accuracy.Options{Days: 36500, Now: env.Now(), Versions: vs})
	if err := streamLogs(logs, b); err != nil {
		return nil, err
	}
	return b.Report().ByWeightsVersion, nil
}
