package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/tools/genlive"
	"github.com/ldd-tools/tune/internal/weights"
)

// A --branch night runs in a temporary tree, and its nightly states must come back to the work tree's
// store: otherwise every night of the pull-request loop reads its logs in full
// (docs/decisions.md#the-nightly-states-travel-with-a-branch-night). Night after night in a real git
// repository, the next night takes its logs up from the state the last --branch night left, the
// work tree stays clean, and a change applied on a merged branch starts a whole read again.
func TestBranchNightsKeepTheNightlyState(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	var now time.Time
	p := newStateProject(t, &now, 1)
	home := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = p.dir
		cmd.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com",
			"GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q", "-b", "main")
	// What tune init ignores, and the log and reports, which this project does not commit.
	ignore := strings.Join(append([]string{"pa/", "reports/"}, GitignoreEntries...), "\n") + "\n"
	if err := os.WriteFile(filepath.Join(p.dir, ".gitignore"), []byte(ignore), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "start tune")
	seq := genlive.NewSequence(3, genlive.Regime{Base: 0.05})
	body := func(string, string) ([]byte, error) { return []byte("body\n"), nil }
	const nights = 12
	resumed := 0
	for night := 1; night <= nights; night++ {
		text := nightUnder(t, p.env.WeightsDir, seq, night)
		appendFile(t, p.logs[0], text[0])
		resumed += p.resumes(t)
		now = genlive.NightEnd(night)
		if _, err := NightlyBranch(p.env, EvolveOptions{Logs: p.logs}, body); err != nil {
			t.Fatalf("night %d: %v", night, err)
		}
		if out := git("status", "--porcelain"); out != "" {
			t.Fatalf("night %d: the work tree is not clean after the night:\n%s", night, out)
		}
	}
	// A log's first state comes once it has tasks counted for good (20 labelled tasks later), and gives
	// tasks once the 19 counted ones it holds are not the log's first (docs/decisions.md#nightly-state):
	// the first nights read in full on any store.
	t.Logf("the log was taken up from the state on %d of %d nights", resumed, nights)
	if resumed < nights/2 {
		t.Errorf("the log was taken up from the state on %d of %d nights: the --branch nights lose their state", resumed, nights)
	}
	// A merged change (here applied and committed by hand) changes the state's key: a whole read.
	now = now.Add(time.Hour)
	applyByHand(t, p.env, now, weights.LayerCrossings)
	git("add", "-A")
	git("commit", "-q", "-m", "merge the change")
	if n := p.resumes(t); n != 0 {
		t.Errorf("after an apply the state of the weights before it was taken up for %d log(s)", n)
	}
	if _, err := os.Stat(filepath.Join(p.env.WeightsDir, store.CacheDir, store.DetectStateFile)); err != nil {
		t.Errorf("no detection state in the work tree's store: %v", err)
	}
}
