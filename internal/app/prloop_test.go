package app

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tune "github.com/ldd-tools/tune"
	"github.com/ldd-tools/tune/internal/gitcmd"
	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/tools/genlive"
	"github.com/ldd-tools/tune/internal/weights"
)

// The pull-request loop the way a project runs it: a shared repository (a bare remote), a fresh clone
// per night that runs the crontab recipe's steps (fetch main and the tune/ branches, tune nightly
// --branch, push the branch when it changed, close what it supersedes), a reviewer's clone that merges
// a pull request some nights after it was opened, and a log that grows every day under the weights
// main holds. The evidence grows every night, so every night's proposal has a new id; a pull request
// that still makes the same change must stay open until its reviewer merges it
// (docs/decisions.md#a-pull-request-is-the-change-not-the-night). Before, the branch was named by the
// proposal id and the next night closed it: 0 of 9 pull requests due after one night were merged (the
// seventh review).
func TestAPullRequestLivesUntilItsReviewerMerges(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	seeds, nights := []uint64{3, 4}, 22               // each opens a pull request in 22 nights; the six runs merge in all three ways
	if v := os.Getenv("TUNE_PRLOOP_SEEDS"); v != "" { // the measured run: docs/live-harness.md
		seeds = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
			if err != nil {
				t.Fatalf("TUNE_PRLOOP_SEEDS: %v", err)
			}
			seeds = append(seeds, n)
		}
		nights = 30
	}
	for _, wait := range []int{0, 1, 3} {
		var sum prTally
		for _, seed := range seeds {
			sum.add(playPRLoop(t, seed, wait, nights))
		}
		lo, hi := stats.Wilson(sum.merged, sum.due, 0.95)
		t.Logf("reviewer merges after %d more night(s), %d sequences × %d nights: %s; merged %d/%d due [%.1f, %.1f] %%",
			wait, len(seeds), nights, sum, sum.merged, sum.due, 100*lo, 100*hi)
		if sum.due == 0 {
			t.Errorf("wait %d: no pull request came due: the planted effect never reached a review", wait)
		}
		if sum.merged != sum.due {
			t.Errorf("wait %d: %d of %d pull requests due for merging were closed before their reviewer merged them", wait, sum.due-sum.merged, sum.due)
		}
		if sum.kept == 0 && wait > 0 {
			t.Errorf("wait %d: no night found its open pull request's change again: the test never grew the evidence under an open branch", wait)
		}
	}
}

type prTally struct {
	// due: merged, or closed by a night that proposed the same change before its reviewer's morning.
	opened, due, merged, superseded, kept, openAtEnd int
}

func (p *prTally) add(o prTally) {
	p.opened += o.opened
	p.due += o.due
	p.merged += o.merged
	p.superseded += o.superseded
	p.kept += o.kept
	p.openAtEnd += o.openAtEnd
}

func (p prTally) String() string {
	return fmt.Sprintf("opened %d, superseded %d, merged %d, open at the end %d; nights that found the open branch's change again %d",
		p.opened, p.superseded, p.merged, p.openAtEnd, p.kept)
}

// playPRLoop plays nights of the strong planted regime through the pull-request loop; the reviewer
// merges a pull request in the morning after it survived wait more nightly runs. A pull request is due
// when it is still open that morning, or when a night closed it before then for a proposal that makes
// the same change (the bug; one closed for another change was rightly replaced and is not due). The
// change is read from the title without its proposal id: the parent version and the steps.
func playPRLoop(t *testing.T, seed uint64, wait, nights int) prTally {
	t.Helper()
	root, remote, reviewer, logPath, run := newLoopRepo(t, seed)
	seq := genlive.NewSequence(seed, genlive.Regime{Base: 0.05, Planted: planted, Carrier: 0.95})

	style := []string{"merge", "squash", "rebase"}[(int(seed)+wait)%3]
	var tally prTally
	type pr struct {
		night  int // whose run opened it
		change string
	}
	open := map[string]pr{}
	for night := 1; night <= nights; night++ {
		// The reviewer's morning: merge what has waited long enough, in one of GitHub's three ways (the
		// sequence's); the merged branch is left on the remote, as GitHub leaves it unless told otherwise.
		for _, branch := range slices.Sorted(maps.Keys(open)) {
			if night-1-open[branch].night < wait {
				continue
			}
			tally.due++
			run(reviewer, "fetch", "-q", "--prune", "origin")
			run(reviewer, "checkout", "-q", "main")
			run(reviewer, "reset", "-q", "--hard", "origin/main")
			switch style {
			case "merge":
				run(reviewer, "merge", "-q", "--no-ff", "--no-edit", "origin/"+branch)
			case "squash":
				run(reviewer, "merge", "-q", "--squash", "origin/"+branch)
				run(reviewer, "commit", "-q", "-m", "squashed "+branch)
			case "rebase":
				run(reviewer, "cherry-pick", "origin/main.."+"origin/"+branch)
			}
			v, err := Verify(filepath.Join(reviewer, "weights"), filepath.Join(reviewer, "fixtures"), "")
			if err != nil || !v.Intact {
				t.Fatalf("seed %d night %d: main after merging %s does not verify: %v %+v", seed, night, branch, err, v)
			}
			run(reviewer, "push", "-q", "origin", "main")
			delete(open, branch)
			tally.merged++
		}
		run(reviewer, "fetch", "-q", "--prune", "origin")
		run(reviewer, "checkout", "-q", "--detach", "origin/main")
		active, _, err := activeAt(filepath.Join(reviewer, "weights"))
		if err != nil {
			t.Fatal(err)
		}
		_, text := seq.Night(night, &active)
		appendFile(t, logPath, text[0])

		// The night: a fresh clone runs the crontab recipe's steps.
		res, cron := cronNight(t, root, remote, night, run, EvolveOptions{Logs: []string{logPath}})
		if b := res.BranchResult; b != nil {
			change := proposalID.ReplaceAllString(b.Title, "p-…")
			if _, ok := open[b.Branch]; ok {
				if !b.BranchUpdated && b.BranchProposal != res.ReviewProposal {
					tally.kept++
				}
			} else {
				open[b.Branch] = pr{night, change}
				tally.opened++
			}
			for _, old := range b.Supersedes {
				was, ok := open[old]
				if !ok {
					t.Fatalf("seed %d night %d: supersedes %s, which no pull request holds (open: %v)", seed, night, old, slices.Sorted(maps.Keys(open)))
				}
				if was.change == change {
					tally.due++ // closed before its reviewer's morning, for the same change
					t.Logf("seed %d night %d: %s (%q, opened night %d) closed for the same change", seed, night, old, change, was.night)
				}
				delete(open, old)
				tally.superseded++
				run(cron, "push", "-q", "origin", "--delete", old)
			}
		}
		namedFilesExist(t, seed, night, run, cron, res)
		// Every night, whatever it reviews: a merged pull request's branch (merged in any of the three
		// ways, and left on the remote) is never one to close.
		repo := gitcmd.Repo{Dir: cron}
		head, err := repo.Commit("HEAD")
		if err != nil {
			t.Fatal(err)
		}
		others, err := superseded(repo, head, "", "weights")
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range others {
			if _, ok := open[b]; !ok {
				t.Fatalf("seed %d night %d (%s merges): the merged branch %s would be closed as superseded", seed, night, style, b)
			}
		}
		if err := os.RemoveAll(cron); err != nil {
			t.Fatal(err)
		}
	}
	tally.openAtEnd = len(open)
	active, _, err := activeAt(filepath.Join(reviewer, "weights"))
	if err != nil {
		t.Fatal(err)
	}
	if tally.merged > 0 && active.Version == 1 {
		t.Errorf("seed %d: %d merges, yet main's active version is v0001", seed, tally.merged)
	}
	t.Logf("seed %d, wait %d, %s merges: %s; main active %s (%s)", seed, wait, style, tally, weights.VersionName(active.Version), changedSignals(t, active))
	return tally
}

// newLoopRepo sets up the pull-request loop's repositories in a temp dir root: the shared repository
// (a bare remote) holding the reference project on main, a reviewer's clone, and the path of the team's
// trace log outside both; run runs git in a directory and fails the test (naming seed) on an error.
func newLoopRepo(t *testing.T, seed uint64) (root, remote, reviewer, logPath string, run func(dir string, args ...string) string) {
	t.Helper()
	root = t.TempDir()
	home := filepath.Join(root, "home")
	run = func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com",
			"GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com", "GIT_TERMINAL_PROMPT=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("seed %d: git %v: %v\n%s", seed, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	remote = filepath.Join(root, "remote.git")
	run(root, "init", "-q", "--bare", "-b", "main", remote)
	start := filepath.Join(root, "start")
	if err := testutil.CopyReference(start); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(start, ".gitignore"), []byte(strings.Join(GitignoreEntries, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(start, "init", "-q", "-b", "main")
	run(start, "add", "-A")
	run(start, "commit", "-q", "-m", "start tune")
	run(start, "push", "-q", remote, "main")
	reviewer = filepath.Join(root, "reviewer")
	run(root, "clone", "-q", remote, reviewer)
	logPath = filepath.Join(root, "team", ".ldd", "trace.log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		t.Fatal(err)
	}
	return root, remote, reviewer, logPath, run
}

// cronNight runs a night's crontab steps in a fresh clone of remote under root (the caller removes it):
// fetch the tune/ branches, tune nightly --branch seven hours after the night's end, push the branch
// when the night changed it.
func cronNight(t *testing.T, root, remote string, night int, run func(string, ...string) string, opts EvolveOptions) (*NightlyResult, string) {
	t.Helper()
	cron := filepath.Join(root, fmt.Sprintf("cron-%02d", night))
	run(root, "clone", "-q", remote, cron)
	run(cron, "fetch", "-q", "--prune", "origin", "+refs/heads/tune/*:refs/heads/tune/*")
	now := genlive.NightEnd(night).Add(7 * time.Hour)
	env := Env{Now: func() time.Time { return now }, WeightsDir: filepath.Join(cron, "weights"),
		FixturesDir: filepath.Join(cron, "fixtures"), ReportsDir: filepath.Join(cron, "reports"), Root: cron}
	body := func(string, string) ([]byte, error) { return []byte("body\n"), nil }
	res, err := NightlyBranch(env, opts, body)
	if err != nil {
		t.Fatalf("night %d: %v", night, err)
	}
	if b := res.BranchResult; b != nil && b.BranchUpdated {
		run(cron, "push", "-q", "--force", "origin", b.Branch)
	}
	return res, cron
}

// namedFilesExist fails the test when a --branch night's result names a proposal or report file that is
// neither in the work tree nor, when the result says a branch holds them (files_on), on that branch: a CI
// step that uploads the night's reports, or a reviewer who opens the printed path, must find it.
func namedFilesExist(t *testing.T, seed uint64, night int, run func(string, ...string) string, cron string, res *NightlyResult) {
	t.Helper()
	named := slices.Clone(res.Reports)
	if res.Proposal != nil && res.Proposal.File != "" {
		named = append(named, res.Proposal.File)
	}
	if res.Watch != nil && res.Watch.ProposalPath != "" {
		named = append(named, res.Watch.ProposalPath)
	}
	if res.FilesOn != "" && (res.BranchResult == nil || res.FilesOn != res.BranchResult.Branch) {
		t.Fatalf("seed %d night %d: files on %q, but the night's branch is %+v", seed, night, res.FilesOn, res.BranchResult)
	}
	for _, f := range named {
		rel, err := filepath.Rel(cron, f)
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Fatalf("seed %d night %d: %s lies outside the checkout %s", seed, night, f, cron)
		}
		if res.FilesOn != "" {
			run(cron, "cat-file", "-e", res.FilesOn+":"+filepath.ToSlash(rel))
		} else if _, err := os.Stat(f); err != nil {
			t.Fatalf("seed %d night %d: the night names %s, which does not exist: %v", seed, night, rel, err)
		}
	}
}

var proposalID = regexp.MustCompile(`p-[0-9a-f]{12}`)

// changedSignals names the signals whose weight differs from the reference.
func changedSignals(t *testing.T, w weights.Weights) string {
	ref, err := weights.Parse("v0001.toml", tune.ReferenceWeights)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range weights.Signals() {
		if w.Signals[s] != ref.Signals[s] {
			out = append(out, fmt.Sprintf("%s %v→%v", s, ref.Signals[s], w.Signals[s]))
		}
	}
	return strings.Join(out, ", ")
}

// A --branch night that fails names the file by its place in the checkout, not in the temporary tree
// it ran in, which is gone when the error is read (the ninth review).
func TestABranchNightsErrorNamesTheCheckout(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root, remote, _, logPath, run := newLoopRepo(t, 1)
	cron := filepath.Join(root, "cron")
	run(root, "clone", "-q", remote, cron)
	bad := filepath.Join(cron, "fixtures", "suite", "zz.toml")
	if err := os.WriteFile(bad, []byte("bogus = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(cron, "add", "-A")
	run(cron, "commit", "-q", "-m", "a fixture the suite cannot read")
	appendFile(t, logPath, nil)
	env := Env{Now: func() time.Time { return genlive.NightEnd(1) }, WeightsDir: filepath.Join(cron, "weights"),
		FixturesDir: filepath.Join(cron, "fixtures"), ReportsDir: filepath.Join(cron, "reports"), Root: cron}
	_, err := NightlyBranch(env, EvolveOptions{Logs: []string{logPath}}, func(string, string) ([]byte, error) { return nil, nil })
	real, _ := filepath.EvalSymlinks(bad)
	if err == nil || !strings.Contains(err.Error(), real+":1: unknown key bogus") || strings.Contains(err.Error(), "tune-branch") {
		t.Errorf("a night on a bad fixture: %v, want it named as %s", err, real)
	}
}
