package app

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/tools/genlive"
	"github.com/ldd-tools/tune/internal/traceparse"
)

// TestLiveEvidencePasses measures the accumulated test alone on the live harness's population
// (docs/decisions.md, "Measured (issue 28)"): each night the growing log of a genlive sequence is read
// whole under v0001, with the clock at the night's end, and the night the planted signal's e-value first
// reaches the threshold is recorded (and whether any signal passes under noise). It separates the test
// from the loss rule and the replay, which TestLiveHarness measures together. TUNE_HARNESS=full only.
func TestLiveEvidencePasses(t *testing.T) {
	if os.Getenv("TUNE_HARNESS") != "full" {
		t.Skip("TUNE_HARNESS=full plays 60 sequences × 30 nights per regime")
	}
	want := map[string]bool{"moderate planted 75%/5%, 1 log": true, "strong planted 95%/5%, 1 log": true,
		"noise 15%, 1 log": true, "noise level-only (L0/L1 20%, else 5%), 1 log": true}
	w := testutil.ReferenceWeights()
	const n = 60
	for _, lr := range liveRegimes() {
		if !want[lr.Name] {
			continue
		}
		planted, any := 0, 0
		var nights []int
		for seed := uint64(1); seed <= n; seed++ {
			seq := genlive.NewSequence(seed+500, lr.Regime)
			log := filepath.Join(t.TempDir(), "trace.log")
			first, firstAny := 0, 0
			for night := 1; night <= 30; night++ {
				_, text := seq.Night(night, &w)
				appendFile(t, log, text[0])
				res, err := traceparse.ReadLast(log, 0)
				if err != nil {
					t.Fatal(err)
				}
				det := evolve.Detect(evolve.DetectInput{Tasks: res.Tasks, Now: genlive.NightEnd(night), Resolver: evolve.Resolver{Active: &w}})
				for s, r := range det.Screen {
					if r.Verdict != evolve.VerdictCandidate {
						continue
					}
					if firstAny == 0 {
						firstAny = night
					}
					if seq.Signal >= 0 && s == int(seq.Signal) && first == 0 {
						first = night
					}
				}
			}
			if first > 0 {
				planted++
				nights = append(nights, first)
			}
			if firstAny > 0 {
				any++
			}
		}
		sort.Ints(nights)
		median := 0
		if len(nights) > 0 {
			median = nights[len(nights)/2]
		}
		plo, phi := stats.Wilson(planted, n, 0.95)
		alo, ahi := stats.Wilson(any, n, 0.95)
		t.Logf("%s: planted signal passes by night 30 in %d/%d [%.1f, %.1f]%%, median night %d; any signal passes in %d/%d [%.1f, %.1f]%%",
			lr.Name, planted, n, 100*plo, 100*phi, median, any, n, 100*alo, 100*ahi)
		if seqPlanted := lr.Regime.Carrier > 0; !seqPlanted && any > 0 && alo > evolve.EvidenceAlpha {
			t.Errorf("%s: noise passes the test in %d of %d sequences", lr.Name, any, n)
		}
	}
}
