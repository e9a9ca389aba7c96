package app

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ldd-tools/tune"
	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/explore"
	"github.com/ldd-tools/tune/internal/watch"
	"go.yaml.in/yaml/v3"
)

// TestConfigTemplateKeys uncomments every "# key = value" line of the tune.toml init writes and loads
// it as the project config: each key must exist and each shown value must be the default in code.
func TestConfigTemplateKeys(t *testing.T) {
	key := regexp.MustCompile(`^# (\[\w+\]|\w+ = \S+)`)
	var b strings.Builder
	n := 0
	for _, l := range strings.Split(ConfigTemplate, "\n") {
		if m := key.FindStringSubmatch(l); m != nil {
			b.WriteString(m[1] + "\n")
			n++
		}
	}
	if n < 3 {
		t.Fatalf("template has %d keys:\n%s", n, ConfigTemplate)
	}
	path := filepath.Join(t.TempDir(), "tune.toml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LoopConfig(Env{Config: path}, EvolveOptions{})
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if got.MaxSteps != evolve.DefaultMaxSteps || got.StallBound != evolve.DefaultStallBound || got.ParityBudget != evolve.DefaultParityBudget {
		t.Errorf("template values %+v are not the defaults", got)
	}
	cfg, err := readConfig(Env{Config: path}, "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Watch != watch.DefaultConfig {
		t.Errorf("template [watch] %+v is not watch.DefaultConfig %+v", cfg.Watch, watch.DefaultConfig)
	}
	if want := (explore.Config{Margin: explore.DefaultMargin}); cfg.Explore != want || cfg.Explore.On() {
		t.Errorf("template [explore] %+v is not the default %+v (off)", cfg.Explore, want)
	}
	// Every key the config takes is in the template: walk the toml tags of the config struct.
	for _, k := range tomlKeys(reflect.TypeOf(evolveConfig{}), "") {
		table, key, _ := strings.Cut(k, ".")
		if !regexp.MustCompile(`(?s)# \[` + table + `\].*\n# ` + key + ` = `).MatchString(ConfigTemplate) {
			t.Errorf("tune.toml template lacks %s", k)
		}
	}
}

// tomlKeys lists the dotted toml keys of a config struct ("evolve.max_steps").
func tomlKeys(typ reflect.Type, prefix string) []string {
	var keys []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue // what parseConfig derives from the keys, not a key
		}
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if f.Type.Kind() == reflect.Struct {
			keys = append(keys, tomlKeys(f.Type, prefix+name+".")...)
			continue
		}
		keys = append(keys, prefix+name)
	}
	return keys
}

func TestInitRefusesAndForceKeepsTheStore(t *testing.T) {
	dir := t.TempDir()
	if _, err := Init(dir, false, ""); err != nil {
		t.Fatal(err)
	}
	// a store with history: a second version and a log
	v1 := filepath.Join(dir, "weights", "v0001.toml")
	if err := os.WriteFile(filepath.Join(dir, "weights", "evolution.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v1, append([]byte("# edited by hand\n"), tune.ReferenceWeights...), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "tune.toml"))
	_, err := Init(dir, false, "")
	var ee *ExistsError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "weights store") {
		t.Fatalf("want a refusal naming the store, got %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tune.toml")); err == nil {
		t.Fatal("a refused init wrote tune.toml")
	}
	res, err := Init(dir, true, "")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(v1)
	if !strings.HasPrefix(string(data), "# edited by hand") {
		t.Error("--force rewrote the store's v0001.toml")
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "weights", "evolution.jsonl")); string(log) != "{}\n" {
		t.Error("--force touched the log")
	}
	if len(res.Kept) != 1 || len(res.Gitignore) != 0 {
		t.Errorf("result %+v: want the store kept and .gitignore already complete", res)
	}
	gi, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if strings.Count(string(gi), "weights/.lock\n") != 1 {
		t.Errorf(".gitignore entries repeated:\n%s", gi)
	}
}

// TestInitCIKeepsAnExistingProject: adding the pull-request recipe to a project that has a store writes
// the recipe and keeps tune.toml (reviewed settings) as it is; --force sets a changed tune.toml aside
// instead of losing it. Before, --ci refused every existing project and --force dropped its settings.
func TestInitCIKeepsAnExistingProject(t *testing.T) {
	dir := t.TempDir()
	if _, err := Init(dir, false, ""); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "tune.toml")
	reviewed := ConfigTemplate + "[evolve.drift_acknowledged]\nlayer-crossings = 4\n"
	if err := os.WriteFile(config, []byte(reviewed), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Init(dir, false, "cron")
	if err != nil {
		t.Fatalf("--ci on an existing project: %v", err)
	}
	if data, _ := os.ReadFile(config); string(data) != reviewed {
		t.Error("--ci rewrote tune.toml")
	}
	if _, err := os.Stat(filepath.Join(dir, "tune-nightly.sh")); err != nil || len(res.Written) != 0 || !slices.Equal(res.CI, []string{"tune-nightly.sh"}) {
		t.Errorf("--ci: result %+v, recipe %v: want only the recipe written", res, err)
	}
	if !slices.Equal(res.Kept, []string{"fixtures/", "tune.toml", "weights/"}) {
		t.Errorf("kept %v", res.Kept)
	}
	var ee *ExistsError
	if _, err := Init(dir, false, "cron"); !errors.As(err, &ee) || !strings.Contains(err.Error(), "tune-nightly.sh") {
		t.Errorf("--ci over an existing recipe: %v, want a refusal naming it", err)
	}
	if _, err := Init(dir, false, ""); !errors.As(err, &ee) {
		t.Errorf("init without --ci on an existing project: %v, want a refusal", err)
	}
	res, err = Init(dir, true, "")
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(config + ".old"); string(data) != reviewed || !slices.Contains(res.Written, "tune.toml.old") {
		t.Errorf("--force: tune.toml.old holds %q, written %v: want the reviewed file set aside", data, res.Written)
	}
	if data, _ := os.ReadFile(config); string(data) != ConfigTemplate {
		t.Error("--force did not restore the template")
	}
	// The template itself is not set aside again.
	os.Remove(config + ".old")
	if res, err = Init(dir, true, ""); err != nil || slices.Contains(res.Written, "tune.toml.old") {
		t.Errorf("--force over the template: %v, written %v", err, res.Written)
	}
	// A second set-aside keeps the first (the tenth review: it was overwritten).
	for i, body := range []string{"# first\n", "# second\n"} {
		if err := os.WriteFile(config, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Init(dir, true, ""); err != nil {
			t.Fatal(err)
		}
		name := []string{".old", ".old.1"}[i]
		if data, _ := os.ReadFile(config + name); string(data) != body {
			t.Errorf("set aside %d: tune.toml%s holds %q, want %q", i+1, name, data, body)
		}
	}
	// A tune.toml linked to a secret is moved aside as the link, never read into the project.
	secret := filepath.Join(t.TempDir(), "environ")
	if err := os.WriteFile(secret, []byte("GH_TOKEN=ghp_SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(config)
	if err := os.Symlink(secret, config); err != nil {
		t.Fatal(err)
	}
	if _, err := Init(dir, true, ""); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(config + ".old.2"); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the linked tune.toml set aside: %v %v, want the link itself", fi, err)
	}
	if data, _ := os.ReadFile(config); string(data) != ConfigTemplate {
		t.Error("--force over a link did not write the template")
	}
}

// A project in a subdirectory of its repository gets recipes whose steps run there: the workflow's
// cache and artifact paths, which GitHub and GitLab take from the repository root, name it too. The
// root's recipes stay the shipped files byte for byte (docs/nightly.md runs them as they are).
func TestInitCIInASubdirectory(t *testing.T) {
	gitInit := func(t *testing.T) string {
		repo := t.TempDir()
		cmd := exec.Command("git", "init", "-q", repo)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+repo)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("git init: %v %s", err, out)
		}
		real, err := filepath.EvalSymlinks(repo)
		if err != nil {
			t.Fatal(err)
		}
		return real
	}
	type job struct {
		Defaults struct {
			Run struct {
				WorkingDirectory string `yaml:"working-directory"`
			} `yaml:"run"`
		} `yaml:"defaults"`
		Steps []struct {
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	}
	var readYAML func(t *testing.T, p string, v any) []byte
	checkGitHub := func(t *testing.T, repo, sub string) {
		for _, name := range []string{"tune-nightly.yml", "tune-verify.yml"} {
			var w struct {
				Jobs map[string]job `yaml:"jobs"`
			}
			readYAML(t, filepath.Join(repo, ".github", "workflows", name), &w)
			if len(w.Jobs) != 1 {
				t.Fatalf("%s: %d jobs", name, len(w.Jobs))
			}
			for id, j := range w.Jobs {
				if j.Defaults.Run.WorkingDirectory != sub {
					t.Errorf("%s job %s: working-directory %q, want %s", name, id, j.Defaults.Run.WorkingDirectory, sub)
				}
				for _, s := range j.Steps {
					if p, ok := s.With["path"]; ok && !strings.HasPrefix(p, sub+"/") {
						t.Errorf("%s job %s: path %q is not under the project", name, id, p)
					}
				}
			}
		}
	}
	readYAML = func(t *testing.T, p string, v any) []byte {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, v); err != nil {
			t.Fatalf("%s: %v\n%s", p, err, data)
		}
		return data
	}

	// names YAML reads as a number, a null or nothing at all unquoted (the PR-loop review)
	for _, sub := range []string{"services/api", "1.10", "null", "@web", "-x/0x1F"} {
		t.Run("github "+sub, func(t *testing.T) {
			repo := gitInit(t)
			res, err := Init(filepath.Join(repo, filepath.FromSlash(sub)), false, "github")
			if err != nil {
				t.Fatal(err)
			}
			if res.Sub != sub {
				t.Errorf("Sub = %q, want %s", res.Sub, sub)
			}
			checkGitHub(t, repo, sub)
			if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "runs its steps in "+sub) }) {
				t.Errorf("notes %q: want the subdirectory named", res.Notes)
			}
		})
	}

	t.Run("gitlab", func(t *testing.T) {
		repo := gitInit(t)
		dir := filepath.Join(repo, "tools", "@ldd")
		if _, err := Init(dir, false, "gitlab"); err != nil {
			t.Fatal(err)
		}
		var g struct {
			Tune struct {
				BeforeScript []string `yaml:"before_script"`
			} `yaml:".tune"`
			Nightly struct {
				Cache     struct{ Paths []string } `yaml:"cache"`
				Artifacts struct{ Paths []string } `yaml:"artifacts"`
			} `yaml:"tune-nightly"`
		}
		readYAML(t, filepath.Join(repo, ".gitlab", "tune.gitlab-ci.yml"), &g)
		if n := len(g.Tune.BeforeScript); n == 0 || g.Tune.BeforeScript[n-1] != "cd -- tools/@ldd" {
			t.Errorf("before_script %q: want it to end in the project's directory", g.Tune.BeforeScript)
		}
		for _, p := range append(g.Nightly.Cache.Paths, g.Nightly.Artifacts.Paths...) {
			if !strings.HasPrefix(p, "tools/@ldd/") {
				t.Errorf("path %q is not under the project", p)
			}
		}
	})

	t.Run("root is the shipped file", func(t *testing.T) {
		repo := gitInit(t)
		res, err := Init(repo, false, "github")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(repo, ".github", "workflows", "tune-nightly.yml"))
		want, _ := fs.ReadFile(tune.CIRecipes(), "github-tune-nightly.yml")
		if res.Sub != "" || !bytes.Equal(got, want) {
			t.Errorf("at the root: Sub %q, recipe differs from docs/ci: %v", res.Sub, !bytes.Equal(got, want))
		}
	})

	// The cron script runs in its own directory (cd "$(dirname "$0")"), so it must be the project's,
	// whatever DIR's form: relative from a sibling directory, or "." inside the project (the first
	// review of init: it landed beside the project, or outside the repository).
	t.Run("cron with a relative DIR", func(t *testing.T) {
		repo := gitInit(t)
		if err := os.MkdirAll(filepath.Join(repo, "tools"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Chdir(filepath.Join(repo, "tools"))
		res, err := Init(filepath.Join("..", "services", "api"), false, "cron")
		if err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(repo, "services", "api", "tune-nightly.sh")
		if _, err := os.Stat(want); err != nil || !slices.Equal(res.CI, []string{"services/api/tune-nightly.sh"}) {
			t.Errorf("the script: %v, CI %q: want it in the project, %s", err, res.CI, want)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(repo), "services")); err == nil {
			t.Error("init wrote outside the repository")
		}
		// What to commit, as git add takes it from here.
		if want := []string{"../services/api/tune.toml", "../services/api/weights/", "../services/api/fixtures/", "../services/api/.gitignore", "../services/api/tune-nightly.sh"}; !slices.Equal(res.Commit, want) {
			t.Errorf("commit %q, want %q", res.Commit, want)
		}
		t.Chdir(filepath.Join(repo, "services", "api"))
		os.Remove(want)
		if res, err = Init(".", false, "cron"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(want); err != nil || !slices.Equal(res.CI, []string{"services/api/tune-nightly.sh"}) {
			t.Errorf("from inside the project: %v, CI %q", err, res.CI)
		}
		if _, err := os.Stat(filepath.Join(repo, "tune-nightly.sh")); err == nil {
			t.Error("the script went to the repository root")
		}
	})

	// DIR through a link: the recipes at the repository root are named from the working directory, not
	// by ".." after the link's name, which leaves the real tree (the re-review).
	t.Run("github through a linked DIR", func(t *testing.T) {
		repo := gitInit(t)
		for _, d := range []string{"proj", "other"} {
			if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		link := filepath.Join(t.TempDir(), "plink")
		if err := os.Symlink(filepath.Join(repo, "proj"), link); err != nil {
			t.Fatal(err)
		}
		t.Chdir(filepath.Join(repo, "other"))
		res, err := Init(link, false, "github")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Commit {
			if strings.Contains(c, ".github") && c != "../.github/workflows/tune-nightly.yml" && c != "../.github/workflows/tune-verify.yml" {
				t.Errorf("commit names the recipe %s, want it from the working directory (../.github/…)", c)
			}
		}
	})

	t.Run("a name the recipe cannot carry", func(t *testing.T) {
		repo := gitInit(t)
		dir := filepath.Join(repo, `a"$(x)`)
		_, err := Init(dir, false, "github")
		if err == nil || !strings.Contains(err.Error(), "cannot name safely") {
			t.Fatalf("Init in %q: %v, want a refusal", dir, err)
		}
		if _, err := os.Stat(filepath.Join(repo, ".github")); err == nil {
			t.Error("a refused init wrote the workflows")
		}
		if _, err := os.Stat(filepath.Join(dir, "tune.toml")); err == nil {
			t.Error("a refused init wrote tune.toml")
		}
	})
}

// A .gitignore that is a link (or a FIFO) is refused before anything is written: init would read its
// target into the project's .gitignore and ask for it to be committed (the first review of init put
// /proc/self/environ there).
func TestInitRefusesALinkedGitignore(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "environ")
	if err := os.WriteFile(secret, []byte("GH_TOKEN=ghp_SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(secret, filepath.Join(dir, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	_, err := Init(dir, false, "")
	if err == nil || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), "weights/.lock") {
		t.Fatalf("Init with a linked .gitignore: %v, want a refusal naming the link and the lines to add", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tune.toml")); err == nil {
		t.Error("a refused init wrote tune.toml")
	}
	if data, _ := os.ReadFile(secret); string(data) != "GH_TOKEN=ghp_SECRET\n" {
		t.Errorf("the link's target changed: %q", data)
	}
}
