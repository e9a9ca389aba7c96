package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/itchyny/gojq"
	"go.yaml.in/yaml/v3"

	"github.com/ldd-tools/tune"
)

// The recipes of docs/nightly.md are run by tests: the exit codes a scheduler sees with a stub tune here
// (fast, every code), and the whole pull-request loop with the real tune, a real git repository and a
// bare remote in testdata/script/nightly_recipes.txtar (through the recipe command, nightlyRecipe).

// nightlyDocBlocks returns the bodies of the ```lang blocks of docs/nightly.md, in order.
func nightlyDocBlocks(lang string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(repoRoot(), "docs", "nightly.md"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllSubmatch(data, -1) {
		out = append(out, string(m[1]))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("docs/nightly.md has no ```%s block", lang)
	}
	return out, nil
}

// workflowDoc is the part of a GitHub workflow or a GitLab CI file the recipes use.
type workflowDoc struct {
	Jobs map[string]struct {
		Steps []struct {
			Name string `yaml:"name"`
			If   string `yaml:"if"`
			Run  string `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// nightlyRecipe returns the shell script of a recipe of docs/nightly.md, as its runner runs it:
//
//	cron            the crontab script (the ```sh block)
//	github-evolve   the workflow's Evolve step; github-page and github-pr its page and Pull request steps
//	github-verify   the pull request check's Verify step
//	gitlab-nightly  the tune-nightly job's script, gitlab-verify the tune-verify job's (one shell, set -eo pipefail, as the runner runs it)
func nightlyRecipe(name string) (string, error) {
	if name == "cron" {
		sh, err := nightlyDocBlocks("sh")
		if err != nil {
			return "", err
		}
		return sh[0], nil
	}
	blocks, err := nightlyDocBlocks("yaml")
	if err != nil {
		return "", err
	}
	if len(blocks) != 3 {
		return "", fmt.Errorf("docs/nightly.md has %d yaml blocks, want 3 (the nightly and verify workflows, the GitLab jobs)", len(blocks))
	}
	step := func(block, job, step string) (string, error) {
		var w workflowDoc
		if err := yaml.Unmarshal([]byte(block), &w); err != nil {
			return "", err
		}
		for _, s := range w.Jobs[job].Steps {
			if s.Name == step {
				return s.Run, nil
			}
		}
		return "", fmt.Errorf("workflow job %s has no step %q", job, step)
	}
	gitlab := func(job string) (string, error) {
		var g map[string]struct {
			Script []string `yaml:"script"`
		}
		if err := yaml.Unmarshal([]byte(blocks[2]), &g); err != nil {
			return "", err
		}
		if len(g[job].Script) == 0 {
			return "", fmt.Errorf("the GitLab block has no job %s with a script", job)
		}
		return "set -eo pipefail\n" + strings.Join(g[job].Script, "\n") + "\n", nil
	}
	switch name {
	case "github-evolve":
		return step(blocks[0], "nightly", "Evolve")
	case "github-page":
		return step(blocks[0], "nightly", "Page on escalation")
	case "github-pr":
		return step(blocks[0], "nightly", "Pull request")
	case "github-verify":
		return step(blocks[1], "verify", "Verify")
	case "gitlab-nightly":
		return gitlab("tune-nightly")
	case "gitlab-verify":
		return gitlab("tune-verify")
	}
	return "", fmt.Errorf("no recipe %q", name)
}

// TestNightlyRecipesAreTheShippedFiles: what tune init --ci writes (docs/ci, embedded) is what
// docs/nightly.md shows, byte for byte, so the tests of the doc's recipes test what users get.
func TestNightlyRecipesAreTheShippedFiles(t *testing.T) {
	var blocks []string
	for _, lang := range []string{"sh", "yaml"} {
		b, err := nightlyDocBlocks(lang)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, b...)
	}
	err := fs.WalkDir(tune.CIRecipes(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(tune.CIRecipes(), p)
		if err != nil {
			return err
		}
		for _, b := range blocks {
			if b == string(data) {
				return nil
			}
		}
		t.Errorf("docs/ci/%s is not a block of docs/nightly.md", p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// every recipe parses and names its steps
	for _, r := range []string{"cron", "github-evolve", "github-page", "github-pr", "github-verify", "gitlab-nightly", "gitlab-verify"} {
		if _, err := nightlyRecipe(r); err != nil {
			t.Error(err)
		}
	}
}

// TestNightlyCrontabLine: the cron line has five time fields, no % (cron turns it into a newline) and
// runs the script.
func TestNightlyCrontabLine(t *testing.T) {
	cron, err := nightlyDocBlocks("cron")
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(cron[0], "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			line = l
		}
	}
	fields := regexp.MustCompile(`^(\S+\s+){5}`).FindString(line)
	if fields == "" || strings.Contains(line, "%") || !strings.Contains(line, "/tune-nightly.sh") {
		t.Fatalf("not a crontab line running tune-nightly.sh (five time fields, no %%): %q", line)
	}
	// Run the command as cron would (/bin/sh -c), the project directory replaced by a temp one whose
	// script prints and exits 3: the output, stdout and stderr, lands in the log beside it.
	dir := t.TempDir()
	script := "#!/bin/sh\necho night\necho escalated >&2\nexit 3\n"
	if err := os.WriteFile(filepath.Join(dir, "tune-nightly.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", strings.ReplaceAll(line[len(fields):], "/srv/project", dir))
	if err := cmd.Run(); err == nil {
		t.Error("the line hid the script's exit 3 from cron")
	}
	if log, err := os.ReadFile(filepath.Join(dir, "tune-nightly.log")); err != nil || string(log) != "night\nescalated\n" {
		t.Errorf("tune-nightly.log: %q, %v", log, err)
	}
}

// stubDir writes stub commands into dir/bin: tune (prints output, exits rc), git (succeeds), gh and
// glab (record their calls, no pull request is open) and the paging and alerting hooks, which append
// "name [arg]…" to dir/calls.
func stubDir(t *testing.T, rc int, output string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, "bin", name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	calls := filepath.Join(dir, "calls")
	// tune weights show --jq .version answers the active version (the recipes list its declined branches)
	write("tune", fmt.Sprintf("[ \"$1\" = weights ] && echo v0001 && exit 0\ncat <<'OUT'\n%sOUT\nexit %d\n", output, rc))
	write("git", fmt.Sprintf("[ \"$1\" = rev-parse ] && echo %q\nexit 0\n", filepath.Join(dir, "gitdir")))
	for _, h := range []string{"page-oncall", "alert-ops", "gh", "glab"} {
		none := "0" // gh applies the recipe's --jq itself; glab's JSON goes through jq
		if h == "glab" {
			none = "'[]'"
		}
		write(h, fmt.Sprintf("printf '%%s' %s >> %q\nfor a in \"$@\"; do printf ' [%%s]' \"$a\" >> %q; done\necho >> %q\n[ \"$2\" = list ] && echo %s\nexit 0\n",
			h, calls, calls, calls, none))
	}
	return dir
}

// TestNightlyRecipesExitCodes runs every recipe with a stub tune exiting 1, 2 and 3: an error alerts
// (cron) or fails the job, an escalation pages with the state dump; none opens a pull request (an
// escalation that kept steps does: TestNightlyRecipesEscalationKeepsItsSteps).
func TestNightlyRecipesExitCodes(t *testing.T) {
	for _, tool := range []string{"bash", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (CI runners have it)", tool)
		}
	}
	page := "page-oncall [tune nightly escalated: a human decides (tune help escalation)] [reports/evolve-state-p-0123.json]\n"
	for _, rc := range []int{1, 2, 3} {
		out := `{"outcome": "converged", "review": "", "state_dump": null}` + "\n"
		if rc == 3 {
			out = `{"outcome": "escalated", "review": "", "state_dump": "reports/evolve-state-p-0123.json"}` + "\n"
		}
		for _, c := range []struct {
			recipe string
			shell  []string
			// exit is the script's exit code; calls what it called
			exit  int
			calls string
		}{
			{"cron", []string{"/bin/sh"}, rc, map[int]string{1: "alert-ops [tune nightly failed with exit 1] [GITDIR/tune-nightly/err.txt]\n",
				2: "alert-ops [tune nightly failed with exit 2] [GITDIR/tune-nightly/err.txt]\n", 3: page}[rc]},
			{"github-evolve", []string{"bash", "--noprofile", "--norc", "-eo", "pipefail"}, map[int]int{1: 1, 2: 2, 3: 0}[rc], ""},
			{"gitlab-nightly", []string{"bash", "--noprofile", "--norc", "-e"}, rc, map[int]string{3: page}[rc]},
		} {
			dir := stubDir(t, rc, out)
			path := writeRecipe(t, dir, c.recipe)
			run := func(args ...string) int {
				code, output := runInStubDir(t, dir, args...)
				t.Logf("%s, tune exiting %d: exit %d\n%s", c.recipe, rc, code, output)
				return code
			}
			if got := run(append(c.shell, path)...); got != c.exit {
				t.Errorf("%s, tune exiting %d: the script exits %d, want %d", c.recipe, rc, got, c.exit)
			}
			if c.recipe == "github-evolve" {
				output, _ := os.ReadFile(filepath.Join(dir, "output"))
				if !strings.Contains(string(output), fmt.Sprintf("rc=%d\n", rc)) || !strings.Contains(string(output), "review=\n") {
					t.Errorf("tune exiting %d: step output %q", rc, output)
				}
				if rc == 3 {
					// the page step runs when the step output says rc=3
					pageScript, err := nightlyRecipe("github-page")
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(pageScript), 0o755); err != nil {
						t.Fatal(err)
					}
					if got := run(append(c.shell, path)...); got != 0 {
						t.Errorf("page step exits %d", got)
					}
					c.calls = page
				}
			}
			data, _ := os.ReadFile(filepath.Join(dir, "calls"))
			// the forge's list of declined branches comes before tune (TestNightlyRecipesPassTheDeclined); every other call is the hooks'
			got := regexp.MustCompile(`(?m)^(gh|glab) \[(pr|mr)\] \[list\].*\n`).ReplaceAllString(string(data), "")
			if want := strings.ReplaceAll(c.calls, "GITDIR", filepath.Join(dir, "gitdir")); got != want {
				t.Errorf("%s, tune exiting %d: called %q, want %q", c.recipe, rc, got, want)
			}
		}
	}
}

// TestNightlyRecipesEscalationKeepsItsSteps: an escalation that kept accepted steps leaves them for review
// (docs/decisions.md#escalation-keeps-its-steps), so every recipe pages AND pushes the branch and opens its
// pull request, and the job still ends with exit 3 (the GitHub workflow's page and pull-request steps
// are separate steps that both run).
func TestNightlyRecipesEscalationKeepsItsSteps(t *testing.T) {
	for _, tool := range []string{"bash", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (CI runners have it)", tool)
		}
	}
	out := `{"outcome": "escalated", "review": "change", "state_dump": "reports/evolve-state-p-0123.json", "branch": "tune/v0001-0123", "branch_updated": true, "title": "tune: weights change p-0123", "body_file": "body.md", "supersedes": []}` + "\n"
	page := "page-oncall [tune nightly escalated: a human decides (tune help escalation)] [reports/evolve-state-p-0123.json]\n"
	for _, c := range []struct {
		recipe string
		shell  []string
		exit   int
		calls  []string // what the calls file must contain, in order
	}{
		{"cron", []string{"/bin/sh"}, 3, []string{page, "gh [pr] [list]", "gh [pr] [create] [--head] [tune/v0001-0123]"}},
		{"gitlab-nightly", []string{"bash", "--noprofile", "--norc", "-e"}, 3, []string{page, "glab [mr] [list] [--source-branch] [tune/v0001-0123]", "glab [mr] [create] [--source-branch] [tune/v0001-0123]"}},
		{"github-pr", []string{"bash", "--noprofile", "--norc", "-eo", "pipefail"}, 0, []string{"gh [pr] [list]", "gh [pr] [create] [--head] [tune/v0001-0123]"}},
	} {
		dir := stubDir(t, 3, out)
		if err := os.WriteFile(filepath.Join(dir, "nightly.json"), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		path := writeRecipe(t, dir, c.recipe)
		if code, output := runInStubDir(t, dir, append(c.shell, path)...); code != c.exit {
			t.Errorf("%s: exit %d, want %d\n%s", c.recipe, code, c.exit, output)
		}
		data, _ := os.ReadFile(filepath.Join(dir, "calls"))
		rest := string(data)
		for _, want := range c.calls {
			i := strings.Index(rest, want)
			if i < 0 {
				t.Errorf("%s: calls %q lack %q (in order)", c.recipe, data, want)
				break
			}
			rest = rest[i+len(want):]
		}
	}
}

// runInStubDir runs args in dir with dir/bin (stubDir's stubs) first on the PATH and the variables the
// recipes read from their runner; it returns the exit code and the combined output.
func runInStubDir(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(dir, "bin")+":"+os.Getenv("PATH"),
		"GITHUB_OUTPUT="+filepath.Join(dir, "output"), "TUNE_PUSH_URL=remote", "CI_DEFAULT_BRANCH=main")
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), b.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, b.String()
}

// writeRecipe writes the docs' recipe into dir as recipe.sh and returns its path.
func writeRecipe(t *testing.T, dir, recipe string) string {
	t.Helper()
	script, err := nightlyRecipe(recipe)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "recipe.sh")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNightlyRecipesPassTheDeclined: before the night, every recipe asks the forge, for each tune/ branch
// of the active version, whether a reviewer closed its pull (merge) request unmerged, and passes those to
// tune nightly --declined
// (docs/nightly.md, "Saying no"; the filters: TestNightlyRecipesDeclinedFilter); it says which ones the
// night named, and a night that leaves nothing for review pushes, opens and closes nothing. A forge query
// that fails stops the recipe before tune runs (the crontab script alerts, the CI jobs fail): a night
// without the list would propose the declined changes again. On GitLab only the project's own requests
// count (a fork's closed request of a tune/ name is not a no).
func TestNightlyRecipesPassTheDeclined(t *testing.T) {
	for _, tool := range []string{"bash", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (CI runners have it)", tool)
		}
	}
	out := `{"outcome": "converged", "review": "", "state_dump": null, "declined": ["tune/v0001-aaaa"]}` + "\n"
	for _, fail := range []bool{false, true} {
		for _, c := range []struct {
			recipe string
			shell  []string
			exit   int    // when the forge answers
			pass   string // the --declined argument
		}{
			{"cron", []string{"/bin/sh"}, 0, "tune/v0001-aaaa"},
			{"github-evolve", []string{"bash", "--noprofile", "--norc", "-eo", "pipefail"}, 0, "tune/v0001-aaaa"},
			{"gitlab-nightly", []string{"bash", "--noprofile", "--norc", "-e"}, 0, "tune/v0001-aaaa"},
		} {
			dir := stubDir(t, 0, out)
			calls := filepath.Join(dir, "calls")
			record := fmt.Sprintf("printf '%%s' \"$(basename \"$0\")\" >> %q\nfor a in \"$@\"; do printf ' [%%s]' \"$a\" >> %q; done\necho >> %q\n", calls, calls, calls)
			answer := "exit 0"
			if fail {
				answer = "echo 'HTTP 502' >&2; exit 1"
			}
			// The active version has two tune/ branches: aaaa's request a reviewer closed, bbbb's closed one is
			// a fork's. gh applies the recipe's --jq itself (the stub answers with the count); glab's JSON goes
			// through jq.
			stubs := map[string]string{
				"gh":   record + fmt.Sprintf("case \"$*\" in *'--head tune/v0001-aaaa --state all'*) echo 1; %s ;; *'--state all'*) echo 0; %s ;; esac\n", answer, answer),
				"glab": record + fmt.Sprintf("case \"$*\" in *'--source-branch tune/v0001-aaaa --not-label'*) echo '[{\"iid\": 7, \"source_project_id\": 3, \"target_project_id\": 3}]'; %s ;; *'--not-label'*) echo '[{\"iid\": 8, \"source_project_id\": 5, \"target_project_id\": 3}]'; %s ;; esac\n", answer, answer),
				"tune": record + fmt.Sprintf("[ \"$1\" = weights ] && echo v0001 && exit 0\ncat <<'OUT'\n%sOUT\n", out),
				"git": fmt.Sprintf("[ \"$1\" = rev-parse ] && echo %q && exit 0\n%s[ \"$1\" = for-each-ref ] && printf 'tune/v0001-aaaa\\ntune/v0001-bbbb\\n'\nexit 0\n",
					filepath.Join(dir, "gitdir"), record),
			}
			for name, body := range stubs {
				if err := os.WriteFile(filepath.Join(dir, "bin", name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			path := writeRecipe(t, dir, c.recipe)
			code, output := runInStubDir(t, dir, append(c.shell, path)...)
			data, _ := os.ReadFile(calls)
			got := string(data)
			ranTune := strings.Contains(got, "tune [nightly]")
			if fail {
				if code == 0 || ranTune {
					t.Errorf("%s: the forge query failed, yet exit %d, tune ran %v\ncalls:\n%s", c.recipe, code, ranTune, got)
				}
				if alerted := strings.Contains(got, "alert-ops"); alerted != (c.recipe == "cron") {
					t.Errorf("%s: the forge query failed: alerted %v\ncalls:\n%s", c.recipe, alerted, got)
				}
				continue
			}
			if code != c.exit {
				t.Fatalf("%s: exit %d\n%s", c.recipe, code, output)
			}
			if want := "git [for-each-ref] [--format=%(refname:lstrip=2)] [refs/heads/tune/v0001-*]"; !strings.Contains(got, want) {
				t.Errorf("%s: the active version's branches not listed with %q\ncalls:\n%s", c.recipe, want, got)
			}
			if want := "tune [nightly] [--branch] [--declined] [" + c.pass + "] [--json]"; !strings.Contains(got, want) {
				t.Errorf("%s: tune not called with %q\ncalls:\n%s", c.recipe, want, got)
			}
			if strings.Contains(got, "git [push]") || strings.Contains(got, "create]") || strings.Contains(got, "close]") {
				t.Errorf("%s: a night that leaves nothing pushed, opened or closed\ncalls:\n%s", c.recipe, got)
			}
			if !strings.Contains(output, "a reviewer closed the ") || !strings.Contains(output, " of tune/v0001-aaaa; not proposed again (reopen it to ask again)") {
				t.Errorf("%s: output %q does not name the declined branch", c.recipe, output)
			}
		}
	}
}

// TestNightlyRecipesDeclinedFilter runs the recipes' filters on the forges' JSON (gh applies the
// GitHub recipes' --jq; the GitLab job pipes glab's JSON through jq): a request counts as declined only
// when closed unmerged, not from a fork, and not closed by the recipe itself — the filter's
// "superseded by " is the comment the same recipe closes with, the GitLab query leaves out the label
// the job adds before it closes; a fork's open request of the same name does not count as open.
func TestNightlyRecipesDeclinedFilter(t *testing.T) {
	run := func(t *testing.T, name, filter, in string) any {
		t.Helper()
		q, err := gojq.Parse(filter)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var v any
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			t.Fatal(err)
		}
		out, _ := q.Run(v).Next()
		return out
	}
	type check struct {
		json string
		want int
	}
	for _, pair := range [][2]string{{"cron", "cron"}, {"github-evolve", "github-pr"}} { // the declined query's step, the open query's
		recipe := pair[0]
		script, err := nightlyRecipe(recipe)
		if err != nil {
			t.Fatal(err)
		}
		prScript, err := nightlyRecipe(pair[1])
		if err != nil {
			t.Fatal(err)
		}
		declined := regexp.MustCompile(`--state all --json state,isCrossRepository,comments \\\n\s+--jq '([^']+)'`).FindStringSubmatch(script)
		open := regexp.MustCompile(`--state open --json isCrossRepository --jq '([^']+)'`).FindStringSubmatch(prScript)
		if declined == nil || open == nil {
			t.Fatalf("%s: no declined or open query", recipe)
		}
		if !strings.Contains(declined[1], `startswith("superseded by ")`) || !strings.Contains(prScript, `--comment "superseded by $branch"`) {
			t.Errorf("%s: the filter does not leave out the recipe's own closes", recipe)
		}
		for _, c := range []check{
			{`[]`, 0},
			{`[{"state": "OPEN", "isCrossRepository": false, "comments": []}]`, 0},
			{`[{"state": "MERGED", "isCrossRepository": false, "comments": []}]`, 0},
			{`[{"state": "CLOSED", "isCrossRepository": false, "comments": [{"viewerDidAuthor": true, "body": "superseded by tune/v0002-89ab"}]}]`, 0},
			// a reviewer's (or anyone's) comment that happens to start like the recipe's does not undo the no
			{`[{"state": "CLOSED", "isCrossRepository": false, "comments": [{"viewerDidAuthor": false, "body": "superseded by #12, the manual fix"}]}]`, 1},
			{`[{"state": "CLOSED", "isCrossRepository": true, "comments": []}]`, 0},
			{`[{"state": "CLOSED", "isCrossRepository": false, "comments": []}]`, 1},
			{`[{"state": "CLOSED", "isCrossRepository": false, "comments": [{"viewerDidAuthor": true, "body": "No: the contract scenario matters more. superseded by nothing"}]}]`, 1},
			{`[{"state": "CLOSED", "isCrossRepository": false, "comments": [{"viewerDidAuthor": true, "body": "superseded by tune/v0001-4567"}]}, {"state": "CLOSED", "isCrossRepository": false, "comments": [{"viewerDidAuthor": false, "body": "not this one"}]}, {"state": "OPEN", "isCrossRepository": false, "comments": []}]`, 1},
		} {
			if got := run(t, recipe, declined[1], c.json); got != c.want {
				t.Errorf("%s: declined on %s gives %v, want %d", recipe, c.json, got, c.want)
			}
		}
		for _, c := range []check{
			{`[]`, 0},
			{`[{"isCrossRepository": true}]`, 0},
			{`[{"isCrossRepository": false}]`, 1},
			{`[{"isCrossRepository": true}, {"isCrossRepository": false}]`, 1},
		} {
			if got := run(t, recipe, open[1], c.json); got != c.want {
				t.Errorf("%s: open on %s gives %v, want %d", recipe, c.json, got, c.want)
			}
		}
	}
	script, err := nightlyRecipe("gitlab-nightly")
	if err != nil {
		t.Fatal(err)
	}
	label := regexp.MustCompile(`--not-label (\S+) `).FindStringSubmatch(script)
	if label == nil || !strings.Contains(script, `glab mr update "$iid" --label `+label[1]+" ") {
		t.Errorf("the GitLab job does not label what it closes with the label its declined query leaves out")
	}
	ours := regexp.MustCompile(`ours='([^']+)'`).FindStringSubmatch(script)
	if ours == nil || strings.Count(script, `jq "$ours | length"`) != 2 || strings.Count(script, `jq -r "$ours | .[0] // empty"`) != 1 {
		t.Fatalf("the GitLab job does not filter its three queries with one filter")
	}
	for _, c := range []check{
		{`[]`, 0},
		{`[{"iid": 4, "source_project_id": 9, "target_project_id": 3}]`, 0},
		{`[{"iid": 5, "source_project_id": 3, "target_project_id": 3}]`, 1},
		{`[{"iid": 4, "source_project_id": 9, "target_project_id": 3}, {"iid": 5, "source_project_id": 3, "target_project_id": 3}]`, 1},
	} {
		if got := run(t, "gitlab", ours[1]+" | length", c.json); got != c.want {
			t.Errorf("gitlab: %s gives %v, want %d", c.json, got, c.want)
		}
	}
}
