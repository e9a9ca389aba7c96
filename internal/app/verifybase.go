package app

import (
	"fmt"
	"path"
	"strings"

	"github.com/ldd-tools/tune/internal/gitcmd"
	"github.com/ldd-tools/tune/internal/regular"
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
	return commit, store.CheckExtension(base, head), nil
}

// snapshotAt reads the store under rel at commit: its version files, its log and its proposals.
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
			(dir == store.ProposalsDir+"/" && strings.HasSuffix(file, ".json"))
		if !keep {
			continue
		}
		limit := regular.WeightsFile
		switch {
		case file == store.LogFile:
			limit = regular.StoreLog
		case dir != "":
			limit = regular.ProposalFile
		}
		data, _, err := repo.Show(commit, f, limit)
		if err != nil {
			return nil, err
		}
		snap[name] = data
	}
	return snap, nil
}
