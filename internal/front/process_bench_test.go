//go:build linux

package front_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/traceparse/tracegen"
)

var traceSizes = flag.String("trace-sizes", "16MB", "comma-separated log `sizes` for BenchmarkTraceProcess (the issue's set: 16MB,256MB,1GB)")

// BenchmarkTraceProcess times `tune trace --last 0 --format jsonl LOG >/dev/null` as a whole process,
// the light binary built without cgo as `make build` builds it: what a user waits for, start-up and
// the first touch of every page included, which the in-process BenchmarkStreamJSONL
// (internal/traceout) leaves out. `cat LOG` runs next to it, and so does the reference reader when
// TUNE_BENCH_REFERENCE holds its command line (the log is appended), e.g.
// TUNE_BENCH_REFERENCE='python3 store_reader.py'. Logs are generated (tracegen) at each size of
// -trace-sizes. Besides MB/s of the log it reports cpu-ns/op (the child's user+system time) and, when
// GNU time is installed, peak-RSS-MB from one more run under /usr/bin/time: the maxrss that wait4
// gives for a child of this process is no use, since a child started by a Go program shares its
// memory until exec, and exec records that memory's high-water mark as the child's. The ratios come
// from benchstat:
//
//	go test ./internal/front -run '^$' -bench TraceProcess -trace-sizes 16MB,256MB,1GB -count 6 | tee t.txt
//	benchstat -col /cmd t.txt
func BenchmarkTraceProcess(b *testing.B) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go tool:", err)
	}
	dir := b.TempDir()
	bin := filepath.Join(dir, "tune")
	build := exec.Command(goTool, "build", "-o", bin, "./cmd/tune")
	build.Dir = repoRoot()
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	commands := []struct {
		name string
		argv []string
	}{
		{"tune", []string{bin, "trace", "--last", "0", "--format", "jsonl"}},
		{"cat", []string{"cat"}},
	}
	if ref := strings.Fields(os.Getenv("TUNE_BENCH_REFERENCE")); len(ref) > 0 {
		commands = append(commands, struct {
			name string
			argv []string
		}{"reference", ref})
	}
	for _, size := range strings.Split(*traceSizes, ",") {
		n, err := tracegen.ParseSize(size)
		if err != nil {
			b.Fatal(err)
		}
		log := filepath.Join(dir, size+".log")
		written, err := writeTraceLog(log, n)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range commands {
			b.Run("size="+size+"/cmd="+c.name, func(b *testing.B) {
				b.SetBytes(written)
				argv := append(c.argv[:len(c.argv):len(c.argv)], log)
				var cpu time.Duration
				for b.Loop() {
					state := runToDevNull(b, argv)
					cpu += state.UserTime() + state.SystemTime()
				}
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				if mb, ok := peakRSS(b, argv); ok {
					b.ReportMetric(mb, "peak-RSS-MB")
				}
			})
		}
	}
}

func writeTraceLog(path string, size int64) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	written, err := tracegen.Write(f, size, tracegen.DefaultTail)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return written, err
}

// peakRSS runs argv once under GNU time and returns its peak resident set in MB; false without
// /usr/bin/time.
func peakRSS(b *testing.B, argv []string) (float64, bool) {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		return 0, false
	}
	out := filepath.Join(b.TempDir(), "maxrss")
	runToDevNull(b, append([]string{"/usr/bin/time", "-f", "%M", "-o", out}, argv...))
	data, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	kb, err := strconv.ParseFloat(strings.TrimSpace(string(data)), 64)
	if err != nil {
		b.Fatalf("/usr/bin/time wrote %q: %v", data, err)
	}
	return kb / 1024, true
}

// runToDevNull runs argv with its output thrown away and fails b if it does not exit 0.
func runToDevNull(b *testing.B, argv []string) *os.ProcessState {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devNull.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = devNull, &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, stderr.Bytes())
	}
	return cmd.ProcessState
}
