package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fullDisk accepts n bytes, then fails as a full disk does.
type fullDisk struct {
	w io.Writer
	n int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) > d.n {
		m, _ := d.w.Write(p[:d.n])
		d.n = 0
		return m, syscall.ENOSPC
	}
	d.n -= len(p)
	return d.w.Write(p)
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestCreateCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.parquet")
	f, err := Create(path, Public, false)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "part")
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the final name exists before Commit")
	}
	io.WriteString(f, "-whole")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "part-whole" {
		t.Errorf("content %q", data)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("left behind: %v", names)
	}
	// An existing file: refused without replace, at Create and (when it appears meanwhile) at Commit.
	if _, err := Create(path, Public, false); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("existing file: %v", err)
	}
	other := filepath.Join(dir, "late.parquet")
	f, _ = Create(other, Public, false)
	io.WriteString(f, "mine")
	os.WriteFile(other, []byte("theirs"), 0o644)
	if err := f.Commit(); !errors.Is(err, ErrExists) {
		t.Errorf("a file that appeared before Commit: %v", err)
	}
	if data, _ := os.ReadFile(other); string(data) != "theirs" {
		t.Errorf("overwritten: %q", data)
	}
	// With replace, the new content wins.
	f, _ = Create(path, Public, true)
	io.WriteString(f, "new")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "new" {
		t.Errorf("replace: %q", data)
	}
	if names := entries(t, dir); len(names) != 2 {
		t.Errorf("left behind: %v", names)
	}
}

// TestCreateFullDisk: a write that fails leaves neither the final name nor a temp file once aborted,
// and a file replaced with --force keeps its old content.
func TestCreateFullDisk(t *testing.T) {
	wrapWriter = func(w io.Writer) io.Writer { return &fullDisk{w: w, n: 10} }
	defer func() { wrapWriter = nil }()
	dir := t.TempDir()
	path := filepath.Join(dir, "out.parquet")
	os.WriteFile(path, []byte("old"), 0o644)
	f, err := Create(path, Public, true)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.WriteString(f, strings.Repeat("x", 100))
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), path) {
		t.Fatalf("write error %v", err)
	}
	f.Abort()
	if data, _ := os.ReadFile(path); string(data) != "old" {
		t.Errorf("the old file became %q", data)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("left behind: %v", names)
	}
}

func TestCreateUnwritable(t *testing.T) {
	if _, err := Create(filepath.Join(t.TempDir(), "no", "such", "dir", "x.parquet"), Public, false); err == nil {
		t.Error("a missing directory was accepted")
	}
}

// TestReadyThenCommitOrAbort: Ready makes the temp file durable without naming it; Commit then names
// it, Abort drops it, and neither leaves a temp file.
func TestReadyThenCommitOrAbort(t *testing.T) {
	dir := t.TempDir()
	for _, commit := range []bool{true, false} {
		path := filepath.Join(dir, "day.parquet")
		os.Remove(path)
		f, err := Create(path, Public, false)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(f, "whole")
		if err := f.Ready(); err != nil {
			t.Fatal(err)
		}
		if err := f.Ready(); err != nil { // twice is once
			t.Fatal(err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("Ready named the file")
		}
		if commit {
			if err := f.Commit(); err != nil {
				t.Fatal(err)
			}
			if data, _ := os.ReadFile(path); string(data) != "whole" {
				t.Errorf("content %q", data)
			}
			if err := f.Commit(); err == nil {
				t.Error("a second Commit succeeded")
			}
		} else {
			f.Abort()
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Error("Abort after Ready left the file")
			}
		}
		if names := entries(t, dir); len(names) != map[bool]int{true: 1, false: 0}[commit] {
			t.Errorf("commit=%v: left %v", commit, names)
		}
	}
}

// TestCreateIn: the temp file lies in the given directory, hidden and not named like the target, and
// the target's directory need only exist at Commit.
func TestCreateIn(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "day=2026-02-10", "requests.parquet")
	f, err := CreateIn(root, path, Public, false)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "day")
	names := entries(t, root)
	if len(names) != 1 || !strings.HasPrefix(names[0], ".day=2026-02-10.requests.parquet.tmp-") {
		t.Fatalf("root holds %v", names)
	}
	if err := f.Ready(); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Dir(path), 0o755)
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "day" || len(entries(t, root)) != 1 {
		t.Errorf("content %q, root %v", data, entries(t, root))
	}
	// Without the directory, Commit fails and leaves nothing.
	g, _ := CreateIn(root, filepath.Join(root, "day=2026-02-11", "requests.parquet"), Public, false)
	io.WriteString(g, "x")
	if err := g.Commit(); err == nil {
		t.Error("a commit into a missing directory succeeded")
	}
	if names := entries(t, root); len(names) != 1 {
		t.Errorf("left behind: %v", names)
	}
}
