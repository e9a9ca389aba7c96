package genlive

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/ldd-tools/tune/internal/scorer"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

func fired(text string) []string {
	var out []string
	for _, s := range scorer.Detect(text, nil).Fired {
		out = append(out, s.String())
	}
	sort.Strings(out)
	return out
}

// Every part carries exactly the cue it is meant to: bases their eligibility cue (or none), each clause
// its one signal, so that a composed prompt's signals are its parts' (the scorer, not the generator,
// still decides what a task records).
func TestPartsCarryTheirCue(t *testing.T) {
	for _, a := range append(slices.Clone(spreadAreas), busyAreas...) {
		for _, f := range a.files {
			for _, b := range bugfixBases {
				if got := fired(fmt.Sprintf(b, a.name)); !slices.Equal(got, []string{"explicit-bugfix"}) {
					t.Errorf("%q: %v, want explicit-bugfix", fmt.Sprintf(b, a.name), got)
				}
				p := fmt.Sprintf(b, a.name+" in "+f)
				if got := fired(p); !slices.Equal(got, []string{"explicit-bugfix", "single-file"}) {
					t.Errorf("%q: %v, want explicit-bugfix and single-file", p, got)
				}
			}
			for _, b := range knownEditBases {
				if got := fired(fmt.Sprintf(b, f)); !slices.Equal(got, []string{"single-file"}) {
					t.Errorf("%q: %v, want single-file", fmt.Sprintf(b, f), got)
				}
			}
			for _, b := range plainBases {
				for _, p := range []string{fmt.Sprintf(b, a.name), fmt.Sprintf(b, a.name+" ("+f+")")} {
					if got := fired(p); len(got) != 0 {
						t.Errorf("%q: %v, want no signal", p, got)
					}
				}
			}
		}
	}
	base := fmt.Sprintf(bugfixBases[0], spreadAreas[0].name)
	for _, sig := range positiveSignals {
		for _, c := range clauses[sig] {
			want := []string{"explicit-bugfix", sig.String()}
			sort.Strings(want)
			if got := fired(compose(base, []string{c})); !slices.Equal(got, want) {
				t.Errorf("%q: %v, want %v", c, got, want)
			}
		}
	}
}

// The population the issue describes: 20-task windows hold 5–13 eligible tasks (auto L0/L1) under the
// reference weights; the measured spread is logged.
func TestWindowsHoldRealisticEligibleCounts(t *testing.T) {
	w := testutil.ReferenceWeights()
	counts := map[int]int{}
	inRange, windows := 0, 0
	for seed := uint64(1); seed <= 200; seed++ {
		s := NewSequence(seed, Regime{Name: "noise", Base: 0.1})
		var all []Task
		for n := 1; n <= 6; n++ {
			tasks, _ := s.Night(n, &w)
			all = append(all, tasks[0]...)
		}
		win := all[len(all)-20:]
		e := 0
		for _, x := range win {
			if x.Result.DispatchSource == scorer.SourceAuto && x.Result.FinalLevel <= weights.L1 {
				e++
			}
		}
		counts[e]++
		windows++
		if e >= 5 && e <= 13 {
			inRange++
		}
	}
	t.Logf("eligible tasks per 20-task window (200 sequences): %v; %d of %d in 5–13", counts, inRange, windows)
	if inRange < windows*8/10 {
		t.Errorf("only %d of %d windows hold 5–13 eligible tasks", inRange, windows)
	}
}

// The text written reads back through the trace reader with the generated truth: every task, its level,
// its evidence, no warning.
func TestNightsReadBack(t *testing.T) {
	w := testutil.ReferenceWeights()
	w.Version = 1
	s := NewSequence(7, Regime{Name: "moderate", Base: 0.05, Planted: []weights.Signal{weights.Ambiguous}, Carrier: 0.75, Logs: 2})
	var want []Task
	var text [2][]byte
	for n := 1; n <= 5; n++ {
		tasks, out := s.Night(n, &w)
		for li := range out {
			text[li] = append(text[li], out[li]...)
		}
		want = append(want, tasks[0]...)
	}
	res, err := traceparse.Parse(bytes.NewReader(text[0]), "trace.log")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) > 0 {
		t.Fatalf("warnings: %v", res.Warnings)
	}
	if len(res.Tasks) != len(want) {
		t.Fatalf("%d tasks read, %d written", len(res.Tasks), len(want))
	}
	evidence := 0
	for i, got := range res.Tasks {
		g := want[i]
		if got.Level != g.Result.FinalLevel.String() || got.WeightsVersion != "v0001" || !got.HasSignals {
			t.Errorf("task %d: read %s %s, wrote %s", i, got.Level, got.WeightsVersion, g.Result.FinalLevel)
		}
		if got.RegressionFollowed != (g.Evidence == "followed") || got.RegressionOf != g.RegressionOf {
			t.Errorf("task %d: evidence read back differs", i)
		}
		if g.Regressed {
			evidence++
		}
	}
	if evidence == 0 {
		t.Error("five nights of a planted regime wrote no regression")
	}
	// Same seed, same weights: the same bytes.
	s2 := NewSequence(7, Regime{Name: "moderate", Base: 0.05, Planted: []weights.Signal{weights.Ambiguous}, Carrier: 0.75, Logs: 2})
	var again []byte
	for n := 1; n <= 5; n++ {
		_, out := s2.Night(n, &w)
		again = append(again, out[0]...)
	}
	if !bytes.Equal(again, text[0]) {
		t.Error("the same seed wrote different logs")
	}
}

// Sample draws from the sequence's population without touching the sequence: the nights played after a
// sample are the nights played without one, and a sample is a function of its seed. Its tasks are the
// sequence's kind (carriers of its planted signal among them) and carry what they were scored from.
func TestSampleLeavesTheSequenceAsItIs(t *testing.T) {
	w := testutil.ReferenceWeights()
	reg := Regime{Name: "moderate", Base: 0.05, Planted: []weights.Signal{weights.Ambiguous, weights.CrossLayer}, Carrier: 0.75}
	plain, sampled := NewSequence(5, reg), NewSequence(5, reg)
	a := sampled.Sample(9, 500, &w)
	b := sampled.Sample(9, 500, &w)
	for i := range a {
		if a[i].Prompt != b[i].Prompt || a[i].Result.FinalLevel != b[i].Result.FinalLevel || a[i].Regressed != b[i].Regressed {
			t.Fatalf("task %d of two samples from the same seed differs: %q, %q", i, a[i].Prompt, b[i].Prompt)
		}
	}
	for night := 1; night <= 3; night++ {
		_, x := plain.Night(night, &w)
		_, y := sampled.Night(night, &w)
		if !slices.EqualFunc(x, y, bytes.Equal) {
			t.Fatalf("night %d differs after a sample", night)
		}
	}
	carriers := 0
	for _, task := range a {
		if task.Carrier {
			carriers++
		}
		if got := task.Detection.Score(&w); got.FinalLevel != task.Result.FinalLevel {
			t.Fatalf("%q: its detection scores %s, its result says %s", task.Prompt, got.FinalLevel, task.Result.FinalLevel)
		}
	}
	if carriers == 0 {
		t.Fatalf("no carrier of %s in 500 sampled tasks", plain.Signal)
	}
}
