package gitcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/regular"
)

// TestRefShowAndErrors: a missing ref is "" without an error (nightly --branch then writes it), a
// missing file is not ok, and a failing command names its arguments and git's message.
func TestRefShowAndErrors(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	r := Repo{Dir: dir, Env: []string{"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@x"}}
	if _, err := r.Run("init", "-q", "-b", "main"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "f.txt"}, {"commit", "-q", "-m", "one"}} {
		if _, err := r.Run(args...); err != nil {
			t.Fatal(err)
		}
	}
	head, err := r.Ref("refs/heads/main")
	if err != nil || len(head) != 40 {
		t.Fatalf("main: %q, %v", head, err)
	}
	if got, err := r.Ref("refs/heads/tune/p-000000000000"); got != "" || err != nil {
		t.Errorf("a missing ref: %q, %v", got, err)
	}
	if data, ok, err := r.Show(head, "f.txt", regular.Limit{Kind: "a text", Bytes: 6}); !ok || err != nil || string(data) != "hello\n" {
		t.Errorf("show f.txt: %q %v %v", data, ok, err)
	}
	// A blob over its limit is refused before it is read (a branch anyone can push to may hold anything).
	if data, _, err := r.Show(head, "f.txt", regular.Limit{Kind: "a text", Bytes: 5}); err == nil || data != nil ||
		!strings.Contains(err.Error(), "f.txt is 6 bytes, over the 5-byte limit for a text") {
		t.Errorf("show f.txt over its limit: %q %v", data, err)
	}
	if _, ok, _ := r.Show(head, "nope.txt", regular.Limit{Kind: "a text", Bytes: 5}); ok {
		t.Error("show of a missing file is ok")
	}
	if files, err := r.Files(head, "."); err != nil || len(files) != 1 || files[0] != "f.txt" {
		t.Errorf("files: %v %v", files, err)
	}
	_, err = r.Run("cat-file", "blob", "no-such-rev:f.txt")
	if ge, ok := err.(*Error); !ok || ge.Error() == "" || ge.Args[0] != "cat-file" {
		t.Errorf("a failing command: %v", err)
	}
	top, err := Toplevel(dir)
	if real, _ := filepath.EvalSymlinks(dir); err != nil || top != real {
		t.Errorf("toplevel %q, %v; want %q", top, err, real)
	}
}

// TestRunLimit: output over the limit is an error, not a buffer that grows with what a tree holds.
func TestRunLimit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := Repo{Dir: t.TempDir()}
	if out, err := r.RunLimit(1<<10, "version"); err != nil || !strings.HasPrefix(string(out), "git version") {
		t.Errorf("under the limit: %q %v", out, err)
	}
	if out, err := r.RunLimit(4, "version"); err == nil || out != nil || !strings.Contains(err.Error(), "over 4 bytes") {
		t.Errorf("over the limit: %q %v", out, err)
	}
}
