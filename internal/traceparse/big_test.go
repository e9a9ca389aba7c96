package traceparse_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/traceparse"
)

// writeHostile writes about size bytes of iteration lines to path: with meta false a legacy log
// (no meta line at all: one task), else a thousand ordinary tasks and then one task that holds the
// rest. Every line names a file of its own.
func writeHostile(t *testing.T, path string, size int64, meta bool) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	var line []byte
	if meta {
		for i := range 1000 {
			line = fmt.Appendf(line[:0], "2026-05-01T00:00:00Z  meta  L1/diagnostic  task=t%d  loops=inner\n2026-05-01T00:00:01Z  inner  k=1  loss=0.5\n2026-05-01T00:00:02Z  inner  close  terminal=complete\n", i)
			w.Write(line)
			n += int64(len(line))
		}
		line = fmt.Appendf(line[:0], "2026-05-02T00:00:00Z  meta  L3/structural  task=huge  loops=inner\n")
		w.Write(line)
		n += int64(len(line))
	}
	for k := 1; n < size; k++ {
		line = append(line[:0], "2026-05-02T01:02:03.456789Z  inner  k="...)
		line = strconv.AppendInt(line, int64(k), 10)
		line = append(line, "  skill=root-cause-by-layer  action=\"retry the flaky checkout test\"  loss="...)
		line = strconv.AppendFloat(line, 1/float64(k), 'g', 6, 64)
		line = append(line, "  files=pkg/f"...)
		line = strconv.AppendInt(line, int64(k), 10)
		line = append(line, ".go\n"...)
		w.Write(line)
		n += int64(len(line))
	}
	w.WriteString("2026-05-03T00:00:00Z  inner  close  terminal=complete  loss_final=0.01\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// peakHeap samples the heap in use (objects and free spans the runtime holds, not yet released)
// every few milliseconds while fn runs, and returns the largest sample.
func peakHeap(fn func()) uint64 {
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
	var peak uint64
	var mu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(samples)
			mu.Lock()
			peak = max(peak, samples[0].Value.Uint64()+samples[1].Value.Uint64()+samples[2].Value.Uint64())
			mu.Unlock()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	fn()
	close(done)
	wg.Wait()
	return peak
}

// vmHWM is the process's peak resident set size (Linux), 0 when unknown.
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for l := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(l, []byte("VmHWM:")); ok {
			kb, _ := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestBigTaskMemory (opt-in: TUNE_BIG=1; about 2 GB of disk and a few minutes) reads a 1 GB legacy
// log and a log whose last task is 1 GB the ways `tune trace --last 1`, `tune trace --format jsonl`
// and detect/nightly (ReadWindow) do, and asserts that the heap stays under 100 MB: a task is
// summarised past its bound, and the tail read holds a line and a block, not the tail
// (docs/decisions.md#bounded-memory-per-task). TUNE_BIG_DIR keeps the logs there, for measuring
// whole processes; TUNE_BIG_MB changes the size.
func TestBigTaskMemory(t *testing.T) {
	if os.Getenv("TUNE_BIG") != "1" {
		t.Skip("opt-in: TUNE_BIG=1 (writes two 1 GB logs)")
	}
	size := int64(1 << 30)
	if mb, err := strconv.Atoi(os.Getenv("TUNE_BIG_MB")); err == nil {
		size = int64(mb) << 20
	}
	dir := os.Getenv("TUNE_BIG_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	const limit = 100 << 20
	for _, meta := range []bool{false, true} {
		name := "legacy"
		if meta {
			name = "last-task"
		}
		path := filepath.Join(dir, fmt.Sprintf("big-%s.log", name))
		start := time.Now()
		writeHostile(t, path, size, meta)
		t.Logf("%s: wrote %d MB in %v", name, size>>20, time.Since(start).Round(time.Millisecond))
		reads := map[string]func() (int, error){
			"ReadLast(1)": func() (int, error) {
				res, err := traceparse.ReadLast(path, 1)
				if err != nil {
					return 0, err
				}
				return len(res.Tasks[0].Entries), nil
			},
			"ReadWindow(20)": func() (int, error) {
				res, err := traceparse.ReadWindow(path, 20)
				if err != nil {
					return 0, err
				}
				return len(res.Tasks[len(res.Tasks)-1].Entries), nil
			},
			"StreamLog": func() (int, error) {
				last := 0
				_, err := traceparse.StreamLog(path, func(task *traceparse.Task) error { last = len(task.Entries); return nil }, func(traceparse.Warning) {})
				return last, err
			},
		}
		for _, read := range []string{"ReadLast(1)", "ReadWindow(20)", "StreamLog"} {
			runtime.GC()
			var kept int
			var err error
			start := time.Now()
			peak := peakHeap(func() { kept, err = reads[read]() })
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %s: last task keeps %d entries; peak heap %d MB, process peak RSS so far %d MB, %v",
				name, read, kept, peak>>20, vmHWM()>>20, time.Since(start).Round(time.Millisecond))
			if kept > traceparse.DefaultMaxTaskEntries+1 {
				t.Errorf("%s %s: the last task keeps %d entries", name, read, kept)
			}
			if peak > limit {
				t.Errorf("%s %s: peak heap %d MB, want under %d MB", name, read, peak>>20, limit>>20)
			}
		}
		if hwm := vmHWM(); hwm > limit {
			t.Errorf("%s: peak RSS %d MB, want under %d MB", name, hwm>>20, limit>>20)
		}
		if os.Getenv("TUNE_BIG_DIR") == "" {
			os.Remove(path)
		}
	}
}
