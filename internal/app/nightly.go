package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/report"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/watch"
)

// NightlyLockName is the lock file in the weights directory that keeps two nightly runs apart.
const NightlyLockName = store.NightlyLockFile

// What a night leaves for a human to review (NightlyResult.Review).
const (
	// ReviewChange: the evolve loop wrote a proposal that changes the weights (accept or halve).
	ReviewChange = "change"
	// ReviewRollback: the watch found the applied version not helping or harmful and wrote a rollback
	// proposal. It wins over a change of the same night: the change was measured against the version
	// the rollback undoes.
	ReviewRollback = "rollback"
)

// NightlyResult is what tune nightly reports (and its --json shape): the evolve result, what it leaves
// to review and, with --branch, the branch that holds the change.
type NightlyResult struct {
	*EvolveResult
	// Review is ReviewChange, ReviewRollback or "" (nothing to review); ReviewProposal its proposal id.
	Review         string `json:"review"`
	ReviewProposal string `json:"review_proposal,omitempty"`
	// Tasks counts the tasks of the logs; TasksFromState those of them the last night's state gave, so
	// that only the rest were read tonight (docs/decisions.md#nightly-state).
	Tasks          int `json:"tasks"`
	TasksFromState int `json:"tasks_from_state"`
	// Declined are the declined branches (EvolveOptions.Declined) whose changes this night refused on the
	// active version: read from the branch before the night, or caught by name when the night would have
	// left one for review (NightlyBranch). The next change the evidence prefers stands instead.
	Declined []string `json:"declined"`
	// Stale are tune's open branches of a version no longer active, named by a --branch night that
	// leaves nothing to review (a night with a review lists them in supersedes): their change can no
	// longer be merged, since another change was merged since, and the recipes close their requests.
	Stale []string `json:"stale,omitempty"`
	*BranchResult
}

// LogsEmptyError is a night that read no task although the project has evolved before: a log was
// emptied, rotated or moved, or the glob points at the wrong place. It is an error (exit 1), not
// "nothing to do", so that a scheduler alerts on it.
type LogsEmptyError struct {
	Logs   []string
	Serial int
}

func (e *LogsEmptyError) Error() string {
	return fmt.Sprintf("read no task from %d trace log(s) (%s), but this project has evolved before (evolution log at serial %d): a log was emptied, rotated or moved, or --logs points at the wrong place",
		len(e.Logs), joinShort(e.Logs), e.Serial)
}

func joinShort(names []string) string {
	if len(names) > 3 {
		return fmt.Sprintf("%s, %s, … %d more", names[0], names[1], len(names)-2)
	}
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

// Nightly is the cron job: under the nightly lock, it first judges the watch on the applied version, then
// (unless the watch found it harmful) the evolve loop over the logs (never applying: a reviewer does;
// when one read of the logs serves both, the loop runs on it but writes nothing before the verdict),
// and writes the proposal's EVAL report with what the watch found. A second run while one holds the
// lock does nothing and says so.
func Nightly(env Env, opts EvolveOptions) (*NightlyResult, error) {
	unlock, err := nightlyLock(env)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// The night's Stores share one read of the store while nothing in it changes (store.SharedReads):
	// it opens the store about twenty times.
	env.reads = &store.SharedReads{}
	return night(env, opts)
}

// nightlyLock takes the nightly lock in the weights directory.
func nightlyLock(env Env) (unlock func(), err error) {
	if st, err := os.Stat(env.WeightsDir); err != nil || !st.IsDir() {
		return nil, store.NoStoreError(env.WeightsDir)
	}
	lockPath := filepath.Join(env.WeightsDir, NightlyLockName)
	lock, err := regular.TryLock(lockPath, 0) // no link followed, no FIFO waited on
	if err != nil {
		return nil, fmt.Errorf("nightly lock %s: %w", lockPath, err)
	}
	if lock == nil {
		return nil, fmt.Errorf("another tune nightly is running (it holds %s); this run did nothing", lockPath)
	}
	return func() { _ = lock.Unlock() }, nil
}

// errStoppedByWatch is how Evolve stops when the night's watch found the applied version harmful; night
// then reports the watch's finding instead of an evolve.
var errStoppedByWatch = errors.New("the watch found the applied version harmful")

// night is one nightly run without the lock: the watch, then the evolve loop, then the review.
func night(env Env, opts EvolveOptions) (*NightlyResult, error) {
	opts.Apply = false
	opts.nightState = true
	// The watch is judged before the evolve decides anything: a harmful verdict on the applied version
	// stops the night's evolve, whose evidence the rollback proposal already answers
	// (docs/decisions.md#watch). When the evolve's read of the logs can serve the watch too, one read
	// feeds both (docs/decisions.md#one-read-for-the-watch-and-the-detection).
	run, err := startWatch(env, WatchOptions{Logs: opts.Logs, ConfigPath: opts.ConfigPath, nightState: true})
	note := ""
	var nothing *NothingToWatchError
	switch {
	case errors.As(err, &nothing):
		note, err = nothing.Error(), nil
	case err != nil:
		return nil, err
	}
	opts.watch = run
	out, err := Evolve(env, opts)
	var wr *WatchResult
	if run != nil {
		if run.result == nil {
			// The evolve failed before the watch was judged: judged alone, as if it had run first.
			if werr := run.judgeAlone(env); werr != nil {
				return nil, werr
			}
		}
		wr = run.result
	}
	if wr != nil && wr.Verdict == watch.Harmful {
		out := &EvolveResult{Outcome: OutcomeWatchHarmful, Steps: []EvolveStep{}, Warnings: []evolve.Warning{},
			Parent: wr.Version, Watch: wr,
			Reason: fmt.Sprintf("the watch found %s harmful, so this run did not evolve: %s", wr.Version, wr.Reason)}
		if wr.Proposal != "" {
			out.Reason += rollbackAwaits(wr.Proposal)
			if out.Reports, err = rollbackReport(env, wr); err != nil {
				return nil, err
			}
		}
		return reviewOf(out, wr), nil
	}
	if err != nil {
		return nil, err
	}
	out.Watch, out.WatchNote = wr, note
	if out.Tasks == 0 {
		if err := checkLogsEmpty(env, opts.Logs); err != nil {
			return nil, err
		}
	}
	if wr != nil && wr.Proposal != "" {
		// not helping: the rollback the night leaves for review has its report, as a harmful night's has
		if out.Reports, err = rollbackReport(env, wr); err != nil {
			return nil, err
		}
	}
	if out.ReportInput != nil {
		in := *out.ReportInput
		if wr != nil {
			in.Watch = watchFinding(wr)
		}
		files, err := report.WriteProposal(env.ReportsDir, in)
		if err != nil {
			return nil, err
		}
		out.Reports = append(out.Reports, files...)
	}
	return reviewOf(out, wr), nil
}

// rollbackReport writes the EVAL report of the rollback proposal the watch left: what the proposal file
// holds (its step, the tasks that regressed, the suite replayed under both versions), as tune report
// proposal renders a proposal without a saved input, and the watch's finding.
func rollbackReport(env Env, wr *WatchResult) ([]string, error) {
	s, err := env.OpenStore()
	if err != nil {
		return nil, err
	}
	p, err := s.ResolveProposal(wr.Proposal)
	if err != nil {
		return nil, err
	}
	parent, err := s.Version(p.Parent)
	if err != nil {
		return nil, fmt.Errorf("proposal %s: parent version: %w", p.ID, err)
	}
	in := ProposalReportOf(p, parent)
	// A harmful night evolves nothing, so nothing else needs the suite: without one the report has no
	// replay table (the proposal's step still carries the suite losses it was measured with), as
	// tune report proposal does.
	if fx, err := env.LoadSuite(); err == nil {
		in.Replay = replayOf(fx.Scenarios, parent, p.Candidate)
	}
	in.Watch = watchFinding(wr)
	return report.WriteProposal(env.ReportsDir, in)
}

// rollbackAwaits is what a harmful night's reason adds when it leaves the rollback proposal id for review.
func rollbackAwaits(id string) string {
	return fmt.Sprintf("; rollback proposal %s awaits review (tune apply %s)", id, id)
}

// reviewOf says what the night leaves for review.
func reviewOf(out *EvolveResult, wr *WatchResult) *NightlyResult {
	r := &NightlyResult{EvolveResult: out, Tasks: out.Tasks, TasksFromState: out.TakenUp, Declined: []string{}}
	switch {
	case wr != nil && wr.Proposal != "":
		r.Review, r.ReviewProposal = ReviewRollback, wr.Proposal
	case out.Stored != nil && out.Stored.Applicable():
		// An escalation that kept accepted steps leaves them for review too (and still exits 3): the
		// drift bound stops the step after them, not them (docs/decisions.md#escalation-keeps-its-steps).
		r.Review, r.ReviewProposal = ReviewChange, out.Stored.ID
	}
	return r
}

// checkLogsEmpty refuses a night that read no task when the store's log shows the project evolved
// before (any entry besides its init): logs that had tasks and now have none need a human.
func checkLogsEmpty(env Env, logs []string) error {
	s, err := env.OpenStore()
	if err != nil {
		return err
	}
	entries, err := s.Entries()
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Action != store.ActionInit {
			serial, _ := s.Head()
			names := make([]string, len(logs))
			for i, l := range logs {
				names[i] = env.LogName(l)
			}
			return &LogsEmptyError{Logs: names, Serial: serial}
		}
	}
	return nil
}

// OutcomeWatchHarmful is the nightly outcome when the watch stopped the run.
const OutcomeWatchHarmful = "watch-harmful"

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
		title, _ := report.TaskTitle(m.Task)
		f.Moved = append(f.Moved, report.WatchMoved{MetaTimestamp: m.MetaTimestamp, Task: title, Levels: m.From + " → " + m.To, Test: m.Tests(), Against: m.Against()})
	}
	return f
}
