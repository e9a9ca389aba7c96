package app

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ldd-tools/tune"
	"github.com/ldd-tools/tune/internal/atomicfile"
	"github.com/ldd-tools/tune/internal/project"
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

# [watch]
# The verdicts of tune watch on an applied version (holding, too early, not helping, harmful).
# min_tasks = 10          # tasks the change moved (auto) before "holding" instead of "too early"
# overkill_bound = 0.1    # margin over the rate before that the harm tests allow the moved tasks
# min_recurrences = 2     # lifted tasks that must still regress for "not helping"
# alpha = 0.05            # chance a test ever fires on a version that does what it should
`

// GitignoreEntries are the store's lock and marker files, which never belong in version control.
var GitignoreEntries = []string{
	"weights/" + store.LockFile,
	"weights/" + store.PendingFile,
	"weights/" + NightlyLockName,
}

// InitResult is what `tune init` did.
type InitResult struct {
	Dir string `json:"dir"`
	// Written are the files written, relative to Dir, in order.
	Written []string `json:"written"`
	// Kept are the files left as they were: the store of an existing project under --force.
	Kept []string `json:"kept"`
	// Gitignore lists the entries added to .gitignore (none when they were all there).
	Gitignore []string `json:"gitignore"`
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
// any of these files exists. With force it rewrites tune.toml and the fixtures but never the weights
// store: when weights/ already holds a version, the store (its versions and its log) is kept as it is
// (docs/decisions.md#tune-init).
func Init(dir string, force bool) (*InitResult, error) {
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

	res := &InitResult{Dir: dir, Written: []string{}, Kept: []string{}, Gitignore: []string{}}
	storeExists, err := hasVersions(filepath.Join(dir, "weights"))
	if err != nil {
		return nil, err
	}
	var existing []string
	for _, n := range names {
		if storeExists && strings.HasPrefix(n, "weights/") {
			continue // named once below
		}
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(n))); err == nil {
			existing = append(existing, n)
		}
	}
	if storeExists && !force {
		existing = append(existing, "a weights store (weights/v*.toml)")
	}
	if len(existing) > 0 && !force {
		return nil, &ExistsError{Dir: dir, Files: existing}
	}
	for _, n := range names {
		if storeExists && strings.HasPrefix(n, "weights/") {
			res.Kept = append(res.Kept, "weights/")
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
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
	return res, nil
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

// addGitignore appends the entries .gitignore lacks (creating it) and returns them.
func addGitignore(path string, entries []string) ([]string, error) {
	data, err := os.ReadFile(path)
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
				b.WriteString("# tune: lock and marker files of the weights store\n")
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
