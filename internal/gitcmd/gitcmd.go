// Package gitcmd runs the git binary for the pull-request loop (tune nightly --branch, tune verify
// --base): explicit arguments, no shell, the environment of the process plus what a call adds. It
// shells out rather than linking a Go git library because only plumbing commands are needed and the
// repository's own git (its config, hooks-free plumbing, object format) is the one that must agree.
package gitcmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/ldd-tools/tune/internal/regular"
)

// Repo is a git repository seen from Dir (any directory inside its work tree); Env is added to the
// environment of every command (e.g. GIT_INDEX_FILE for a temporary index).
type Repo struct {
	Dir string
	Env []string
}

// Error is a git command that failed: its arguments and what it printed on stderr.
type Error struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Run runs git with args in r.Dir and returns its stdout.
func (r Repo) Run(args ...string) ([]byte, error) {
	return r.RunInput(nil, args...)
}

// RunInput is Run with stdin.
func (r Repo) RunInput(stdin []byte, args ...string) ([]byte, error) {
	var out bytes.Buffer
	var in io.Reader
	if stdin != nil {
		in = bytes.NewReader(stdin)
	}
	err := r.run(in, &out, args)
	return out.Bytes(), err
}

// run runs git with args in r.Dir, stdin from in (nil: none) and stdout to out; a failure is an *Error
// with git's stderr.
func (r Repo) run(in io.Reader, out io.Writer, args []string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Dir
	cmd.Env = append(append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"), r.Env...)
	var errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, &errb
	if err := cmd.Run(); err != nil {
		return &Error{Args: args, Stderr: errb.String(), Err: err}
	}
	return nil
}

// RunLimit is Run whose stdout may not pass limit bytes: git is stopped and an error returned when it
// would (a command over a tree anyone can push to may print anything).
func (r Repo) RunLimit(limit int64, args ...string) ([]byte, error) {
	out := &limitedBuffer{limit: limit}
	err := r.run(nil, out, args)
	if out.over {
		return nil, &Error{Args: args, Stderr: fmt.Sprintf("output over %d bytes", limit), Err: errOverLimit}
	}
	return out.buf.Bytes(), err
}

var errOverLimit = errors.New("output over its limit")

type limitedBuffer struct {
	buf   bytes.Buffer
	limit int64
	over  bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if int64(b.buf.Len()+len(p)) > b.limit {
		b.over = true
		return 0, errOverLimit
	}
	return b.buf.Write(p)
}

// Line runs git and returns its stdout without the trailing newline.
func (r Repo) Line(args ...string) (string, error) {
	out, err := r.Run(args...)
	return strings.TrimRight(string(out), "\n"), err
}

// With returns r with env added.
func (r Repo) With(env ...string) Repo {
	return Repo{Dir: r.Dir, Env: append(append([]string(nil), r.Env...), env...)}
}

// Toplevel returns the root of the work tree holding dir.
func Toplevel(dir string) (string, error) {
	return Repo{Dir: dir}.Line("rev-parse", "--show-toplevel")
}

// Commit resolves rev to a commit id.
func (r Repo) Commit(rev string) (string, error) {
	return r.Line("rev-parse", "--verify", "--quiet", rev+"^{commit}")
}

// Ref returns the commit a ref points to, or "" when the ref does not exist.
func (r Repo) Ref(ref string) (string, error) {
	out, err := r.Line("rev-parse", "--verify", "--quiet", ref+"^{commit}")
	var ge *Error
	if errors.As(err, &ge) && strings.TrimSpace(ge.Stderr) == "" {
		return "", nil // --quiet: a missing ref exits 1 and prints nothing
	}
	return out, err
}

// Show returns the bytes of path at rev; ok is false when rev has no such file. A blob over limit is
// refused before it is read: a branch anyone can push to may hold anything
// (docs/decisions.md#hostile-files-issue-25).
func (r Repo) Show(rev, path string, limit regular.Limit) (data []byte, ok bool, err error) {
	size, err := r.Line("cat-file", "-s", rev+":"+path)
	if err != nil {
		return nil, false, nil
	}
	if n, err := strconv.ParseInt(size, 10, 64); err != nil || n > limit.Bytes {
		return nil, true, fmt.Errorf("%s:%s is %s bytes, over the %d-byte limit for %s", Short(rev), path, size, limit.Bytes, limit.Kind)
	}
	data, err = r.Run("cat-file", "blob", rev+":"+path)
	return data, err == nil, err
}

// Short is the first 12 hex digits of a commit id, as messages name it.
func Short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// maxListing bounds a Files listing.
const maxListing = 16 << 20

// Files lists the files under dir (a path relative to the repository root, slash-separated) at rev,
// relative to the repository root.
func (r Repo) Files(rev, dir string) ([]string, error) {
	// A store of ten years holds some ten thousand file names (~0.5 MB): a listing past 16 MiB was
	// pushed, not written.
	out, err := r.RunLimit(maxListing, "ls-tree", "-r", "-z", "--name-only", "--full-tree", rev, "--", dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}
