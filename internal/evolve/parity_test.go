package evolve

import (
	"os"
	"path/filepath"
	"testing"
)

func loadParityT(t testing.TB) *Parity {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot(), "testdata", "ldd", "parity.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ReadParity(f, "parity.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return p
}
