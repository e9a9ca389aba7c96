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

func TestRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	cases := []struct {
		path     string
		follow   string // want from ReadFile: "" ok, else a substring of the error
		noFollow string // want from ReadFileNoFollow
	}{
		{file, "", ""},
		{link, "", "symbolic link"},
		{fifo, "FIFO", "FIFO"},
		{dir, "directory", "directory"},
		{"/dev/zero", "device", "device"},
	}
	for _, c := range cases {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for _, v := range []struct {
				read func(string) ([]byte, error)
				want string
			}{{readFile, c.follow}, {readFileNoFollow, c.noFollow}} {
				data, err := v.read(c.path)
				switch {
				case v.want == "" && (err != nil || string(data) != "hello\n"):
					t.Errorf("%s: %q, %v", c.path, data, err)
				case v.want != "" && (err == nil || !strings.Contains(err.Error(), v.want)):
					t.Errorf("%s: want an error about %q, got %v", c.path, v.want, err)
				case v.want != "":
					var re *Error
					if !errors.As(err, &re) || !strings.Contains(err.Error(), c.path) {
						t.Errorf("%s: the error is not a *regular.Error naming the path: %v", c.path, err)
					}
				}
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: reading hangs", c.path)
		}
	}
}

func readFile(p string) ([]byte, error)         { return ReadLimited(p, SmallText) }
func readFileNoFollow(p string) ([]byte, error) { return ReadLimitedNoFollow(p, SmallText) }
