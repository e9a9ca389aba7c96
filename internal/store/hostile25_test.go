package store

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A symbolic link at weights/proposals or at the reports directory (a pull request can commit one) would
// take every write outside the project: writes refuse, naming it, and verify reports it
// (docs/decisions.md#hostile-files-issue-25).
func TestSymlinkedWriteDirectoriesAreRefused(t *testing.T) {
	for _, sub := range []string{ProposalsDir, "reports"} {
		s, dir := freshStore(t)
		outside := t.TempDir()
		s.ReportsDir = filepath.Join(filepath.Dir(dir), "reports")
		link := filepath.Join(dir, ProposalsDir)
		if sub == "reports" {
			link = s.ReportsDir
		}
		if err := os.Symlink(outside, link); err != nil {
			t.Fatal(err)
		}
		_, _, _, err := s.Propose(sampleProposal(t), nil)
		if err == nil || !strings.Contains(err.Error(), link+" is a symbolic link, not a directory") {
			t.Errorf("%s: propose: %v", sub, err)
		}
		if probs := joinProblems(s.Verify()); !strings.Contains(probs, link+": not-regular: is a symbolic link") {
			t.Errorf("%s: verify: %s", sub, probs)
		}
		if entries, _ := os.ReadDir(outside); len(entries) > 0 {
			t.Errorf("%s: a write went outside: %v", sub, entries)
		}
	}
}

// A FIFO or a link at weights/.lock makes no writer hang, and a link is never followed.
func TestHostileLockFile(t *testing.T) {
	s, dir := freshStore(t)
	lock := filepath.Join(dir, LockFile)
	target := filepath.Join(t.TempDir(), "index.lock")
	if err := os.Symlink(target, lock); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.Propose(sampleProposal(t), nil); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("linked lock: %v", err)
	}
	if _, err := os.Lstat(target); err == nil {
		t.Error("the lock's link target was created")
	}
	os.Remove(lock)
	if err := syscall.Mkfifo(lock, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	s.LockTimeout = 200 * time.Millisecond
	done := make(chan error, 1)
	go func() { _, _, _, err := s.Propose(sampleProposal(t), nil); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "FIFO") {
			t.Errorf("FIFO lock: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a FIFO at weights/.lock hangs the writer")
	}
}

// A version file over the weights limit (a sparse 1 GiB one costs no disk) is not read: verify reports
// it as too large, readers refuse, and nothing holds its size in memory.
func TestOversizedVersionFileIsNotRead(t *testing.T) {
	s, dir := freshStore(t)
	f, err := os.Create(filepath.Join(dir, "v0002.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if probs := joinProblems(s.Verify()); !strings.Contains(probs, "v0002.toml: too-large: holds 1073741824 bytes, more than a weights version file may (262144)") {
		t.Errorf("verify: %s", probs)
	}
	readersRefuse(t, dir, "too-large")
}
