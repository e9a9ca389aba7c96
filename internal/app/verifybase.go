package app

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/ldd-tools/tune/internal/gitcmd"
	"github.com/ldd-tools/tune/internal/store"
)

// VerifyBase checks that the store in weightsDir (the work tree, as a pull request's checkout holds
// HEAD) is an append-only extension of the same store at the git revision rev (store.CheckExtension):
// the check a pull request runs against its base branch. It returns the commit rev names and the
// problems found.
func VerifyBase(weightsDir, rev string) (commit string, problems []store.Problem, err error) {
	top, err := gitcmd.Toplevel(weightsDir)
	if err != nil {
		return "", nil, fmt.Errorf("--base needs the weights store in a git work tree: %w", err)
	}
	rel, err := repoPath(top, weightsDir)
	if err != nil {
		return "", nil, err
	}
	repo := gitcmd.Repo{Dir: top}
	if commit, err = repo.Commit(rev); err != nil || commit == "" {
		return "", nil, fmt.Errorf("--base %s: not a commit of the repository at %s (fetch it first: git fetch origin %s)", rev, top, rev)
	}
	base, err := snapshotAt(repo, commit, rel)
	if err != nil {
		return "", nil, err
	}
	head, err := store.SnapshotDir(weightsDir)
	if err != nil {
		return "", nil, err
	}
	problems = store.CheckExtension(base, head)
	committed, err := committedLocalFiles(repo, rel)
	if err != nil {
		return "", nil, err
	}
	return commit, append(problems, committed...), nil
}

// committedLocalFiles reports the store's files of one machine that HEAD commits: the nightly caches
// (weights/.cache: the states of this machine's logs, rewritten every night, so a checkout that tracks
// them is dirty after each night) and storeLocalFiles (a committed .pending.json reads as an interrupted
// operation in every clone). tune never commits them (the branch night removes the cache before it adds
// the store); a pull request can.
func committedLocalFiles(repo gitcmd.Repo, rel string) ([]store.Problem, error) {
	if head, err := repo.Ref("HEAD"); err != nil || head == "" {
		return nil, err // an unborn HEAD commits nothing
	}
	files, err := repo.Files("HEAD", rel)
	if err != nil {
		return nil, err
	}
	var out []store.Problem
	cacheSeen := false
	for _, f := range files {
		name := strings.TrimPrefix(f, rel+"/")
		switch {
		case name == store.CacheDir || strings.HasPrefix(name, store.CacheDir+"/"): // a file or a link there too
			if !cacheSeen {
				cacheSeen = true
				out = append(out, store.Problem{Kind: store.ProblemCommitted, File: store.CacheDir + "/",
					Message: fmt.Sprintf("this machine's nightly states, rewritten every night, never belong in a commit; git rm -r --cached %s", path.Join(rel, store.CacheDir))})
			}
		case slices.Contains(storeLocalFiles, name):
			out = append(out, store.Problem{Kind: store.ProblemCommitted, File: name,
				Message: fmt.Sprintf("a lock or marker file of one run on one machine never belongs in a commit; git rm --cached %s", path.Join(rel, name))})
		}
	}
	return out, nil
}

// snapshotAt reads the store under rel at commit: its version files, its log, its proposals and their
// saved report inputs.
func snapshotAt(repo gitcmd.Repo, commit, rel string) (store.Snapshot, error) {
	files, err := repo.Files(commit, rel)
	if err != nil {
		return nil, err
	}
	snap := store.Snapshot{}
	for _, f := range files {
		name := strings.TrimPrefix(f, rel+"/")
		dir, file := path.Split(name)
		keep := (dir == "" && (file == store.LogFile || strings.HasSuffix(file, ".toml"))) ||
			(dir == store.ProposalsDir+"/" && strings.HasSuffix(file, ".json")) ||
			(dir == store.ProposalsDir+"/"+store.InputsDir+"/" && strings.HasSuffix(file, ".toml"))
		if !keep {
			continue
		}
		data, _, err := repo.Show(commit, f, store.SnapshotLimit(name))
		if err != nil {
			return nil, err
		}
		snap[name] = data
	}
	return snap, nil
}
