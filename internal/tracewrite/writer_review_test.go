package tracewrite

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ldd-tools/tune/internal/redact"
)

// The review of the writing side: the log's lock never follows a link (one committed at
// .ldd/trace.log.lock to ../.git/index.lock made every score create git's lock) and never blocks on a
// FIFO.
func TestAppendLockIsNeverALinkOrAFIFO(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "index.lock")
	path := filepath.Join(dir, "trace.log")
	if err := os.Symlink(target, path+".lock"); err != nil {
		t.Fatal(err)
	}
	if err := Append(path, "entry"); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Append with a linked lock: %v, want a refusal", err)
	}
	if _, err := os.Lstat(target); err == nil {
		t.Error("the link's target was created")
	}
	fifo := filepath.Join(dir, "f.log")
	if err := syscall.Mkfifo(fifo+".lock", 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() { done <- Append(fifo, "entry") }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "FIFO") {
			t.Errorf("Append with a FIFO lock: %v, want a refusal", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Append blocked on a FIFO lock")
	}
}

// Two writers stamping in the same microsecond get two stamps: the stamp is the task's identity. A
// clock stepped back a few seconds keeps them going up (the re-review: one moved the note back and a
// later stamp repeated an earlier one). A stamp in the lock file far ahead of the clock, or garbage
// there, is not followed, and is replaced.
func TestAppendAtNeverRepeatsAStamp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.log")
	line := func(stamp time.Time) (string, error) {
		return stamp.Format(TimestampLayout) + "  meta  L0/reflex  task=t", nil
	}
	at := func(tm time.Time) func() time.Time { return func() time.Time { return tm } }
	ten := time.Date(2026, 12, 7, 10, 0, 0, 123456789, time.UTC)
	var stamps []time.Time
	for _, now := range []time.Time{ten, ten, ten.Add(-5 * time.Second), ten.Add(-5 * time.Second), ten} {
		wrote, err := AppendAt(path, at(now), line)
		if err != nil {
			t.Fatal(err)
		}
		stamps = append(stamps, wrote.Stamp)
	}
	first := ten.Truncate(time.Microsecond)
	for i, s := range stamps {
		if want := first.Add(time.Duration(i) * time.Microsecond); !s.Equal(want) {
			t.Errorf("stamp %d: %s, want %s", i, s.Format(TimestampLayout), want.Format(TimestampLayout))
		}
	}
	data, _ := os.ReadFile(path)
	if lines := strings.Split(strings.TrimSpace(string(data)), "\n"); len(lines) != 5 || !strings.HasPrefix(lines[4], first.Add(4*time.Microsecond).Format(TimestampLayout)) {
		t.Errorf("the log:\n%s", data)
	}
	later := ten.Add(time.Hour)
	for _, note := range []string{"2099-01-01T00:00:00.000000Z", "garbage", strings.Repeat("9", 100)} {
		if err := os.WriteFile(path+".lock", []byte(note), 0o644); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			want := later.Truncate(time.Microsecond).Add(time.Duration(i) * time.Microsecond)
			if wrote, err := AppendAt(path, at(later), line); err != nil || !wrote.Stamp.Equal(want) {
				t.Errorf("note %.20q, write %d: stamp %s, %v: want %s", note, i, wrote.Stamp, err, want)
			}
		}
	}
}

type failingFile struct {
	wrote     int
	truncated int64
}

func (f *failingFile) Write(b []byte) (int, error) {
	f.wrote = len(b) / 2
	return f.wrote, errors.New("no space left on device")
}

func (f *failingFile) Truncate(n int64) error { f.truncated = n; return nil }

// A write that fails halfway (a full disk) leaves the log as it was: the part written is cut off.
func TestAFailedWriteIsCutBack(t *testing.T) {
	f := &failingFile{truncated: -1}
	if err := writeOrCut(f, 4000, []byte("2026-12-07T10:00:00.000000Z  meta  L0/reflex  signals=explicit-bugfix:-5,single-file:-3\n")); err == nil {
		t.Fatal("the write's error was lost")
	}
	if f.truncated != 4000 {
		t.Errorf("cut back to %d, want 4000", f.truncated)
	}
}

// Control characters and bytes that are not UTF-8 never reach the log: the reader would warn on them,
// and an ESC reaches the terminal of whoever reads the log.
func TestQuoteCleansControlsAndBadUTF8(t *testing.T) {
	for in, want := range map[string]string{
		"fix \x00 nul":            `"fix   nul"`,
		"esc\x1b[31mred":          `"esc [31mred"`,
		"bad \xff\xfe bytes":      "\"bad \uFFFD bytes\"",
		"line\r\nbreak\rand\nend": `"line break and end"`,
		"tab\there":               "\"tab\there\"",
		"del\x7f":                 `"del "`,
		"ab\u202ecd\u2066e\u2069": `"ab cd e "`, // bidi override and isolates: a cat of the log reorders nothing
		"rtl\u200fmark":           "rtl\u200fmark",
	} {
		got := Quote(in)
		if got != want {
			t.Errorf("Quote(%q) = %q, want %q", in, got, want)
		}
		if !utf8.ValidString(got) || strings.ContainsFunc(got, isControl) {
			t.Errorf("Quote(%q) = %q holds a control or bad UTF-8", in, got)
		}
	}
}

// The title of a long prompt is the title of its whole text: TitleInput keeps what Title reads plus a
// margin, so a secret that begins in the title is redacted whole.
func TestTitleInputGivesTheSameTitle(t *testing.T) {
	secret := "ghp_" + strings.Repeat("a1B2c3D4", 5)
	prompts := []string{
		"",
		"fix the typo",
		strings.Repeat(" \n\t", 50000) + "fix the typo after a lot of space",
		strings.Repeat("word ", 100000),
		"token " + secret + " " + strings.Repeat("x", 200000),
		strings.Repeat("é", 90) + strings.Repeat("ü", 100000),
		"use " + secret,
	}
	for i, p := range prompts {
		in := TitleInput(p, 80)
		if !strings.HasPrefix(p, in) {
			t.Fatalf("prompt %d: TitleInput is not a prefix", i)
		}
		if got, want := Title(redact.String(in), 80), Title(redact.String(p), 80); got != want {
			t.Errorf("prompt %d: title %q from the input, %q from the whole prompt", i, got, want)
		}
		if (i == 3 || i == 4 || i == 5) && len(in) > redact.Margin+1000 {
			t.Errorf("prompt %d: TitleInput kept %d bytes of %d", i, len(in), len(p))
		}
	}
}

// A directory as the log is refused before anything is made (it created the directory and a lock in it).
func TestAppendRefusesADirectoryBeforeMakingIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	if err := Append(dir+"/", "entry"); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Append to logs/: %v", err)
	}
	if _, err := os.Lstat(dir); err == nil {
		t.Error("logs/ was created")
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Append(dir, "entry"); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Append to a directory: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".lock")); err == nil {
		t.Error("a lock was made in the directory")
	}
}
