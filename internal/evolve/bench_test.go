package evolve

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ldd-tools/tune/internal/fixtures"
	"github.com/ldd-tools/tune/internal/scorer"
	"github.com/ldd-tools/tune/internal/weights"
)

// benchSuite builds an n-scenario suite from the parity prompts (cycled), each expecting what the
// reference weights give, so that a new weights vector makes some of them red.
func benchSuite(b *testing.B, n int) []fixtures.Scenario {
	f, err := os.Open(filepath.Join(repoRoot(), "testdata", "ldd", "parity.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var recs []parityRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r parityRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			b.Fatal(err)
		}
		recs = append(recs, r)
	}
	ref := refWeights(b)
	out := make([]fixtures.Scenario, n)
	for i := range out {
		r := recs[i%len(recs)]
		res := scorer.Score(r.Prompt, r.History, &ref)
		out[i] = fixtures.Scenario{Name: fmt.Sprintf("s%05d", i), Prompt: r.Prompt, History: r.History,
			Levels: []weights.Level{res.FinalLevel}, DispatchSource: res.DispatchSource, Origin: r.ID}
		if res.OverrideFragment != nil {
			out[i].Fragment = *res.OverrideFragment
		}
	}
	return out
}

// BenchmarkReplay: the decision's hot path, per-scenario losses of a 10,000-scenario suite under a new
// weights vector each iteration (detections prepared once, outside the timer).
func BenchmarkReplay(b *testing.B) {
	suite := PrepareSuite(benchSuite(b, 10000))
	base := refWeights(b)
	var cands []weights.Weights
	for _, s := range weights.Signals() {
		cands = append(cands, Change{Kind: weights.ChangeSignal, Signal: s, Delta: 2}.Apply(base))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		suite.Losses(&cands[i%len(cands)])
	}
}

// BenchmarkReplayRows: the same with full rows (what tune replay prints).
func BenchmarkReplayRows(b *testing.B) {
	suite := PrepareSuite(benchSuite(b, 10000))
	cand := Change{Kind: weights.ChangeSignal, Signal: weights.Ambiguous, Delta: 2}.Apply(refWeights(b))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		suite.Score(&cand)
	}
}

// BenchmarkReplayRedetect is the baseline replay would be without detect-once: every prompt scored from
// its text under the candidate.
func BenchmarkReplayRedetect(b *testing.B) {
	scs := benchSuite(b, 10000)
	cand := Change{Kind: weights.ChangeSignal, Signal: weights.Ambiguous, Delta: 2}.Apply(refWeights(b))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range scs {
			scorer.Score(scs[j].Prompt, scs[j].History, &cand)
		}
	}
}

// BenchmarkMoreNeededOnsets is the onset mixture's most repeated use: a night's more_needed, which
// weighs the mixture once per count tried, on two years of five logs (120 strata, 24 blocks).
func BenchmarkMoreNeededOnsets(b *testing.B) {
	var tables []Table
	var blocks []int
	var latest []bool
	for lg := range 5 {
		for blk := range 24 {
			tables = append(tables, Table{1 + lg%2, 20 + blk%3, 3, 80})
			blocks = append(blocks, blk)
			latest = append(latest, blk == 23)
		}
	}
	for b.Loop() {
		MoreNeededOnsets(tables, blocks, latest)
	}
}

// BenchmarkMoreNeededManyLogs is the same on a hundred logs of three months each (a monorepo's packages,
// each with its own trace log): every log's latest block may take the regressions still to come.
func BenchmarkMoreNeededManyLogs(b *testing.B) {
	var tables []Table
	var blocks []int
	var latest []bool
	for lg := range 100 {
		for blk := range 3 {
			tables = append(tables, Table{lg % 2, 8 + blk%3, 1, 30})
			blocks = append(blocks, blk)
			latest = append(latest, blk == 2)
		}
	}
	for b.Loop() {
		MoreNeededOnsets(tables, blocks, latest)
	}
}
