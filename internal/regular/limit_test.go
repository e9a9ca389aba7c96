package regular

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A file over its kind's limit is refused by name before it is read; a device that claims size 0 is
// refused as a device, never read to the limit.
func TestReadLimitedRefusesWhatIsTooLarge(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "v0002.toml")
	lim := Limit{Kind: "a test file", Bytes: 10}
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadLimitedNoFollow(p, lim); err != nil || string(data) != "0123456789" {
		t.Fatalf("at the limit: %q %v", data, err)
	}
	if err := os.WriteFile(p, []byte("0123456789a"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadLimited(p, lim)
	var big *TooLargeError
	if !errors.As(err, &big) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "a test file holds at most 10 bytes") {
		t.Fatalf("over the limit: %v", err)
	}
	// a sparse 1 GiB file costs nothing to refuse
	sparse := filepath.Join(dir, "sparse")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadLimited(sparse, WeightsFile); !errors.As(err, &big) || big.Size != 1<<30 {
		t.Fatalf("sparse: %v", err)
	}
	if _, err := ReadLimited("/dev/zero", WeightsFile); err == nil || !strings.Contains(err.Error(), "device") {
		t.Fatalf("/dev/zero: %v", err)
	}
}

// A lock file is never a link (a link to ../.git/index.lock must not create git's lock) nor a FIFO (whose
// open would block past any timeout); a held lock times out.
func TestTryLockRefusesLinksAndFIFOsAndTimesOut(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "index.lock")
	link := filepath.Join(dir, ".nightly.lock")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if l, err := TryLock(link, time.Second); err == nil || l != nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("link: %v %v", l, err)
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the link's target was created: %v", err)
	}
	fifo := filepath.Join(dir, ".lock")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := TryLock(fifo, time.Second); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "FIFO") {
			t.Fatalf("FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("locking a FIFO hangs")
	}
	plain := filepath.Join(dir, "plain.lock")
	held, err := TryLock(plain, 0)
	if err != nil || held == nil {
		t.Fatalf("first lock: %v %v", held, err)
	}
	start := time.Now()
	if l, err := TryLock(plain, 100*time.Millisecond); l != nil || err != nil {
		t.Fatalf("second lock while held: %v %v", l, err)
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > 3*time.Second {
		t.Fatalf("the wait took %v", d)
	}
	held.Unlock()
	if l, err := TryLock(plain, 0); l == nil || err != nil {
		t.Fatalf("after unlock: %v %v", l, err)
	} else {
		l.Unlock()
	}
}
