package atomicfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/faultpoint"
)

// diskState is what a process killed at a fault point leaves on disk: the final file's content and the
// temp files' contents.
func diskState(t *testing.T, path string) string {
	t.Helper()
	final, err := os.ReadFile(path)
	if err != nil {
		final = []byte("<absent>")
	}
	var temps []string
	es, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range es {
		if strings.Contains(e.Name(), ".tmp-") {
			data, _ := os.ReadFile(filepath.Join(filepath.Dir(path), e.Name()))
			temps = append(temps, string(data))
		}
	}
	return "final=" + string(final) + " temps=" + strings.Join(temps, ",")
}

// Every fault point of an atomic write is reached in order, each at the state its doc names: the temp
// file empty (create, write), whole (fsync, rename), renamed (dirsync, before the directory's fsync).
func TestFaultPointsOfAWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v0002.toml")
	if err := Write(path, []byte("old"), Public); err != nil {
		t.Fatal(err)
	}
	var got []string
	h := faultpoint.Hook(func(op, p string) { got = append(got, op+" "+filepath.Base(p)+": "+diskState(t, path)) })
	faultpoint.Installed.Store(&h)
	defer faultpoint.Installed.Store(nil)
	if err := Write(path, []byte("new"), Public); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"create v0002.toml: final=old temps=",
		"write v0002.toml: final=old temps=",
		"fsync v0002.toml: final=old temps=new",
		"rename v0002.toml: final=old temps=new",
		"dirsync v0002.toml: final=new temps=",
		"dirsync " + filepath.Base(dir) + ": final=new temps=",
	}
	if !slices.Equal(got, want) {
		t.Errorf("fault points:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A streamed file reaches write before each of its writes (a kill there leaves part of the content in
// the temp file), and a file that must not replace another is linked, then its temp name removed.
func TestFaultPointsOfAStreamedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	var got []string
	h := faultpoint.Hook(func(op, p string) { got = append(got, op+" "+diskState(t, path)) })
	faultpoint.Installed.Store(&h)
	defer faultpoint.Installed.Store(nil)
	f, err := Create(path, Public, false)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("a"))
	f.Write([]byte("b"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"create final=<absent> temps=",
		"write final=<absent> temps=",
		"write final=<absent> temps=a",
		"fsync final=<absent> temps=ab",
		"rename final=<absent> temps=ab",
		"remove final=ab temps=ab",
		"dirsync final=ab temps=",
	}
	if !slices.Equal(got, want) {
		t.Errorf("fault points:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
