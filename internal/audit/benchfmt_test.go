package audit

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// TestBenchfmtReadsBack parses the benchfmt output with x/perf's own reader, groups results by their
// /effort= key as `benchstat -col /effort` does, and checks that benchstat's statistics on them equal
// the report's: the file carries every run and nothing else.
func TestBenchfmtReadsBack(t *testing.T) {
	arms := effortArms(t)
	// Runs laid out as ARM/TASK (--pair-by task): the task must not split the arm into one-run rows.
	for i := range arms {
		for j := range arms[i].Runs {
			arms[i].Runs[j].Task = string(rune('a' + j))
		}
	}
	rep, err := CompareArms(arms, ABOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteAB(&b, rep, "benchfmt"); err != nil {
		t.Fatal(err)
	}
	samples := map[string]map[string][]float64{} // unit → effort → values
	r := benchfmt.NewReader(&b, "ab.txt")
	results := 0
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			results++
			name := string(rec.Name.Full())
			_, effort, ok := strings.Cut(name, "/effort=")
			if !ok || !strings.HasPrefix(name, "Audit/") || strings.Contains(effort, "/") || rec.Iters != 1 {
				t.Fatalf("result name %q", name)
			}
			for _, v := range rec.Values {
				if samples[v.Unit] == nil {
					samples[v.Unit] = map[string][]float64{}
				}
				samples[v.Unit][effort] = append(samples[v.Unit][effort], v.Value)
			}
		case *benchfmt.SyntaxError:
			t.Fatalf("benchfmt: %v", rec)
		}
	}
	if results != len(rep.Runs) {
		t.Fatalf("%d results for %d runs", results, len(rep.Runs))
	}
	thr := benchmath.DefaultThresholds
	for _, mr := range rep.Metrics {
		unit := metricUnit[mr.Name]
		x := benchmath.NewSample(samples[unit][mr.Baseline], &thr)
		y := benchmath.NewSample(samples[unit][mr.Arm], &thr)
		c := benchmath.AssumeNothing.Compare(x, y)
		if mr.P == nil || math.Abs(*mr.P-c.P) > 1e-9 {
			t.Errorf("%s: p %v, benchstat would say %v", mr.Name, mr.P, c.P)
		}
		if got := benchmath.AssumeNothing.Summary(y, 0.95).Center; *mr.Arms[mr.Arm].Median != got {
			t.Errorf("%s: median %v, benchstat %v", mr.Name, *mr.Arms[mr.Arm].Median, got)
		}
	}
}
