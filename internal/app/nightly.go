package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/watch"
	"github.com/ldd-tools/tune/internal/weights"
)

// NightlyLockName is the lock file in the weights directory that keeps two nightly runs apart.
const NightlyLockName = ".nightly.lock"

// Nightly is the cron job: under the nightly lock, it first runs the watch on the applied version, then
// (unless the watch found it harmful) the evolve loop over the logs (never applying: a reviewer does),
// and writes the proposal's EVAL report with what the watch found. A second run while one holds the
// lock does nothing and says so.
func Nightly(env Env, opts EvolveOptions) (*EvolveResult, error) {
	opts.Apply = false
	if st, err := os.Stat(env.WeightsDir); err != nil || !st.IsDir() {
		return nil, store.NoStoreError(env.WeightsDir)
	}
	lockPath := filepath.Join(env.WeightsDir, NightlyLockName)
	lock := flock.New(lockPath)
	ok, err := lock.TryLock()
	if err != nil {
		return nil, fmt.Errorf("nightly lock %s: %w", lockPath, err)
	}
	if !ok {
		return nil, fmt.Errorf("another tune nightly is running (it holds %s); this run did nothing", lockPath)
	}
	defer lock.Unlock()

	// The watch runs first: a harmful verdict on the applied version stops the night's evolve, whose
	// evidence the rollback proposal already answers (docs/decisions.md#watch).
	wr, err := Watch(env, WatchOptions{Logs: opts.Logs, ConfigPath: opts.ConfigPath})
	note := ""
	var nothing *NothingToWatchError
	switch {
	case errors.As(err, &nothing):
		note, err = nothing.Error(), nil
	case err != nil:
		return nil, err
	}
	if wr != nil && wr.Verdict == watch.Harmful {
		out := &EvolveResult{Outcome: OutcomeWatchHarmful, Steps: []EvolveStep{}, Warnings: []evolve.Warning{},
			Parent: wr.Version, Watch: wr,
			Reason: fmt.Sprintf("the watch found %s harmful, so this run did not evolve: %s", wr.Version, wr.Reason)}
		if wr.Proposal != "" {
			out.Reason += fmt.Sprintf("; rollback proposal %s awaits review (tune apply %s)", wr.Proposal, wr.Proposal)
			in := report.ProposalReport{ID: wr.Proposal, Created: env.Now().UTC(), Parent: versionNumber(wr.Version),
				Decision: weights.DecisionAccept, Reason: "roll " + wr.Version + " back to the content of " + wr.Parent, Watch: watchFinding(wr)}
			if s, err := env.OpenStore(); err == nil {
				in.Before, _ = s.Version(in.Parent)
				in.After, _ = s.Version(versionNumber(wr.Parent))
			}
			if out.Reports, err = report.WriteProposal(env.ReportsDir, in); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	out, err := Evolve(env, opts)
	if err != nil {
		return nil, err
	}
	out.Watch, out.WatchNote = wr, note
	if out.ReportInput != nil {
		in := *out.ReportInput
		if wr != nil {
			in.Watch = watchFinding(wr)
		}
		if out.Reports, err = report.WriteProposal(env.ReportsDir, in); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// OutcomeWatchHarmful is the nightly outcome when the watch stopped the run.
const OutcomeWatchHarmful = "watch-harmful"

func versionNumber(name string) int {
	n, _ := weights.ParseVersionName(name)
	return n
}

// reportMovedRows is how many moved tasks the EVAL report's Watch section lists (events first);
// tune watch --json lists them all.
const reportMovedRows = 50

// watchFinding is the watch result as the EVAL report shows it.
func watchFinding(r *WatchResult) *report.WatchFinding {
	f := &report.WatchFinding{Version: r.Version, Parent: r.Parent, Changes: r.Changes, Verdict: r.Verdict, Reason: r.Reason, Proposal: r.Proposal,
		NotCounted: watch.NotCountedText(r.NotCounted)}
	for _, t := range r.Tests {
		f.Tests = append(f.Tests, report.WatchTest{Name: t.Name, Basis: t.Basis, Events: fmt.Sprintf("%d/%d", t.K, t.N), Null: t.Null, Alt: t.Alt,
			E: t.E, Threshold: t.Threshold, NeedMore: t.NeedMore, Note: t.Note})
	}
	rows := watch.EventsFirst(r.MovedTasks)
	if len(rows) > reportMovedRows {
		f.MovedMore = len(rows) - reportMovedRows
		rows = rows[:reportMovedRows]
	}
	for _, m := range rows {
		f.Moved = append(f.Moved, report.WatchMoved{MetaTimestamp: m.MetaTimestamp, Task: m.Task, Levels: m.From + " → " + m.To, Test: m.Test, Against: m.Against()})
	}
	return f
}
