package app

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/ldd-tools/tune"
	"github.com/ldd-tools/tune/internal/atomicfile"
	"github.com/ldd-tools/tune/internal/exitcode"
	"github.com/ldd-tools/tune/internal/gitcmd"
	"github.com/ldd-tools/tune/internal/project"
	"github.com/ldd-tools/tune/internal/regular"
	"github.com/ldd-tools/tune/internal/store"
)

// ConfigTemplate is the tune.toml `tune init` writes: every key the config takes, commented out, with
// its default. TestConfigTemplateKeys decodes it uncommented, so a key that stops existing fails a test.
const ConfigTemplate = `# tune.toml: this directory is a tune project. tune finds this file by walking up from the working
# directory (as git finds .git) and uses weights/, fixtures/ and reports/ next to it; the flags
# --weights-dir, --fixtures-dir, --reports-dir and the TUNE_WEIGHTS_DIR, TUNE_FIXTURES_DIR and
# TUNE_REPORTS_DIR variables still win. Every key is optional; the values shown are the defaults.

# [evolve]
# The loop of tune evolve and tune nightly; --max-steps and --stall-bound win over these.
# max_steps = 8     # cap on steps; reaching it while regressions remain escalates (exit 3)
# stall_bound = 2   # consecutive steps without progress before the loop stops as stalled
# parity_budget = 0.03   # the most too-high cost (levels up × cost.too_high / prompts) a change may add
#                        # on the 255 parity prompts; a dearer change is reverted
# holdout = "veto"       # "veto": the frozen holdout's loss must not rise; "priced": the history's
#                        # expected gain must pay for it, as for the fixture suite
# drift_acknowledged = {}  # knobs a human left at the drift bound after its page, each at its value
#                          # in the active weights (the page names it), e.g. { layer-crossings = 4 }: a
#                          # stop there ends the night without a page while the active knob holds that
#                          # value (docs/escalation.md)

# [watch]
# The verdicts of tune watch on an applied version (holding, too early, not helping, harmful).
# min_tasks = 10          # tasks the change moved (auto) before "holding" instead of "too early"
# overkill_bound = 0.1    # margin over the rate before that the harm tests allow the moved tasks
# min_recurrences = 2     # lifted tasks that must still regress for "not helping"
# alpha = 0.05            # chance a test ever fires on a version that does what it should

# [explore]
# Off by default. tune score --log dispatches a recorded share of the tasks near a level's upper edge
# one level higher, so that tune explore can compare the two arms (a randomized comparison).
# share = 0      # probability that a near-edge task is raised (at most 0.2); 0 is off
# margin = 1     # score points below the next level's edge that count as near (a multiple of 0.5)
`

// storeLocalFiles are the store's lock and marker files: they belong to one run on one machine, never
// to version control (.gitignore's entries; verify --base fails a commit of one).
var storeLocalFiles = []string{store.LockFile, store.PendingFile, NightlyLockName}

// GitignoreEntries are the lines tune init adds to .gitignore: storeLocalFiles under weights/, and the
// lock of the project's trace log (tune score --log takes it beside the log, which is committed).
var GitignoreEntries = func() []string {
	out := make([]string, 0, len(storeLocalFiles)+1)
	for _, f := range storeLocalFiles {
		out = append(out, "weights/"+f)
	}
	return append(out, project.TraceLog+".lock")
}()

// InitResult is what `tune init` did.
type InitResult struct {
	Dir string `json:"dir"`
	// Written are the files written, relative to Dir, in order.
	Written []string `json:"written"`
	// Kept are the files left as they were: the store of an existing project (under --force, or --ci),
	// and under --ci its tune.toml and fixtures/ too.
	Kept []string `json:"kept"`
	// Gitignore lists the entries added to .gitignore (none when they were all there).
	Gitignore []string `json:"gitignore"`
	// Repo is the root of the git repository Dir lies in ("" when none); CI the recipe files --ci
	// wrote, relative to it; Commit what to commit, each path as `git add` takes it from the working
	// directory; Notes what else to do.
	Repo string   `json:"repo,omitempty"`
	CI   []string `json:"ci"`
	// Sub is the project's directory relative to Repo, slash-separated ("" at the root, or outside a
	// repository): where the --ci recipe runs its steps.
	Sub    string   `json:"subdir"`
	Commit []string `json:"commit"`
	Notes  []string `json:"notes"`
}

// CIKinds are the recipes `tune init --ci` writes: the file names under docs/ci and where they go,
// relative to the repository root.
var CIKinds = map[string][]struct{ Recipe, Path string }{
	"github": {{"github-tune-nightly.yml", ".github/workflows/tune-nightly.yml"}, {"github-tune-verify.yml", ".github/workflows/tune-verify.yml"}},
	"gitlab": {{"gitlab-tune-nightly.yml", ".gitlab/tune.gitlab-ci.yml"}},
	"cron":   {{"tune-nightly.sh", "tune-nightly.sh"}},
}

// CIKindNames are the values --ci takes, sorted (completion, and the usage error).
func CIKindNames() []string {
	names := make([]string, 0, len(CIKinds))
	for k := range CIKinds {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// ExistsError is init's refusal to overwrite: the files that are already there.
type ExistsError struct {
	Dir   string
	Files []string
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s already holds %s; tune init writes nothing over existing files (--force rewrites tune.toml and the fixtures, never the weights store)",
		e.Dir, strings.Join(e.Files, ", "))
}

// Init lays out a tune project in dir: weights/v0001.toml (the reference weights), the fixture suite
// and holdout the binary carries, tune.toml and the .gitignore entries. Without force it refuses when
// any of these files exists, except that ciKind on a project with a store adds the recipe (and what is
// missing) and keeps every existing file. With force it rewrites tune.toml (setting the old one aside
// as tune.toml.old) and the fixtures but never the weights store: when weights/ already holds a
// version, the store (its versions and its log) is kept as it is (docs/decisions.md#tune-init).
func Init(dir string, force bool, ciKind string) (*InitResult, error) {
	files := map[string][]byte{project.ConfigFile: []byte(ConfigTemplate), "weights/v0001.toml": tune.ReferenceWeights}
	err := fs.WalkDir(tune.Fixtures(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(tune.Fixtures(), p)
		files[path.Join("fixtures", p)] = data
		return err
	})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)

	res := &InitResult{Dir: dir, Written: []string{}, Kept: []string{}, Gitignore: []string{}, CI: []string{}, Commit: []string{}, Notes: []string{}}
	if err := checkGitignore(filepath.Join(dir, ".gitignore")); err != nil {
		return nil, err // before anything is written
	}
	ciFiles, err := res.ciFiles(ciKind)
	if err != nil {
		return nil, err
	}
	storeExists, err := hasVersions(filepath.Join(dir, "weights"))
	if err != nil {
		return nil, err
	}
	// --ci on a project that has a store adds the recipe and whatever else is missing: the project's
	// files stay as its pull requests left them (tune.toml holds reviewed settings).
	addRecipe := ciKind != "" && storeExists && !force
	var existing []string
	for _, n := range names {
		if storeExists && strings.HasPrefix(n, "weights/") {
			continue // named once below
		}
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(n))); err == nil {
			if addRecipe {
				res.Kept = appendOnce(res.Kept, keptName(n))
				continue
			}
			existing = append(existing, n)
		}
	}
	if storeExists && !force && !addRecipe {
		existing = append(existing, "a weights store (weights/v*.toml)")
	}
	for _, f := range ciFiles {
		if _, err := os.Lstat(f.abs); err == nil {
			existing = append(existing, f.abs)
		}
	}
	if len(existing) > 0 && !force {
		return nil, &ExistsError{Dir: dir, Files: existing}
	}
	for _, n := range names {
		if storeExists && strings.HasPrefix(n, "weights/") {
			res.Kept = appendOnce(res.Kept, "weights/")
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(n))
		if slices.Contains(res.Kept, keptName(n)) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if n == project.ConfigFile && force {
			// --force restores the template; the settings a reviewer put in the old file are set aside,
			// not lost (the drift acknowledgements, the parity budget, the holdout rule).
			if aside, err := setAside(p, files[n]); err != nil {
				return nil, err
			} else if aside != "" {
				res.Written = append(res.Written, aside)
				res.Notes = append(res.Notes, fmt.Sprintf("the previous %s is kept as %s: copy back the settings it held", project.ConfigFile, aside))
			}
		}
		if err := atomicfile.Write(p, files[n], 0o644); err != nil {
			return nil, err
		}
		res.Written = append(res.Written, n)
	}
	added, err := addGitignore(filepath.Join(dir, ".gitignore"), GitignoreEntries)
	if err != nil {
		return nil, err
	}
	res.Gitignore = added
	for _, f := range ciFiles {
		if err := os.MkdirAll(filepath.Dir(f.abs), 0o755); err != nil {
			return nil, err
		}
		if err := atomicfile.Write(f.abs, f.data, f.mode); err != nil {
			return nil, err
		}
		res.CI = append(res.CI, f.rel)
	}
	res.commitNote(ciKind)
	return res, nil
}

// keptName is how a kept project file is listed: the fixtures as their directory.
func keptName(n string) string {
	if strings.HasPrefix(n, "fixtures/") {
		return "fixtures/"
	}
	return n
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// setAside moves the file at p out of the way when it exists and is not want: to p + ".old", or
// ".old.1", ".old.2", … when that name is taken, so that no earlier set-aside file is lost. It returns
// the new name relative to p's directory ("" when nothing was set aside). A link, a FIFO or a device
// is moved as it is, never read: a tune.toml linked to /proc/self/environ would otherwise be copied,
// environment and tokens, into the project (the tenth review).
func setAside(p string, want []byte) (string, error) {
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", err
	case fi.Mode().IsRegular():
		data, err := regular.ReadLimitedNoFollow(p, regular.ConfigFile)
		var tooLarge *regular.TooLargeError
		if err != nil && !errors.As(err, &tooLarge) {
			return "", err
		}
		if err == nil && bytes.Equal(data, want) {
			return "", nil
		}
	case fi.IsDir():
		return "", fmt.Errorf("%s is a directory: tune init writes tune.toml there only when it is a file", p)
	}
	for n := 0; n < 1000; n++ {
		aside := p + ".old"
		if n > 0 {
			aside = fmt.Sprintf("%s.old.%d", p, n)
		}
		if _, err := os.Lstat(aside); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := os.Rename(p, aside); err != nil {
			return "", err
		}
		return filepath.Base(aside), nil
	}
	return "", fmt.Errorf("%s: no free name to set it aside as (%s.old … .old.999 are taken): move them, then run tune init --force again", p, filepath.Base(p))
}

type ciFile struct {
	rel, abs string
	data     []byte
	mode     os.FileMode
}

// ciFiles finds the repository Dir lies in and the recipe files --ci writes there.
func (res *InitResult) ciFiles(kind string) ([]ciFile, error) {
	// tune init DIR creates DIR: the repository and the real path are those of its nearest existing
	// ancestor, with the rest of DIR below it.
	real, err := existingReal(res.Dir)
	if err != nil {
		return nil, err
	}
	if top, err := gitcmd.Toplevel(real.existing); err == nil {
		res.Repo = top
		if rel, err := repoPath(top, res.Dir); err == nil && rel != "." {
			res.Sub = rel
		}
	}
	if kind == "" {
		return nil, nil
	}
	recipes, ok := CIKinds[kind]
	if !ok {
		return nil, exitcode.FlagErrorf("--ci %q: want github, gitlab or cron", kind)
	}
	root := res.Repo
	if root == "" {
		if kind != "cron" {
			return nil, fmt.Errorf("--ci %s: %s is not in a git repository (git init first: the recipe opens pull requests)", kind, res.Dir)
		}
		root = res.Dir
	}
	var out []ciFile
	for _, r := range recipes {
		data, err := fs.ReadFile(tune.CIRecipes(), r.Recipe)
		if err != nil {
			return nil, err
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(r.Path, ".sh") {
			mode = 0o755
		}
		path := r.Path
		if kind != "cron" {
			if data, err = res.inProjectDir(kind, r.Recipe, data); err != nil {
				return nil, err
			}
		} else if res.Repo != "" {
			// It runs in the project directory: SUB/ of the repository (res.Sub, found from the real
			// path, so a relative DIR or one through a link lands in the project, never beside it).
			path = filepath.Join(filepath.FromSlash(res.Sub), r.Path)
		}
		out = append(out, ciFile{rel: filepath.ToSlash(path), abs: filepath.Join(root, filepath.FromSlash(path)), data: data, mode: mode})
	}
	return out, nil
}

// safeSubdir is a project directory the recipes can name in a double-quoted YAML string and, after
// `cd --`, as one shell word. Any other name (quotes, $, spaces, control characters, a GitHub
// expression) is refused, so that no directory name turns into YAML or shell. The YAML values are
// quoted: `1.10`, `null` or `@web` unquoted would read as a number, a null or not at all (the PR-loop
// review).
var safeSubdir = regexp.MustCompile(`^[A-Za-z0-9._@+-]+(/[A-Za-z0-9._@+-]+)*$`)

// subEdit is one anchored edit of a shipped recipe for a project in a subdirectory of its repository:
// old must occur exactly once in the recipe, so that an edit of docs/ci that moves a line fails the
// tests instead of leaving a recipe that runs at the root.
type subEdit struct{ recipe, old, new string }

// subEdits are the edits --ci makes to the shipped recipes when the project is SUB/ of its repository:
// every step runs there (GitHub's job defaults, GitLab's before_script, which shares the script's
// shell), and the paths actions/cache, upload-artifact and GitLab's cache and artifacts take, which
// are relative to the repository root, start with SUB.
var subEdits = []subEdit{
	{"github-tune-nightly.yml", "    runs-on: ubuntu-latest\n", "    runs-on: ubuntu-latest\n    defaults: {run: {working-directory: \"SUB\"}}\n"},
	{"github-tune-nightly.yml", "with: {path: weights/.cache,", "with: {path: \"SUB/weights/.cache\","},
	{"github-tune-nightly.yml", "path: reports/evolve-state-*.json}", "path: \"SUB/reports/evolve-state-*.json\"}"},
	{"github-tune-verify.yml", "    runs-on: ubuntu-latest\n", "    runs-on: ubuntu-latest\n    defaults: {run: {working-directory: \"SUB\"}}\n"},
	{"gitlab-tune-nightly.yml", "gitlab.com/gitlab-org/cli/cmd/glab@latest\n", "gitlab.com/gitlab-org/cli/cmd/glab@latest\n    - cd -- SUB   # the project's directory in the repository\n"},
	{"gitlab-tune-nightly.yml", "paths: [weights/.cache/]", "paths: [\"SUB/weights/.cache/\"]"},
	{"gitlab-tune-nightly.yml", "paths: [reports/evolve-state-*.json, nightly.json]", "paths: [\"SUB/reports/evolve-state-*.json\", \"SUB/nightly.json\"]"},
}

// inProjectDir returns the recipe as --ci writes it: the shipped file when the project is the
// repository root, else with subEdits applied for res.Sub.
func (res *InitResult) inProjectDir(kind, recipe string, data []byte) ([]byte, error) {
	if res.Sub == "" {
		return data, nil
	}
	if !safeSubdir.MatchString(res.Sub) {
		return nil, fmt.Errorf("--ci %s: the project directory %q (in %s) has characters the recipe cannot name safely; move the project, or write the recipe by hand from docs/nightly.md with its steps run in that directory", kind, res.Sub, res.Repo)
	}
	s := string(data)
	for _, e := range subEdits {
		if e.recipe != recipe {
			continue
		}
		if n := strings.Count(s, e.old); n != 1 {
			return nil, fmt.Errorf("docs/ci/%s: %q occurs %d times, want once (the subdirectory edit of tune init --ci)", recipe, e.old, n)
		}
		s = strings.Replace(s, e.old, strings.ReplaceAll(e.new, "SUB", res.Sub), 1)
	}
	return []byte(s), nil
}

// commitNote says what to commit: the project's files and the recipes, never the lock files.
func (res *InitResult) commitNote(ciKind string) {
	// Every path as `git add` takes it from where init ran: the project's files and the recipes (at the
	// repository root, or in the project for cron) named from DIR as the user gave it.
	for _, f := range []string{project.ConfigFile, "weights/", "fixtures/", ".gitignore"} {
		p := filepath.ToSlash(filepath.Join(res.Dir, f))
		if strings.HasSuffix(f, "/") {
			p += "/"
		}
		res.Commit = append(res.Commit, p)
	}
	if res.Repo == "" {
		res.Notes = append(res.Notes, "not a git repository: the pull-request loop (tune nightly --branch, tune verify --base) needs one; git init, then commit the files above")
		return
	}
	projectDir := filepath.Join(res.Repo, filepath.FromSlash(res.Sub))
	for _, f := range res.CI {
		p := filepath.Join(res.Repo, filepath.FromSlash(f))
		// From DIR as the user named it, like the project's files; a path that leaves the project is
		// named from the working directory instead (DIR may be a link, and ".." after a link's name
		// leaves the real tree: the re-review).
		if rel, err := filepath.Rel(projectDir, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			p = filepath.Join(res.Dir, rel)
		} else if wd, err := os.Getwd(); err == nil {
			if real, err := filepath.EvalSymlinks(wd); err == nil {
				if r, err := filepath.Rel(real, p); err == nil {
					p = r
				}
			}
		}
		res.Commit = append(res.Commit, filepath.ToSlash(p))
	}
	res.Notes = append(res.Notes, "commit the files above (git add, git commit): tune nightly --branch builds on HEAD and refuses a project whose weights store is not committed; the lock files stay untracked (.gitignore)")
	if ciKind != "" {
		res.Notes = append(res.Notes, "the nightly reads the project's .ldd/trace.log from the checkout: commit it, or pass --logs GLOB in the recipe")
	}
	if res.Sub != "" && ciKind != "" && ciKind != "cron" {
		res.Notes = append(res.Notes, fmt.Sprintf("the project is not the repository root: the recipe runs its steps in %s (working-directory), and its cache and artifact paths start with it", res.Sub))
	}
	if ciKind == "gitlab" {
		if _, err := os.Stat(filepath.Join(res.Repo, ".gitlab-ci.yml")); err == nil {
			res.Notes = append(res.Notes, "add to .gitlab-ci.yml: include: [{local: .gitlab/tune.gitlab-ci.yml}]")
		} else {
			res.Notes = append(res.Notes, "create .gitlab-ci.yml with: include: [{local: .gitlab/tune.gitlab-ci.yml}]")
		}
	}
}

// hasVersions reports whether dir holds a weights version file (a store, with or without a log).
func hasVersions(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "v") && strings.HasSuffix(e.Name(), ".toml") {
			return true, nil
		}
	}
	return false, nil
}

// checkGitignore refuses a .gitignore that is not a regular file. Init reads it and writes it back with
// its entries added, and asks for it to be committed: a link would put its target's content (another
// project's file, /proc/self/environ) into the repository, and a FIFO would block.
func checkGitignore(path string) error {
	li, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := regular.Check(path, li); err != nil {
		return fmt.Errorf("%w: tune init adds its entries to a regular .gitignore only; make it one, or add these lines to what it points to: %s",
			err, strings.Join(GitignoreEntries, " "))
	}
	return nil
}

// addGitignore appends the entries .gitignore lacks (creating it) and returns them.
func addGitignore(path string, entries []string) ([]string, error) {
	data, err := regular.ReadLimitedNoFollow(path, regular.SmallText)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	added := []string{}
	var b bytes.Buffer
	b.Write(data)
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		b.WriteByte('\n')
	}
	for _, e := range entries {
		if !have[e] && !have["/"+e] {
			if len(added) == 0 {
				b.WriteString("# tune: lock and marker files of the weights store and the trace log\n")
			}
			b.WriteString(e + "\n")
			added = append(added, e)
		}
	}
	if len(added) == 0 {
		return added, nil
	}
	return added, atomicfile.Write(path, b.Bytes(), 0o644)
}
