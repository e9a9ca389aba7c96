package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/atomicfile"
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/gitcmd"
	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/textfmt"
	"github.com/ldd-tools/tune/internal/weights"
)

// BranchPrefix names the branches tune nightly --branch writes: BranchPrefix + the change's name
// (ChangeBranch).
const BranchPrefix = "tune/"

// BranchAuthor is the author and committer of every commit nightly --branch writes, dated by its
// proposal: the same change on the same base is the same commit (docs/decisions.md#pull-request-loop).
var BranchAuthor = struct{ Name, Email string }{"tune nightly", "tune-nightly@users.noreply.invalid"}

// BranchResult is the branch a night's change was written to (nightly --branch; its --json fields).
type BranchResult struct {
	Branch string `json:"branch"`
	// BranchProposal is the proposal the branch holds: the night's (review_proposal), or the one that
	// first made the same change on the same base (the branch stays as it is).
	BranchProposal string `json:"branch_proposal"`
	Title          string `json:"title"`
	// BodyFile is the pull request's body (the Markdown diff), outside the work tree (in the git
	// directory) so that it never stands in the way of a merge; the branch holds the same bytes at
	// BodyPath.
	BodyFile string `json:"body_file"`
	BodyPath string `json:"body_path"`
	Base     string `json:"base"`
	Commit   string `json:"commit"`
	// BranchUpdated is false when the branch already held this change on this base: no new commit,
	// nothing to push.
	BranchUpdated bool `json:"branch_updated"`
	// Supersedes lists the other tune/ branches not merged into the base: they make another change
	// (or one on an older base) that this night's replaces (close their pull requests).
	Supersedes []string `json:"supersedes"`
}

// BodyFunc renders the pull request body of proposal (a file) against the active version of the store
// in weightsDir (the Markdown diff; it lives in the view layer).
type BodyFunc func(weightsDir, proposal string) ([]byte, error)

// NightlyBranch is Nightly in a temporary copy of the store at HEAD: the night's writes go there, never
// to the checked-out work tree, and when it leaves a change to review (an accepted or halved proposal,
// or the watch's rollback) that change is applied there as `tune apply` would apply it and committed
// on the branch ChangeBranch names, with the EVAL report and the pull request body. Merging the branch
// makes the change active. The same change on the same base leaves the branch as it is, however its
// evidence grew since; a moved base rebuilds it on the new base (docs/nightly.md, "Pull requests").
func NightlyBranch(env Env, opts EvolveOptions, body BodyFunc) (*NightlyResult, error) {
	unlock, err := nightlyLock(env)
	if err != nil {
		return nil, err
	}
	defer unlock()
	top, err := gitcmd.Toplevel(env.WeightsDir)
	if err != nil {
		return nil, fmt.Errorf("--branch needs the weights store in a git work tree: %w", err)
	}
	if top, err = filepath.EvalSymlinks(top); err != nil {
		return nil, err
	}
	repo := gitcmd.Repo{Dir: top}
	base, err := repo.Commit("HEAD")
	if err != nil || base == "" {
		return nil, fmt.Errorf("--branch: the repository at %s has no commit to build on: commit the project first", top)
	}
	// The three directories as paths in the repository (they must lie inside it).
	var rels [3]string
	for i, d := range []string{env.WeightsDir, env.FixturesDir, env.ReportsDir} {
		if rels[i], err = repoPath(top, d); err != nil {
			return nil, err
		}
	}
	weightsRel, fixturesRel, reportsRel := rels[0], rels[1], rels[2]
	// A branch is checked file by file against what a night writes in each of the three (keptChange): one
	// path for two of them cannot be told apart, and the branch was rebuilt every night (the second
	// re-review of the pull-request loop).
	for i, a := range rels {
		for j, b := range rels[i+1:] {
			if a == b {
				names := []string{"the weights store", "the fixtures", "the reports directory"}
				return nil, fmt.Errorf("--branch: %s and %s are one directory (%s): a branch night needs three (set --weights-dir, --fixtures-dir and --reports-dir, or TUNE_WEIGHTS_DIR, TUNE_FIXTURES_DIR and TUNE_REPORTS_DIR, apart)", names[i], names[i+1+j], a)
			}
		}
	}
	if files, err := repo.Files(base, weightsRel); err != nil || !hasVersionFile(files) {
		return nil, fmt.Errorf("--branch: HEAD (%s) holds no weights store at %s: commit the store first (tune init says what to commit)", gitcmd.Short(base), weightsRel)
	}

	paths := []string{weightsRel, fixturesRel, reportsRel}
	configRel := ""
	if env.Config != "" {
		if r, err := repoPath(top, env.Config); err == nil {
			configRel = r
			paths = append(paths, r)
		}
	}
	declined := map[string]bool{}
	for _, d := range opts.Declined {
		declined[d] = true
	}
	var (
		tmp, wt string
		index   gitcmd.Repo
		inner   Env
		res     *NightlyResult
		skipped []string
		// tasks and fromState are the first run's counts (NightlyResult.Tasks, TasksFromState).
		tasks, fromState int
		// refused are the declined branches whose changes were refused before the night (declinedOnBranches).
		refused []string
	)
	defer func() { os.RemoveAll(tmp) }()
	// A change a reviewer declined (its branch name in opts.Declined) is not left for review again: what it
	// moved is refused on this version before the night (declinedOnBranches), and a night whose change is
	// still on a declined branch runs again with that change's weights refused too (skipDeclined), so the
	// next change the evidence prefers is proposed instead, or nothing
	// (docs/decisions.md#a-declined-change-is-refused-on-its-version).
	first := true
	for again := true; again; first = false {
		os.RemoveAll(tmp)
		if tmp, wt, index, inner, err = branchTree(repo, base, env, paths, rels, configRel); err != nil {
			return nil, err
		}
		if first {
			if opts.declinedChanges, refused, err = declinedOnBranches(repo, inner, weightsRel, opts.Declined); err != nil {
				return nil, err
			}
		}
		// The nightly states travel with the night: in from the work tree's store and back, or every --branch
		// night would read the logs in full (docs/decisions.md#the-nightly-states-travel-with-a-branch-night).
		carryStates(env.WeightsDir, inner.WeightsDir)
		if res, err = night(inner, opts); err != nil {
			return nil, &treePathError{err: err, tree: wt, top: top}
		}
		if first {
			tasks, fromState = res.Tasks, res.TasksFromState
		}
		carryStates(inner.WeightsDir, env.WeightsDir)
		if again, err = skipDeclined(res, inner.WeightsDir, declined, &skipped, &opts.declinedChanges); err != nil {
			return nil, err
		}
	}
	res.Declined = append([]string{}, refused...)
	for _, name := range skipped {
		if !slices.Contains(res.Declined, name) {
			res.Declined = append(res.Declined, name)
		}
	}
	// The tasks the night read are the first run's: a rerun takes them up from that run's state.
	res.Tasks, res.TasksFromState = tasks, fromState
	// Paths in the result name where the files are once the branch is merged; a state dump (an
	// escalation leaves no branch) is copied to the work tree's reports, where the page step reads it.
	outside := func(p string) string {
		if r, err := filepath.Rel(wt, p); err == nil && !strings.HasPrefix(r, "..") {
			return filepath.Join(top, r)
		}
		return p
	}
	if res.StateDump != nil {
		data, err := os.ReadFile(*res.StateDump)
		if err != nil {
			return nil, err
		}
		dst := filepath.Join(env.ReportsDir, filepath.Base(*res.StateDump))
		if err := os.MkdirAll(env.ReportsDir, 0o755); err != nil {
			return nil, err
		}
		if err := atomicfile.Write(dst, data, atomicfile.Public); err != nil {
			return nil, err
		}
		// Off the branch: the work tree now holds it untracked, and a merged copy would stop the next
		// checkout of the base ("untracked working tree files would be overwritten").
		if err := os.Remove(*res.StateDump); err != nil {
			return nil, err
		}
		res.StateDump = &dst
	}
	for i := range res.Reports {
		res.Reports[i] = outside(res.Reports[i])
	}
	if res.Proposal != nil {
		res.Proposal.File = outside(res.Proposal.File)
	}
	if res.Watch != nil && res.Watch.ProposalPath != "" {
		res.Watch.ProposalPath = outside(res.Watch.ProposalPath)
	}
	if res.Review == "" {
		// Nothing to review: the files went with the temporary tree, so the result names none.
		dropFiles(res)
		// A night after a merge has nothing to review more often than not, and the other requests of the
		// merged change's parent can no longer merge: they stayed open until a night proposed something
		// (the review of the pull-request loop), and a reviewer who resolved the conflict "theirs" replaced
		// the merged version with theirs.
		if res.Stale, err = staleBranches(repo, base, weightsRel, inner); err != nil {
			return nil, err
		}
		return res, nil
	}

	p, err := store.ResolveProposal(inner.WeightsDir, res.ReviewProposal)
	if err != nil {
		return nil, err
	}
	b := &BranchResult{Branch: ChangeBranch(p, res.Review), BranchProposal: p.ID, Base: base, Supersedes: []string{}}
	res.BranchResult = b
	ref := "refs/heads/" + b.Branch
	gitDir, err := repo.Line("rev-parse", "--absolute-git-dir")
	if err != nil {
		return nil, err
	}
	bodyPaths := func(id string) {
		b.BodyPath = filepath.ToSlash(filepath.Join(reportsRel, id+".pr.md"))
		b.BodyFile = filepath.Join(gitDir, "tune", id+".pr.md")
	}
	bodyPaths(p.ID)
	if b.Supersedes, err = superseded(repo, base, b.Branch, weightsRel); err != nil {
		return nil, err
	}
	// A declined branch's pull request is closed already: nothing to close, and it stays as the reviewer left it.
	b.Supersedes = slices.DeleteFunc(b.Supersedes, func(name string) bool { return declined[name] })
	old, err := repo.Ref(ref)
	if err != nil {
		return nil, err
	}
	if old != "" {
		// The same change already committed on this base: the branch stays, whatever the night's clock
		// and however the evidence grew, so that its pull request lives until a reviewer merges it
		// (docs/decisions.md#a-pull-request-is-the-change-not-the-night).
		if kept, body, ok := keptChange(repo, old, base, weightsRel, fixturesRel, reportsRel, b.Branch, res.Review); ok {
			bodyPaths(kept.ID)
			b.BranchProposal, b.Commit, b.Title = kept.ID, old, titleOf(kept, res)
			if kept.ID == res.ReviewProposal {
				res.FilesOn = b.Branch
			} else {
				// The branch keeps its own proposal's files; the night's went with the temporary tree.
				dropFiles(res)
			}
			return res, writeBody(b.BodyFile, body)
		}
	}

	proposalFile := filepath.Join(inner.WeightsDir, store.ProposalsDir, p.ID+".json")
	bodyData, err := body(inner.WeightsDir, proposalFile)
	if err != nil {
		return nil, err
	}
	bodyData = []byte(textfmt.Markdown(string(bodyData))) // no escape sequence into a PR body (docs/decisions.md#hostile-files-issue-25)
	b.Title = titleOf(p, res)
	// Applied as `tune apply` applies it, dated by the proposal so that the same change gives the same
	// bytes on every night.
	applyEnv := inner
	created := p.Created.UTC()
	applyEnv.Now = func() time.Time { return created }
	s, err := applyEnv.OpenStore()
	if err != nil {
		return nil, err
	}
	if _, err := s.Apply(p); err != nil {
		return nil, fmt.Errorf("apply %s on the branch: %w", p.ID, err)
	}
	if err := atomicfile.Write(inTree(wt, b.BodyPath), bodyData, atomicfile.Public); err != nil {
		return nil, err
	}
	for _, lock := range []string{store.LockFile, NightlyLockName} {
		if err := os.Remove(filepath.Join(inner.WeightsDir, lock)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	// The nightly states went back to the work tree's store (carryStates); a cache is never committed
	// (the add below forces ignored files in: the store's own ignore rules are not the repository's).
	if err := os.RemoveAll(filepath.Join(inner.WeightsDir, store.CacheDir)); err != nil {
		return nil, err
	}
	work := index.With("GIT_DIR="+gitDir, "GIT_WORK_TREE="+wt)
	work.Dir = wt
	if _, err := work.Run(append([]string{"add", "--all", "--force", "--"}, paths[:3]...)...); err != nil {
		return nil, err
	}
	tree, err := index.Line("write-tree")
	if err != nil {
		return nil, err
	}
	date := fmt.Sprintf("%d +0000", created.Unix())
	author := repo.With("GIT_AUTHOR_NAME="+BranchAuthor.Name, "GIT_AUTHOR_EMAIL="+BranchAuthor.Email, "GIT_AUTHOR_DATE="+date,
		"GIT_COMMITTER_NAME="+BranchAuthor.Name, "GIT_COMMITTER_EMAIL="+BranchAuthor.Email, "GIT_COMMITTER_DATE="+date)
	msg := b.Title + "\n\n" + commitMessage(p, res, b)
	commit, err := author.RunInput([]byte(msg), "commit-tree", tree, "-p", base)
	if err != nil {
		return nil, err
	}
	b.Commit = strings.TrimSpace(string(commit))
	b.BranchUpdated = b.Commit != old
	res.FilesOn = b.Branch
	if b.BranchUpdated {
		if _, err := repo.Run("update-ref", "-m", "tune nightly --branch", ref, b.Commit, old); err != nil {
			if blocking := blockingRefs(repo, ref); len(blocking) > 0 {
				return nil, fmt.Errorf("--branch: cannot write the branch %s: git keeps branches as paths, and %s holds that path (as a folder, or as a branch above it); no night can write its branch until it is gone: delete it (git branch -D NAME; git push origin --delete NAME)", strings.TrimPrefix(ref, "refs/heads/"), strings.Join(blocking, ", "))
			}
			return nil, err
		}
	}
	return res, writeBody(b.BodyFile, bodyData)
}

// blockingRefs lists the branches whose names keep ref from being written: those below it
// (tune/v0001-…/x) and those above it (tune). A branch anyone can push to can be named so, and every
// night then failed with git's "cannot lock ref" (the review of the pull-request loop).
func blockingRefs(repo gitcmd.Repo, ref string) []string {
	var out []string
	if below, err := repo.Line("for-each-ref", "--format=%(refname:short)", ref+"/"); err == nil && below != "" {
		out = append(out, strings.Split(below, "\n")...)
	}
	for dir := path.Dir(ref); strings.HasPrefix(dir, "refs/heads/"); dir = path.Dir(dir) {
		if _, err := repo.Run("show-ref", "--verify", "--quiet", dir); err == nil {
			out = append(out, strings.TrimPrefix(dir, "refs/heads/"))
		}
	}
	return out
}

// treePathError is an error of a --branch night run in its temporary tree, naming the files by their
// place in the checkout: the tree is removed when the night ends, so a path into it names nothing a
// reader can open (the ninth review: "/tmp/tune-branch-…/tree/fixtures/suite/a.toml:1: …").
type treePathError struct {
	err       error
	tree, top string
}

func (e *treePathError) Error() string { return strings.ReplaceAll(e.err.Error(), e.tree, e.top) }
func (e *treePathError) Unwrap() error { return e.err }

// dropFiles empties the paths of the proposal and report files a --branch night wrote in its temporary
// tree and committed nowhere, so that the result never names a file that does not exist.
func dropFiles(res *NightlyResult) {
	res.Reports = nil
	if res.Proposal != nil {
		res.Proposal.File = ""
	}
	if res.Watch != nil {
		res.Watch.ProposalPath = ""
	}
}

// branchTree checks out paths of base (the store, fixtures, reports and config) into a new temporary
// directory tmp, with its own index, and returns the Env whose directories are the tree's: a --branch
// night writes there, never to the work tree. The caller removes tmp.
func branchTree(repo gitcmd.Repo, base string, env Env, paths []string, rels [3]string, configRel string) (tmp, wt string, index gitcmd.Repo, inner Env, err error) {
	if tmp, err = os.MkdirTemp("", "tune-branch-"); err != nil {
		return "", "", index, inner, err
	}
	wt = filepath.Join(tmp, "tree")
	index = repo.With("GIT_INDEX_FILE=" + filepath.Join(tmp, "index"))
	if _, err := index.Run("read-tree", base); err != nil {
		return tmp, "", index, inner, err
	}
	listed, err := index.Run(append([]string{"ls-files", "-z", "--"}, paths...)...)
	if err != nil {
		return tmp, "", index, inner, err
	}
	if _, err := index.RunInput(listed, "checkout-index", "-z", "--stdin", "--prefix="+wt+string(filepath.Separator)); err != nil {
		return tmp, "", index, inner, err
	}
	inner = env
	inner.WeightsDir, inner.FixturesDir, inner.ReportsDir = inTree(wt, rels[0]), inTree(wt, rels[1]), inTree(wt, rels[2])
	if configRel != "" {
		if _, err := os.Stat(inTree(wt, configRel)); err == nil {
			inner.Config = inTree(wt, configRel) // the committed config, as the merged main will read it
		}
	}
	for _, d := range []string{inner.FixturesDir, inner.ReportsDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return tmp, "", index, inner, err
		}
	}
	return tmp, wt, index, inner, nil
}

// skipDeclined takes back the review res leaves when its change is on a declined branch (named in
// skipped): a declined rollback leaves the night's own change instead, if it made one; a declined change
// adds the signals and edges it moved to refused and asks for the night again (rerun), or leaves nothing
// when it moved nothing new. Each rerun refuses at least one more signal or edge, so the reruns end.
func skipDeclined(res *NightlyResult, weightsDir string, declined map[string]bool, skipped *[]string, refused *[]evolve.Change) (rerun bool, err error) {
	for res.Review != "" {
		p, err := store.ResolveProposal(weightsDir, res.ReviewProposal)
		if err != nil {
			return false, err
		}
		name := ChangeBranch(p, res.Review)
		if !declined[name] {
			return false, nil
		}
		if !slices.Contains(*skipped, name) {
			*skipped = append(*skipped, name)
		}
		if res.Review == ReviewRollback {
			// The reviewer keeps the applied version: the night's own change, if it made one, is next.
			if w := res.Watch; w != nil && w.Proposal != "" {
				res.Reason = strings.Replace(res.Reason, rollbackAwaits(w.Proposal), "", 1)
				w.Proposal, w.ProposalPath, w.ProposalNew = "", "", false
				w.ProposalNote = "a reviewer declined its rollback (" + name + "): not proposed again on this version"
			}
			res.Review, res.ReviewProposal = "", ""
			if res.Stored != nil && res.Stored.Applicable() {
				res.Review, res.ReviewProposal = ReviewChange, res.Stored.ID
			}
			continue
		}
		st, err := store.Open(weightsDir, nil)
		if err != nil {
			return false, err
		}
		parent, err := st.Version(p.Parent)
		if err != nil {
			return false, err
		}
		more := movedBy(p, &parent, *refused)
		if len(more) == 0 {
			res.Review, res.ReviewProposal = "", ""
			return false, nil
		}
		*refused = append(*refused, more...)
		return true, nil
	}
	return false, nil
}

// declinedOnBranches refuses, before the night decides, what the declined changes on the active version
// moved (out; names are those branches), read from their branches (the recipes fetch them): a no to a change covers its signals and edges
// on that version, whatever step a later night prefers. A branch is PR-controlled, so its proposal counts
// only when it is the change the name was made from (ChangeBranch of it gives the name back: the name is
// a hash of the change); a branch that is gone or holds anything else refuses nothing here, and the
// night's own change on it is still caught by name after the night.
func declinedOnBranches(repo gitcmd.Repo, inner Env, weightsRel string, declined []string) (out []evolve.Change, names []string, err error) {
	if len(declined) == 0 {
		return nil, nil, nil
	}
	s, err := inner.OpenStore()
	if err != nil {
		return nil, nil, err
	}
	active, err := s.ActiveVersion()
	if err != nil {
		return nil, nil, err
	}
	parent, err := s.Version(active)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range declined {
		if !strings.HasPrefix(name, BranchPrefix+weights.VersionName(active)+"-") {
			continue // another version's no
		}
		tip, err := repo.Ref("refs/heads/" + name)
		if err != nil || tip == "" {
			continue
		}
		id, ok := committedProposal(repo, tip)
		if !ok {
			continue
		}
		data, ok, err := repo.Show(tip, path.Join(weightsRel, store.ProposalsDir, id+".json"), regular.ProposalFile)
		if err != nil || !ok {
			continue
		}
		p, err := store.ParseProposal(id+".json", data)
		// The name's version prefix is the active one, so a proposal that hashes to it is on that parent.
		if err != nil || ChangeBranch(p, ReviewChange) != name || slices.Contains(names, name) {
			continue
		}
		out = append(out, movedBy(p, &parent, out)...)
		names = append(names, name)
	}
	return out, names, nil
}

// movedBy lists the signals and bucket edges proposal p's candidate moves from parent (the weights
// of p's parent) that are not in known yet, as changes to refuse (evolve refuses a signal or an edge
// whatever the step). The candidate, not the proposal's steps: the branch name hashes the candidate
// alone, and a closed request of a forged proposal with no change but a listed step refused that
// step's signal (the review of the pull-request loop).
func movedBy(p *store.Proposal, parent *weights.Weights, known []evolve.Change) []evolve.Change {
	var out []evolve.Change
	for _, ch := range store.Changes(parent, &p.Candidate) {
		c := evolve.Change{Kind: ch.Kind}
		switch ch.Kind {
		case weights.ChangeSignal:
			sig, ok := weights.SignalByName(ch.Name)
			if !ok {
				continue
			}
			c.Signal = sig
		case weights.ChangeBucket:
			lv, err := weights.ParseLevel(ch.Name)
			if err != nil {
				continue
			}
			c.Edge = lv
		default:
			continue
		}
		if !slices.ContainsFunc(known, c.SameKnob) && !slices.ContainsFunc(out, c.SameKnob) {
			out = append(out, c)
		}
	}
	return out
}

// ChangeBranch names the branch of the change proposal p makes: the parent version and a hash of what
// the review is and the weights it makes active. A night whose evidence grew proposes the same change
// under a new proposal id, and finds the branch (and its open pull request) it opened before.
func ChangeBranch(p *store.Proposal, review string) string {
	sig, bkt, cost := store.WeightsJSON(&p.Candidate)
	data, err := json.Marshal(struct {
		Review                 string
		Parent                 int
		Signals, Buckets, Cost store.NumberMap
	}{review, p.Parent, sig, bkt, cost})
	if err != nil {
		panic(err) // numbers and strings only
	}
	sum := sha256.Sum256(data)
	return BranchPrefix + weights.VersionName(p.Parent) + "-" + hex.EncodeToString(sum[:])[:12]
}

// changeBranchName matches the names ChangeBranch gives.
var changeBranchName = regexp.MustCompile(`^` + regexp.QuoteMeta(BranchPrefix) + `v[0-9]{4,}-[0-9a-f]{12}$`)

// IsChangeBranch says whether name is one ChangeBranch could give (a --declined name that is not can
// never match a night's change).
func IsChangeBranch(name string) bool { return changeBranchName.MatchString(name) }

// keptChange is the proposal and pull request body the branch tip old holds when it makes the change
// named branch on base: its one parent is base, its commit names a proposal (the "Proposal:" line
// commitMessage writes) whose file on the branch matches its id and makes that change, the body is
// there, and the tree is what a night writes on base: it changes regular files under the store, the
// fixtures and the reports only, its store is an append-only extension of the base's
// (store.CheckExtension) and the one version it adds is the proposal's candidate. Anything else (a
// hand-pushed commit, a file over its limit) is rebuilt: the branch is PR-controlled
// (docs/decisions.md#hostile-files-issue-25).
func keptChange(repo gitcmd.Repo, old, base, weightsRel, fixturesRel, reportsRel, branch, review string) (*store.Proposal, []byte, bool) {
	if parents, err := repo.Line("rev-list", "--parents", "-n", "1", old); err != nil || parents != old+" "+base {
		return nil, nil, false // a merge commit brings another history in with the change
	}
	id, ok := committedProposal(repo, old)
	if !ok {
		return nil, nil, false
	}
	data, ok, err := repo.Show(old, path.Join(weightsRel, store.ProposalsDir, id+".json"), regular.ProposalFile)
	if err != nil || !ok {
		return nil, nil, false
	}
	p, err := store.ParseProposal(id+".json", data)
	if err != nil || p.ID != id || ChangeBranch(p, review) != branch {
		return nil, nil, false
	}
	body, ok, err := repo.Show(old, path.Join(reportsRel, id+".pr.md"), regular.ReportFile)
	if err != nil || !ok {
		return nil, nil, false
	}
	changes, ok := nightTree(repo, old, base, []string{weightsRel, fixturesRel, reportsRel})
	if !ok {
		return nil, nil, false
	}
	ext, ok := extendsWith(repo, old, base, weightsRel, p)
	if !ok || !onlyNightFiles(changes, weightsRel, fixturesRel, reportsRel, ext, id) || !onlyHarvested(repo, old, fixturesRel, changes, ext.harvested) {
		return nil, nil, false
	}
	// The body goes to a pull request as the night's own would: without escape sequences
	// (docs/decisions.md#hostile-files-issue-25), whatever was pushed.
	return p, []byte(textfmt.Markdown(string(body))), true
}

// treeChange is one path a branch tip changes from its base (git diff-tree --raw).
type treeChange struct {
	name  string
	added bool // the base has no such path
}

// maxTreeDiff bounds the raw diff of a kept branch against its base: a night adds a version, the log, a
// proposal, its report input, reports and harvested fixtures, far from a megabyte of paths.
const maxTreeDiff = 1 << 20

// nightTree lists the paths old changes from base when each lies under one of dirs and is a regular file
// there: what a night's `add --all` of its three directories can write. A night deletes nothing, so a
// deleted path (a suite fixture removed, say) is not a night's tree.
func nightTree(repo gitcmd.Repo, old, base string, dirs []string) ([]treeChange, bool) {
	out, err := repo.RunLimit(maxTreeDiff, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", base, old)
	if err != nil {
		return nil, false
	}
	var changes []treeChange
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		meta, name := strings.Fields(strings.TrimPrefix(fields[i], ":")), fields[i+1]
		if len(meta) < 5 {
			return nil, false
		}
		if mode := meta[1]; mode != "100644" && mode != "100755" {
			return nil, false // a symlink, a submodule, a directory entry or a deletion is not a night's
		}
		under := false
		for _, d := range dirs {
			under = under || d == "." || strings.HasPrefix(name, d+"/")
		}
		if !under {
			return nil, false
		}
		changes = append(changes, treeChange{name: name, added: meta[0] == "000000"})
	}
	return changes, true
}

// onlyNightFiles reports whether the changes from base to the tip are files a night writes. Under the
// store: the new version (extendsWith checks it is the one), the log, its head, weights.sum, and the
// proposals the log's new entries name (a night may write two, the evolve step's and the watch's
// rollback), each under the id its content gives, with the input its entry logged. Under the reports:
// those proposals' reports and charts, and the body of the one the commit names (id). The fixtures are
// onlyHarvested's. A change belongs to the most specific of the three directories (a reports directory
// inside the store is the reports'); one at the repository's root holds what the others do not (the
// three are different paths: NightlyBranch refuses the same path twice). A branch that also held a
// committed .pending.json, .lock, nightly cache, another proposal or report was kept as the night's
// own, under its author (the reviews of the pull-request loop), though verify --base fails some of it
// and a merged cache dirties every checkout after.
func onlyNightFiles(changes []treeChange, weightsRel, fixturesRel, reportsRel string, ext extension, id string) bool {
	type dir struct {
		rel  string
		kind int
	}
	const fixturesKind, storeKind, reportsKind = 0, 1, 2
	dirs := []dir{{fixturesRel, fixturesKind}, {weightsRel, storeKind}, {reportsRel, reportsKind}}
	specificity := func(rel string) int {
		if rel == "." {
			return -1
		}
		return len(rel)
	}
	slices.SortStableFunc(dirs, func(a, b dir) int { return specificity(b.rel) - specificity(a.rel) })
	for _, c := range changes {
		kind, rel := -1, ""
		for _, d := range dirs {
			if d.rel == "." {
				kind, rel = d.kind, c.name
				break
			}
			if r, ok := strings.CutPrefix(c.name, d.rel+"/"); ok {
				kind, rel = d.kind, r
				break
			}
		}
		switch kind {
		case fixturesKind:
			continue
		case storeKind:
			if !nightStoreFile(rel, ext) {
				return false
			}
		case reportsKind:
			m := nightReport.FindStringSubmatch(rel)
			if m == nil {
				return false
			}
			if reportID, bodyID := m[1], m[2]; bodyID != "" && bodyID != id {
				return false // one body, of the proposal the commit names
			} else if _, logged := ext.proposals[reportID]; reportID != "" && !logged {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// nightStoreFile says whether rel, a file of the store at the tip, is one a night writes (ext).
func nightStoreFile(rel string, ext extension) bool {
	switch dir, base := path.Split(rel); {
	case dir == "" && (base == store.LogFile || base == store.HeadFile || base == store.SumFile):
		return true
	case dir == "":
		_, ok := store.VersionFileName(base)
		return ok
	case dir == store.ProposalsDir+"/"+store.InputsDir+"/":
		id, _ := strings.CutSuffix(base, ".toml")
		sha, logged := ext.proposals[id]
		sum := sha256.Sum256(ext.store[rel])
		return logged && sha != "" && hex.EncodeToString(sum[:]) == sha
	case dir == store.ProposalsDir+"/":
		id, ok := strings.CutSuffix(base, ".json")
		if _, logged := ext.proposals[id]; !ok || !logged {
			return false
		}
		p, err := store.ParseProposal(base, ext.store[rel])
		return err == nil && p.ID == id // a copy under another name is not the night's
	}
	return false
}

// nightReport matches the report files a night writes: a proposal's EVAL report and its charts
// (report.ProposalBase: proposal-<id>.md, proposal-<id>-loss.svg, -decision.svg; the id is the first
// group) and a pull request body (<id>.pr.md; the second group). TestNightReportNamesTheReportsFiles
// keeps it equal to report.ProposalBase.
var nightReport = regexp.MustCompile(`^(?:proposal-(p-[0-9a-f]{12})(?:\.md|-[a-z]+\.svg)|(p-[0-9a-f]{12})\.pr\.md)$`)

// onlyHarvested reports whether the changes under the fixtures directory are exactly the fixtures the
// branch's apply harvested, each new and with the content its log entry records: a night never
// edits a fixture (store.Apply never overwrites one), so anything else under it was pushed.
func onlyHarvested(repo gitcmd.Repo, old, fixturesRel string, changes []treeChange, harvested map[string]string) bool {
	seen := 0
	for _, c := range changes {
		rel, ok := strings.CutPrefix(c.name, fixturesRel+"/")
		if fixturesRel == "." {
			rel, ok = c.name, true
		}
		want, harvest := harvested[rel]
		switch {
		case !ok:
			continue
		case !harvest || !c.added:
			return false
		}
		data, ok, err := repo.Show(old, c.name, regular.FixtureFile)
		if err != nil || !ok {
			return false
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != want {
			return false
		}
		seen++
	}
	return seen == len(harvested)
}

// extendsWith reports whether the store at old is an append-only extension of the store at base that
// adds one version, p's candidate, and gives the fixtures its added entries harvested.
func extendsWith(repo gitcmd.Repo, old, base, weightsRel string, p *store.Proposal) (extension, bool) {
	from, err := snapshotAt(repo, base, weightsRel)
	if err != nil {
		return extension{}, false
	}
	to, err := snapshotAt(repo, old, weightsRel)
	if err != nil || len(store.CheckExtension(from, to)) > 0 {
		return extension{}, false
	}
	added := 0
	for name, data := range to {
		if _, inBase := from[name]; inBase || strings.Contains(name, "/") || !strings.HasSuffix(name, ".toml") {
			continue
		}
		w, err := weights.Parse(name, data)
		if err != nil || len(store.Changes(&p.Candidate, &w)) > 0 {
			return extension{}, false
		}
		added++
	}
	return extension{harvested: store.HarvestAdded(from, to), proposals: store.ProposalsAdded(from, to), store: to}, added == 1
}

// extension is what a branch's store adds to its base's, as its log says: the fixtures harvested (path →
// sha256), the proposals its entries name (id → the sha256 of their logged input), and the store at the
// tip.
type extension struct {
	harvested, proposals map[string]string
	store                store.Snapshot
}

// committedProposal is the proposal id the "Proposal:" line of commit's message names (commitMessage
// writes it), when it has a proposal id's form.
func committedProposal(repo gitcmd.Repo, commit string) (string, bool) {
	size, err := repo.Line("cat-file", "-s", commit)
	if n, perr := strconv.Atoi(size); err != nil || perr != nil || n > 1<<20 {
		return "", false // a commit object this large was not written by tune
	}
	msg, err := repo.Line("show", "-s", "--format=%B", commit)
	if err != nil {
		return "", false
	}
	id := ""
	for _, l := range strings.Split(msg, "\n") {
		if v, ok := strings.CutPrefix(l, "Proposal: "); ok {
			id = strings.TrimSpace(v)
		}
	}
	return id, store.ValidProposalID(id)
}

// staleBranches are tune's branches not merged into base (superseded's) made on a version that is no
// longer the active one in inner's store.
func staleBranches(repo gitcmd.Repo, base, weightsRel string, inner Env) ([]string, error) {
	s, err := inner.OpenStore()
	if err != nil {
		return nil, err
	}
	active, err := s.ActiveVersion()
	if err != nil {
		return nil, err
	}
	all, err := superseded(repo, base, "", weightsRel)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(name string) bool {
		return strings.HasPrefix(name, BranchPrefix+weights.VersionName(active)+"-")
	}), nil
}

// superseded lists the other branches of tune's (a name ChangeBranch gives, a tip that names its
// proposal) not merged into base: neither is their tip an ancestor of base, nor does base hold the
// proposal their commit applied (a squash or rebase merge copies the commit's files, not the commit).
// A person's branch under tune/ is never listed: the recipes close the request of every branch listed
// and delete it.
func superseded(repo gitcmd.Repo, base, branch, weightsRel string) ([]string, error) {
	out, err := repo.Line("for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads/"+BranchPrefix)
	if err != nil {
		return nil, err
	}
	list := []string{}
	for _, l := range strings.Split(out, "\n") {
		name, tip, ok := strings.Cut(l, " ")
		if !ok || name == branch || !IsChangeBranch(name) {
			continue // a name tune never gives is a person's branch: the recipe would close its request and delete it (the review of the pull-request loop)
		}
		if _, err := repo.Run("merge-base", "--is-ancestor", tip, base); err == nil {
			continue // merged: nothing to close
		}
		id, ok := committedProposal(repo, tip)
		if !ok {
			continue // no proposal named by its tip: not a commit of tune's, so not tune's to close
		}
		// The same proposal file (the same blob) on the branch and on the base: a commit that only
		// names a merged proposal is not that proposal's merge (the ninth review).
		file := path.Join(weightsRel, store.ProposalsDir, id+".json")
		onBase, err1 := repo.Line("rev-parse", "--verify", "--quiet", base+":"+file)
		onTip, err2 := repo.Line("rev-parse", "--verify", "--quiet", tip+":"+file)
		if err1 == nil && err2 == nil && onBase != "" && onBase == onTip {
			continue // squashed or rebased in
		}
		list = append(list, name)
	}
	return list, nil
}

func titleOf(p *store.Proposal, res *NightlyResult) string {
	var changes []string
	for _, st := range p.Steps {
		if !st.Decision.Applicable() {
			continue
		}
		changes = append(changes, st.Label())
	}
	what := strings.Join(changes, ", ")
	if res.Review == ReviewRollback {
		return fmt.Sprintf("tune: roll back %s (%s): %s", weights.VersionName(p.Parent), p.ID, what)
	}
	return fmt.Sprintf("tune: weights change %s on %s: %s", p.ID, weights.VersionName(p.Parent), what)
}

func commitMessage(p *store.Proposal, res *NightlyResult, b *BranchResult) string {
	return fmt.Sprintf("%s\n\nWritten by tune nightly --branch: the proposal applied as tune apply applies it (the new\nversion, the evolution log with its ledger, weights.sum, the harvested fixtures), its EVAL report\nand the pull request body (%s). Merging this commit makes the change active.\n\nProposal: %s\nReview: %s\n",
		p.Reason, b.BodyPath, p.ID, res.Review)
}

func writeBody(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, atomicfile.Public)
}

// repoPath is path relative to the repository root top (slash-separated), or an error when it lies
// outside the repository.
func repoPath(top, path string) (string, error) {
	real, err := existingReal(path)
	if err != nil {
		return "", err
	}
	abs := filepath.Join(real.existing, real.rest)
	rel, err := filepath.Rel(top, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("--branch: %s lies outside the repository %s: the branch can only hold files of the repository", path, top)
	}
	return filepath.ToSlash(rel), nil
}

// realDir is a path's real form split at its nearest existing ancestor: existing with symbolic links
// resolved, rest the part below it that does not exist yet (a reports directory, the DIR of tune init).
type realDir struct{ existing, rest string }

func existingReal(path string) (realDir, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return realDir{}, err
	}
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return realDir{existing: real, rest: rest}, nil
		} else if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(p) == p {
			return realDir{}, err
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

func inTree(wt, rel string) string { return filepath.Join(wt, filepath.FromSlash(rel)) }

// carryStates copies the nightly states (the detection's and the watch's) from one weights directory's
// cache to another's, through the store's bounded readers and its cache writer: a state is a cache, so
// one that cannot be read or written is left behind, and a hostile one is refused by the night that
// reads it, as anywhere (its key and byte checks).
func carryStates(from, to string) {
	if data := store.ReadDetectState(from); data != nil {
		_ = store.WriteDetectState(to, data)
	}
	if data := store.ReadWatchState(from); data != nil {
		_ = store.WriteWatchState(to, data)
	}
}

func hasVersionFile(files []string) bool {
	for _, f := range files {
		name := f[strings.LastIndex(f, "/")+1:]
		if _, err := weights.ParseVersionName(strings.TrimSuffix(name, ".toml")); err == nil && strings.HasSuffix(name, ".toml") {
			return true
		}
	}
	return false
}
