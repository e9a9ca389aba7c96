package app

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ldd-tools/tune/internal/store"
)

// A state file is written by a pull request as easily as by tune: one of another key must cost no
// more than a look at its key, not the decoding of whatever it holds. Tiny JSON values that each
// decode into a large struct (an empty kept row, a warning) would otherwise make the 64 MiB a state
// may hold cost gigabytes (docs/decisions.md#fourth-review-the-watch-state-and-explore).
func TestStateOfAnotherKeyCostsItsKeyOnly(t *testing.T) {
	const rows = 1 << 19 // 1.5 MB of "{},"
	for _, c := range []struct {
		file string
		head string
		tail string
		load func(dir string)
	}{
		{store.WatchStateFile, `{"format":1,"key":"not this one","logs":[{"path":"a","offset":1,"line":2,"state":{"source":"a","kept":[`, `{}]}}]}`,
			func(dir string) { loadWatchState(dir, "k", []string{"a"}, []string{"a"}) }},
		{store.DetectStateFile, `{"format":5,"key":"not this one","logs":[{"path":"a","warnings":[`, `{}]}]}`,
			func(dir string) { (&traceLogs{}).loadDetectState(dir, "k") }},
	} {
		t.Run(c.file, func(t *testing.T) {
			dir := t.TempDir()
			data := append([]byte(c.head), bytes.Repeat([]byte("{},"), rows)...)
			data = append(data, c.tail...)
			if err := os.MkdirAll(filepath.Join(dir, store.CacheDir), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, store.CacheDir, c.file), data, 0o644); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			c.load(dir)
			runtime.ReadMemStats(&after)
			if got := after.TotalAlloc - before.TotalAlloc; got > 4*uint64(len(data)) {
				t.Errorf("a %d-byte state of another key: %d bytes allocated to refuse it", len(data), got)
			}
		})
	}
}
