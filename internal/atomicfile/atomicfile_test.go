package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesWholeFileWithMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	for _, c := range []struct {
		data string
		perm os.FileMode
	}{{"first", Public}, {"second, longer", Public}, {"secret", Private}} {
		if err := Write(path, []byte(c.data), c.perm); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != c.data {
			t.Fatalf("read %q, %v; want %q", got, err, c.data)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != c.perm {
			t.Errorf("mode %v, want %v", fi.Mode().Perm(), c.perm)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temp files left behind: %v", entries)
	}
}

func TestWriteIntoMissingDirectoryFailsCleanly(t *testing.T) {
	if err := Write(filepath.Join(t.TempDir(), "no", "f"), []byte("x"), Public); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
}
