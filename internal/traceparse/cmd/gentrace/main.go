// Command gentrace writes a synthetic trace log for benchmarks (see package tracegen): filler tasks,
// then a fixed tail of tasks that is byte-identical whatever the size, so tail reads on logs of
// different sizes can be compared.
//
//	go run ./internal/traceparse/cmd/gentrace -size 300MB -o corpus/trace-300mb.log
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ldd-tools/tune/internal/traceparse/tracegen"
)

func main() {
	size := flag.String("size", "1MB", "approximate `size` of the log: bytes, or a number with KB, MB or GB (powers of 1024)")
	out := flag.String("o", "", "output `file` (its directory is created); required")
	tail := flag.Int("tail", tracegen.DefaultTail, "number of fixed `tasks` at the end of the log")
	flag.Parse()
	n, err := tracegen.ParseSize(*size)
	if err != nil || *out == "" || *tail < 0 {
		fmt.Fprintln(os.Stderr, "usage: gentrace -size 300MB -o corpus/trace-300mb.log [-tail 20]")
		if err != nil {
			fmt.Fprintln(os.Stderr, "gentrace:", err)
		}
		os.Exit(2)
	}
	if err := write(*out, n, *tail); err != nil {
		fmt.Fprintln(os.Stderr, "gentrace:", err)
		os.Exit(1)
	}
}

func write(path string, size int64, tail int) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	written, err := tracegen.Write(f, size, tail)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d bytes, ends with %d fixed tasks\n", path, written, tail)
	return nil
}
