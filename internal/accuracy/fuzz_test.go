package accuracy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/traceparse"
)

// FuzzBuild: whatever a log holds, the report's counts add up, every rate lies in its interval inside
// [0, 1], and every task read beyond the reference has a reason. Seeds: the test logs.
func FuzzBuild(f *testing.F) {
	logs, _ := filepath.Glob("testdata/*.log")
	for _, l := range logs {
		if data, err := os.ReadFile(l); err == nil && len(data) < 8<<10 {
			f.Add(string(data))
		}
	}
	f.Add("2026-01-01T00:00:00Z  meta  L1/diagnostic  signals=a:1,:2,b:x,c:+_1  task=t\n2026-01-01T00:00:01Z  inner  close  terminal=\n")
	f.Fuzz(func(t *testing.T, log string) {
		res, err := traceparse.Parse(strings.NewReader(log), "fuzz.log")
		if err != nil {
			return
		}
		rep := Build(res.Tasks, Options{Days: 36500, Now: now})
		sum := 0
		for i := range Levels {
			ls, iv := rep.PerLevel.At(i), rep.Intervals.At(i)
			sum += ls.N
			for _, r := range []Rate{iv.Complete, iv.Overkill, iv.Underkill} {
				if r.N != ls.N || r.K < 0 || r.K > r.N || r.Lo < 0 || r.Hi > 1 || r.Lo > r.Rate || r.Rate > r.Hi {
					t.Fatalf("level %s: bad rate %+v", Levels[i], r)
				}
			}
		}
		if sum != rep.NTasksWithLevel || rep.NTasksWithLevel > rep.NTasksTotal {
			t.Fatalf("counts: per level %d, with level %d, total %d", sum, rep.NTasksWithLevel, rep.NTasksTotal)
		}
		for _, b := range rep.Beyond.Tasks {
			if len(b.Reasons) == 0 {
				t.Fatalf("task %s:%d beyond the reference without a reason", b.Log, b.Line)
			}
		}
	})
}

func FuzzReferenceSignalNames(f *testing.F) {
	for _, s := range []string{"explicit-bugfix:-5,layer-crossings:+2", "components>=3:+2", "a:b:+1", "x:+", "", " greenfield : +3 , bad", "a:1_0,b:١"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		names := referenceSignalNames(raw)
		seen := map[string]bool{}
		for _, n := range names {
			if seen[n] {
				t.Fatalf("%q: name %q twice", raw, n)
			}
			seen[n] = true
		}
	})
}
