package transcript

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSourceOf(t *testing.T) {
	for path, want := range map[string]string{
		"/h/.claude/projects/-home-u-repo/5d2f.jsonl":                                 "5d2f -home-u-repo main ",
		"/h/.claude/projects/-home-u-repo/5d2f/subagents/agent-a7f4.jsonl":            "5d2f -home-u-repo subagent a7f4",
		"/h/.claude/projects/-home-u-repo/5d2f/subagents/agent-acompact-e1f845.jsonl": "5d2f -home-u-repo compaction acompact-e1f845",
		"/h/.claude/projects/P/5d2f/subagents/workflows/wf1/agent-a1.jsonl":           "5d2f P subagent a1",
		"/h/.claude/projects/P/5d2f/chat.jsonl":                                       "5d2f P main ",
		"/h/.claude/projects/P/agent-a1.jsonl":                                        "agent-a1 P subagent a1",
		"testdata/spotter/258c/subagents/agent-a88.jsonl":                             "258c  subagent a88",
		"testdata/spotter/short.jsonl":                                                "short  main ",
		"short.jsonl":                                                                 "short  main ",
	} {
		s := SourceOf(path)
		if got := fmt.Sprintf("%s %s %s %s", s.Session, s.Project, s.Class, s.AgentID); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
}

func mkdirs(t *testing.T, root string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRoots(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, "cfg1/projects", "cfg2/projects", "bare", "home/.claude/projects", "home/.config/claude/projects")
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "CLAUDE_CONFIG_DIR" {
				return v
			}
			return ""
		}
	}
	rel := func(ps []string) string {
		var out []string
		for _, p := range ps {
			r, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(r))
		}
		return strings.Join(out, ",")
	}
	home := filepath.Join(root, "home")
	// Comma-separated entries: a config dir, a projects/ dir; invalid ones are ignored.
	got, err := Roots(env(filepath.Join(root, "cfg1")+" , "+filepath.Join(root, "cfg2", "projects")+","+filepath.Join(root, "bare")+",,"), home)
	if err != nil || rel(got) != "cfg1/projects,cfg2/projects" {
		t.Errorf("CLAUDE_CONFIG_DIR: %v %v", rel(got), err)
	}
	// Set but none valid: an error naming the variable (ccusage exits too).
	if _, err := Roots(env(filepath.Join(root, "bare")+","+filepath.Join(root, "missing")), home); !errors.Is(err, ErrNoConfigDir) || !strings.Contains(err.Error(), "CLAUDE_CONFIG_DIR") {
		t.Errorf("invalid CLAUDE_CONFIG_DIR: %v", err)
	}
	// Unset: the two defaults that exist.
	got, err = Roots(env(""), home)
	if err != nil || rel(got) != "home/.config/claude/projects,home/.claude/projects" {
		t.Errorf("defaults: %v %v", rel(got), err)
	}
	if got, err := Roots(env(""), filepath.Join(root, "nohome")); err != nil || len(got) != 0 {
		t.Errorf("missing defaults: %v %v", got, err)
	}
}

func TestDiscover(t *testing.T) {
	root := writeTree(t, map[string]string{
		"cfg/projects/p/b.jsonl":                   "{}\n",
		"cfg/projects/p/a/subagents/agent-1.jsonl": "{}\n",
		"cfg/projects/p/a.jsonl":                   "{}\n",
		"cfg/projects/p/notes.txt":                 "x",
		"cfg/settings.json":                        "{}",
		"other/x.jsonl":                            "{}\n",
		"single.log":                               "{}\n",
	})
	// Symbolic links found while walking are not followed (ccusage ignores them too).
	if err := os.Symlink(filepath.Join(root, "other"), filepath.Join(root, "cfg", "projects", "linked")); err != nil {
		t.Skip("no symlinks:", err)
	}
	if err := os.Symlink(filepath.Join(root, "other", "x.jsonl"), filepath.Join(root, "cfg", "projects", "p", "z.jsonl")); err != nil {
		t.Fatal(err)
	}
	files, err := Discover([]string{filepath.Join(root, "single.log"), filepath.Join(root, "cfg"), filepath.Join(root, "cfg", "projects")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		r, _ := filepath.Rel(root, f)
		got = append(got, filepath.ToSlash(r))
	}
	// Sorted by path (a.jsonl before a/…, as byte order puts '.' before '/'), each file once.
	want := "cfg/projects/p/a.jsonl cfg/projects/p/a/subagents/agent-1.jsonl cfg/projects/p/b.jsonl single.log"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
	if _, err := Discover([]string{filepath.Join(root, "missing")}); err == nil {
		t.Error("missing path accepted")
	}
}

// TestDiscoverLinkedRoot: a root that is itself a symbolic link is read (ccusage 20.0.24 reads a
// config directory whose projects/ is a link; a folder given explicitly is meant to be read), under
// the name it was given by; links met inside it are still skipped.
func TestDiscoverLinkedRoot(t *testing.T) {
	root := writeTree(t, map[string]string{
		"real/projects/p/s.jsonl":     "{}\n",
		"real/projects/p/s/sub.jsonl": "{}\n",
		"cfg/settings.json":           "{}",
	})
	if err := os.Symlink(filepath.Join(root, "real", "projects"), filepath.Join(root, "cfg", "projects")); err != nil {
		t.Skip("no symlinks:", err)
	}
	if err := os.Symlink(filepath.Join(root, "real", "projects", "p"), filepath.Join(root, "plink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "real", "projects", "p", "s.jsonl"), filepath.Join(root, "real", "projects", "p", "s", "inner.jsonl")); err != nil {
		t.Fatal(err)
	}
	files, err := Discover([]string{filepath.Join(root, "cfg"), filepath.Join(root, "plink")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		r, _ := filepath.Rel(root, f)
		got = append(got, filepath.ToSlash(r))
	}
	want := "cfg/projects/p/s.jsonl cfg/projects/p/s/sub.jsonl plink/s.jsonl plink/s/sub.jsonl"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}

// TestScanUnreadableFile: a file that cannot be read is left out and named, the rest is read as
// without it; with Strict it is an error naming it (bad lines never are), and the parallel scan stops
// cleanly whatever its position.
func TestScanUnreadableFile(t *testing.T) {
	files, err := Discover([]string{spotterDir})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := Scan(files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{0, 7, len(files)} {
		gone := filepath.Join(t.TempDir(), "gone.jsonl")
		list := append(append(append([]string{}, files[:at]...), gone), files[at:]...)
		for _, workers := range []int{1, 2, 4} {
			if _, err := Scan(list, Options{Workers: workers, Strict: true}); err == nil || !strings.Contains(err.Error(), "gone.jsonl") {
				t.Errorf("strict, missing file at %d, %d workers: %v", at, workers, err)
			}
			res, err := Scan(list, Options{Workers: workers})
			if err != nil {
				t.Fatalf("missing file at %d, %d workers: %v", at, workers, err)
			}
			if len(res.Unreadable) != 1 || res.Unreadable[0].File != gone || res.Unreadable[0].Err != "no such file or directory" {
				t.Errorf("missing file at %d: unreadable %+v", at, res.Unreadable)
			}
			if sumTokens(res.Requests) != sumTokens(whole.Requests) || len(res.Files) != len(whole.Files) {
				t.Errorf("missing file at %d, %d workers: %+v in %d files, want %+v in %d", at, workers,
					sumTokens(res.Requests), len(res.Files), sumTokens(whole.Requests), len(whole.Files))
			}
		}
	}
}
