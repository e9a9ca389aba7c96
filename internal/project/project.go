// Package project finds a tune project and its trace log from any directory inside it, the way git
// finds its repository: by walking up the parent directories (docs/decisions.md#project-discovery).
//
//   - The project root is the nearest directory holding ConfigFile (tune.toml, written by `tune init`);
//     the weights store, the fixtures and the reports default to directories next to it.
//   - The trace log is the nearest TraceLog (.ldd/trace.log); the walk stops after the repository root
//     (a directory holding .git) or at the filesystem root, so a log of an enclosing repository is never
//     read by mistake.
package project

import (
	"errors"
	"fmt"
	"github.com/ldd-tools/tune/internal/regular"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ConfigFile marks a project root.
const ConfigFile = "tune.toml"

// TraceLog is where agents write their trace, relative to a project directory.
const TraceLog = ".ldd/trace.log"

// ErrNoTraceLog is returned by FindTraceLog when no directory on the way up holds a trace log.
var ErrNoTraceLog = errors.New("no trace log")

// FindRoot returns the nearest directory at or above dir that holds ConfigFile, or "" when none does.
// Any entry of that name but a directory marks the root, a FIFO, a device or a link included: the
// readers of tune.toml then refuse it with an error naming it, where skipping it would read the
// directory as no project and take a parent's tune.toml in its place
// (docs/decisions.md#fourth-review-the-watch-state-and-explore).
func FindRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if fi, err := os.Lstat(filepath.Join(dir, ConfigFile)); err == nil && !fi.IsDir() {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// FindTraceLog returns the nearest TraceLog at or above dir. The walk ends after the first directory
// that holds .git (the repository root) or at the filesystem root; the error then names where it looked.
func FindTraceLog(dir string) (string, error) {
	start, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	dir = start
	for {
		p := filepath.Join(dir, filepath.FromSlash(TraceLog))
		if isFile(p) {
			return p, nil
		}
		if exists(filepath.Join(dir, ".git")) {
			return "", fmt.Errorf("%w: no %s in %s or its parents up to the repository root %s (pass the LOG paths to read)", ErrNoTraceLog, TraceLog, start, dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: no %s in %s or any parent directory (pass the LOG paths to read)", ErrNoTraceLog, TraceLog, start)
		}
		dir = parent
	}
}

// DefaultTraceLog is the trace log a command reads when no LOG is named, relative to wd: the project's
// own (root/.ldd/trace.log) when root is a project root that has one, else the nearest TraceLog at or
// above wd. here is true when it is wd's own (nothing to say about which one is read). stray lists the
// trace logs between wd and a root that has its own: a `.ldd/` created by a hook run from a
// subdirectory, which is named so it is never read, or ignored, in silence.
func DefaultTraceLog(wd, root string) (path string, here bool, stray []string, err error) {
	if root != "" && isFile(filepath.Join(root, filepath.FromSlash(TraceLog))) {
		for dir := wd; dir != root && strings.HasPrefix(dir, root+string(filepath.Separator)); dir = filepath.Dir(dir) {
			if p := filepath.Join(dir, filepath.FromSlash(TraceLog)); isFile(p) {
				stray = append(stray, rel(wd, p))
			}
		}
		if wd == root {
			return TraceLog, true, stray, nil
		}
		return rel(wd, filepath.Join(root, filepath.FromSlash(TraceLog))), false, stray, nil
	}
	p, err := FindTraceLog(wd)
	if err != nil {
		return "", false, nil, err
	}
	if filepath.Dir(filepath.Dir(p)) == wd {
		return TraceLog, true, nil, nil
	}
	return rel(wd, p), false, nil, nil
}

// ProjectTraceLog is the trace log of the project wd lies in, wherever below it wd is: TraceLog in the
// project root (the nearest tune.toml), else in the repository root (the nearest .git), else in wd.
// `tune score --project-log` appends to it, so the hook line writes to one log from any subdirectory.
func ProjectTraceLog(wd string) (string, error) {
	root, err := FindRoot(wd)
	if err != nil {
		return "", err
	}
	if root == "" {
		if root, err = filepath.Abs(wd); err != nil {
			return "", err
		}
		for dir := root; ; dir = filepath.Dir(dir) {
			if exists(filepath.Join(dir, ".git")) {
				root = dir
				break
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return filepath.Join(root, filepath.FromSlash(TraceLog)), nil
}

func rel(wd, p string) string {
	if r, err := filepath.Rel(wd, p); err == nil {
		return r
	}
	return p
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}

// Dir is one project directory: the flag and environment variable that choose it, its name under the
// project root, and the value to update.
type Dir struct {
	Flag, Env, Sub string
	Value          *string
}

// Resolve finds the project root above wd and points every dir that neither its flag (changed) nor its
// environment variable chose at the root's sub-directory. builtin is true when no project was found
// and no dir was chosen: commands that only read may then use what the binary carries.
func Resolve(wd string, changed func(flag string) bool, getenv func(string) string, dirs ...Dir) (root string, builtin bool, err error) {
	if root, err = FindRoot(wd); err != nil {
		return "", false, err
	}
	builtin = root == ""
	for _, d := range dirs {
		if changed(d.Flag) || getenv(d.Env) != "" {
			builtin = false
			continue
		}
		if root != "" {
			*d.Value = filepath.Join(root, d.Sub)
		}
	}
	return root, builtin, nil
}

// ReadConfig reads a config file within regular.ConfigFile. The project's own tune.toml (named false:
// found by walking up, or "tune.toml here") is read without following a link: a pull request can make
// it a link to /proc/self/environ or a file outside the project, whose bytes a TOML error would quote
// into a CI log (the ninth review). A file a user named (--config, TUNE_CONFIG) may be a link.
func ReadConfig(path string, named bool) ([]byte, error) {
	if named {
		return regular.ReadLimited(path, regular.ConfigFile)
	}
	return regular.ReadLimitedNoFollow(path, regular.ConfigFile)
}

// Shown is p as the user names it from the working directory: relative when p is under it (the path
// as given or through the links it holds), else p. A relative p is already named from there. For the
// paths text output shows and the commands a message tells the user to run.
func Shown(p string) string {
	if !filepath.IsAbs(p) {
		return p
	}
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	dirs := []string{wd}
	if real, err := filepath.EvalSymlinks(wd); err == nil && real != wd {
		dirs = append(dirs, real)
	}
	for _, d := range dirs {
		if r, err := filepath.Rel(d, p); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
			return r
		}
	}
	return p
}
