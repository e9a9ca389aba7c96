package accuracy

import (
	"flag"
	"os"
	"testing"
)

var gen = flag.Bool("gen", false, "rewrite testdata/generated-*.log from writeHistory (then recompute the reference values, see testdata/SOURCES.md)")

// generated are the synthetic histories: file name, seed, tasks.
var generated = []struct {
	name string
	seed uint64
	n    int
}{
	{"generated-a.log", 1, 120},
	{"generated-b.log", 2, 60},
	{"generated-c.log", 3, 9},
}

func TestGenerate(t *testing.T) {
	if !*gen {
		t.Skip("-gen not given")
	}
	for _, g := range generated {
		f, err := os.Create("testdata/" + g.name)
		if err != nil {
			t.Fatal(err)
		}
		writeHistory(f, g.seed, g.n)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
