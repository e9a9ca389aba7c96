package store

import (
	"os"
	"testing"
)

// TestMakeBenchStore writes a 20-version store to $TUNE_MAKE_STORE, for timing whole processes (it is
// skipped unless the variable is set).
func TestMakeBenchStore(t *testing.T) {
	out := os.Getenv("TUNE_MAKE_STORE")
	if out == "" {
		t.Skip("set TUNE_MAKE_STORE to a directory to write a 20-version store there")
	}
	_, dir := benchStore(t, 20)
	if err := os.CopyFS(out, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
}
