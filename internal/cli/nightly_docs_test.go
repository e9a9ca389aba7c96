package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docBlock returns the body of the first ```lang block of docs/nightly.md.
func docBlock(t *testing.T, lang string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(), "docs", "nightly.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```").FindSubmatch(data)
	if m == nil {
		t.Fatalf("docs/nightly.md has no ```%s block", lang)
	}
	return string(m[1])
}

// hookDir writes a stub tune into dir/bin (it records its arguments, prints what nightly prints and exits
// rc) and the paging and alerting hooks into dir/hooks (each appends "name arg…" to dir/calls).
func hookDir(t *testing.T, rc int, output string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"bin", "hooks"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, body string) {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("bin/tune", fmt.Sprintf("echo \"$@\" > %q\ncat <<'OUT'\n%sOUT\nexit %d\n", filepath.Join(dir, "args"), output, rc))
	for _, h := range []string{"page-oncall", "alert-ops"} {
		write("hooks/"+h, fmt.Sprintf("printf '%%s' %s >> %q\nfor a in \"$@\"; do printf ' [%%s]' \"$a\" >> %q; done\necho >> %q\n",
			h, filepath.Join(dir, "calls"), filepath.Join(dir, "calls"), filepath.Join(dir, "calls")))
	}
	return dir
}

func calls(dir string) string {
	data, _ := os.ReadFile(filepath.Join(dir, "calls"))
	return string(data)
}

// TestNightlyCrontab runs the crontab line of docs/nightly.md, as cron would (/bin/sh -c), with a stub
// tune exiting 0, 1, 2 and 3: quiet on 0, alert on 1 and 2, page with the state dump on 3.
func TestNightlyCrontab(t *testing.T) {
	var line string
	for _, l := range strings.Split(docBlock(t, "cron"), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			line = l
		}
	}
	fields := regexp.MustCompile(`^(\S+\s+){5}`).FindString(line)
	if fields == "" || strings.Contains(line, "%") {
		t.Fatalf("not a crontab line (five time fields, no %%): %q", line)
	}
	for _, c := range []struct {
		rc   int
		want string
	}{
		{0, ""},
		{1, "alert-ops [tune nightly failed with exit 1] [DIR/tune-nightly.log]\n"},
		{2, "alert-ops [tune nightly failed with exit 2] [DIR/tune-nightly.log]\n"},
		{3, "page-oncall [tune nightly escalated: a human decides (tune help escalation)] [reports/evolve-state-p-0123.json]\n"},
	} {
		out := "outcome: converged\n"
		if c.rc == 3 {
			out = "outcome: escalated\nstate dump: reports/evolve-state-p-0123.json\n"
		}
		dir := hookDir(t, c.rc, out)
		cmd := exec.Command("/bin/sh", "-c", strings.ReplaceAll(line[len(fields):], "/srv/tune", dir))
		cmd.Env = append(os.Environ(), "PATH="+filepath.Join(dir, "hooks")+":/usr/bin:/bin")
		if b, err := cmd.CombinedOutput(); err != nil && c.rc == 0 {
			t.Errorf("rc %d: the line itself failed: %v\n%s", c.rc, err, b)
		}
		if got, want := calls(dir), strings.ReplaceAll(c.want, "DIR", dir); got != want {
			t.Errorf("tune exiting %d: called %q, want %q", c.rc, got, want)
		}
		if args, _ := os.ReadFile(filepath.Join(dir, "args")); !strings.HasPrefix(string(args), "nightly --logs ") {
			t.Errorf("rc %d: tune ran with %q", c.rc, args)
		}
	}
}

// workflowStep returns the `if:` condition and the `run: |` script of the named step of the workflow in
// docs/nightly.md.
func workflowStep(t *testing.T, yaml, name string) (cond, script string) {
	t.Helper()
	lines := strings.Split(yaml, "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "- name: "+name {
			start = i
		}
	}
	if start < 0 {
		t.Fatalf("workflow has no step %q", name)
	}
	indent := strings.Index(lines[start], "-") + 2
	var run []string
	inRun := false
	for _, l := range lines[start+1:] {
		if strings.TrimSpace(l) != "" && len(l)-len(strings.TrimLeft(l, " ")) < indent {
			break // the next step
		}
		body := strings.TrimSpace(l)
		switch {
		case inRun && len(l) > indent+2:
			run = append(run, l[indent+2:])
		case strings.HasPrefix(body, "if: "):
			cond = strings.TrimPrefix(body, "if: ")
			inRun = false
		case body == "run: |":
			inRun = true
		default:
			inRun = false
		}
	}
	return cond, strings.Join(run, "\n") + "\n"
}

// TestNightlyWorkflow runs the Evolve step of the documented workflow as GitHub Actions runs a `run`
// script (bash -e -o pipefail), then the page step when its condition holds: exit 0 is a green, quiet
// run; 1 and 2 fail the run (red: the alert); 3 keeps the run going and pages with the state dump.
func TestNightlyWorkflow(t *testing.T) {
	for _, tool := range []string{"bash", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (GitHub's runners have it)", tool)
		}
	}
	yaml := docBlock(t, "yaml")
	_, evolve := workflowStep(t, yaml, "Evolve")
	pageCond, page := workflowStep(t, yaml, "Page on escalation")
	if pageCond != "steps.evolve.outputs.rc == '3'" {
		t.Fatalf("the page step's condition is %q; this test emulates steps.evolve.outputs.rc == '3'", pageCond)
	}
	for _, c := range []struct {
		rc       int
		stepFail bool
		want     string
	}{
		{0, false, ""},
		{1, true, ""},
		{2, true, ""},
		{3, false, "page-oncall [tune nightly escalated: a human decides (tune help escalation)] [reports/evolve-state-p-0123.json]\n"},
	} {
		out := `{"outcome": "converged", "state_dump": null}` + "\n"
		if c.rc == 3 {
			out = `{"outcome": "escalated", "state_dump": "reports/evolve-state-p-0123.json"}` + "\n"
		}
		dir := hookDir(t, c.rc, out)
		run := func(script string) error {
			cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH="+filepath.Join(dir, "hooks")+":"+os.Getenv("PATH"), "GITHUB_OUTPUT="+filepath.Join(dir, "output"))
			var b bytes.Buffer
			cmd.Stdout, cmd.Stderr = &b, &b
			err := cmd.Run()
			if err != nil {
				t.Logf("rc %d: %v\n%s", c.rc, err, b.String())
			}
			return err
		}
		err := run(evolve)
		if (err != nil) != c.stepFail {
			t.Errorf("tune exiting %d: Evolve step failed=%v, want %v", c.rc, err != nil, c.stepFail)
		}
		output, _ := os.ReadFile(filepath.Join(dir, "output"))
		if !strings.Contains(string(output), fmt.Sprintf("rc=%d\n", c.rc)) {
			t.Errorf("tune exiting %d: step output %q", c.rc, output)
		}
		if err == nil && strings.Contains(string(output), "rc=3\n") {
			if err := run(page); err != nil {
				t.Errorf("page step: %v", err)
			}
		}
		if got := calls(dir); got != c.want {
			t.Errorf("tune exiting %d: called %q, want %q", c.rc, got, c.want)
		}
	}
}

// TestNightlyWorkflowPullRequestOnlyForAChange runs the id line of the workflow's Pull request step: a
// proposal that changes weights (accept, halve) opens a pull request; a refused night's revert or none
// proposal (a record, which tune apply refuses) does not.
func TestNightlyWorkflowPullRequestOnlyForAChange(t *testing.T) {
	for _, tool := range []string{"bash", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (GitHub's runners have it)", tool)
		}
	}
	_, script := workflowStep(t, docBlock(t, "yaml"), "Pull request")
	var idLine string
	for _, l := range strings.Split(script, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "id=$(jq") {
			idLine = strings.TrimSpace(l)
		}
	}
	if idLine == "" {
		t.Fatalf("the Pull request step has no id=$(jq …) line:\n%s", script)
	}
	for decision, want := range map[string]string{"accept": "p-0123", "halve": "p-0123", "revert": "", "none": ""} {
		dir := t.TempDir()
		out := fmt.Sprintf(`{"outcome": "stalled", "decision": %q, "proposal": {"id": "p-0123", "decision": %q}}`+"\n", decision, decision)
		if err := os.WriteFile(filepath.Join(dir, "nightly.json"), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", idLine+"\nprintf %s \"$id\"")
		cmd.Dir = dir
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", decision, err)
		}
		if string(got) != want {
			t.Errorf("proposal decision %s: id %q, want %q", decision, got, want)
		}
	}
	// No proposal at all (nothing to do): no id either.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nightly.json"), []byte(`{"outcome": "nothing-to-do", "proposal": null}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", idLine+"\nprintf %s \"$id\"")
	cmd.Dir = dir
	if got, err := cmd.Output(); err != nil || len(got) != 0 {
		t.Errorf("no proposal: id %q (%v), want none", got, err)
	}
}
