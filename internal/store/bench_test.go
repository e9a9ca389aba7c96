package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/weights"
)

// benchStore builds a store with n versions (n-1 applies, each its own proposal).
func benchStore(b testing.TB, n int) (*Store, string) {
	dir := filepath.Join(b.TempDir(), "weights")
	os.MkdirAll(dir, 0o755)
	data, _ := os.ReadFile(testutil.ReferenceWeightsPath())
	os.WriteFile(filepath.Join(dir, "v0001.toml"), data, 0o644)
	s, err := Open(dir, clock)
	if err != nil {
		b.Fatal(err)
	}
	for i := 1; i < n; i++ {
		p := sampleProposal(b)
		p.Parent = i
		p.Candidate.Signals[weights.Ambiguous] += weights.Half(i)
		if _, err := s.Apply(decide(b, s, p)); err != nil {
			b.Fatal(err)
		}
	}
	return s, dir
}

// BenchmarkLoadPlain is the baseline: parse the active version file directly, no store checks.
func BenchmarkLoadPlain(b *testing.B) {
	s, dir := benchStore(b, 20)
	v, err := s.ActiveVersion()
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, weights.VersionName(v)+".toml")
	for b.Loop() {
		if _, err := weights.Load(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkActiveWeights is what `tune score` pays: read the log and every version, check the active one.
func BenchmarkActiveWeights(b *testing.B) {
	_, dir := benchStore(b, 20)
	for b.Loop() {
		if _, err := ActiveWeights(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify20 checks a store of 20 versions.
func BenchmarkVerify20(b *testing.B) {
	s, _ := benchStore(b, 20)
	for b.Loop() {
		if p := s.Verify(); len(p) > 0 {
			b.Fatal(p)
		}
	}
}

// BenchmarkApply measures one apply (lock, verify, six atomic writes with fsync) on a 20-version store.
func BenchmarkApply(b *testing.B) {
	s, _ := benchStore(b, 20)
	i := 20
	for b.Loop() {
		p := sampleProposal(b)
		p.Parent = i
		p.Candidate.Signals[weights.Greenfield] += weights.Half(i)
		if _, err := s.Apply(decide(b, s, p)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
