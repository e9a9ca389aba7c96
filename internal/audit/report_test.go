package audit

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/perf/benchmath"

	"github.com/ldd-tools/tune/internal/transcript"
)

var (
	spotterDir = filepath.Join("..", "..", "testdata", "transcripts", "spotter", "test", "fixtures", "transcripts")
	effortDir  = filepath.Join("testdata", "effort")
)

func scan(t testing.TB, opt transcript.Options, paths ...string) *transcript.Result {
	t.Helper()
	files, err := transcript.Discover(paths)
	if err != nil {
		t.Fatal(err)
	}
	res, err := transcript.Scan(files, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSpotterShares checks the per-session shares against the reference breakdown of the sample
// (transcripts.md §10.6, computed by an independent implementation).
func TestSpotterShares(t *testing.T) {
	rep := Aggregate(scan(t, transcript.Options{}, spotterDir).Requests, BySession)
	want := map[string][6]float64{ // in, out, cache read, cache write, sub share (%), mean context per main request
		"258c7280-ae70-4798-800f-63464d01a85d": {0.0, 8.9, 68.5, 22.6, 3.5, 99482},
		"4d5611e5-241a-462a-8d15-5122611a9569": {0.0, 6.9, 59.5, 33.6, 8.5, 87038},
		"8463c716-a2ea-4c14-9efa-87158ebd9f20": {0.1, 9.3, 74.6, 15.9, 3.1, 111913},
		"ae4a77f8-aedd-4bc1-888f-c94edc91af04": {0.1, 10.4, 69.7, 19.8, 7.7, 77378},
		"fa812bfe-b295-4cca-9c2f-fdf01028cb46": {0.1, 8.1, 71.8, 20.0, 9.2, 99588},
		"subagent":                             {1.4, 7.1, 46.7, 44.8, 24.5, 37892},
	}
	round1 := func(f float64) float64 { return math.Round(1000*f) / 10 }
	for _, g := range rep.Groups {
		w, ok := want[g.Key]
		if !ok {
			continue
		}
		s := g.Shares.Spend
		got := [6]float64{round1(s.Input), round1(s.Output), round1(s.CacheRead), round1(s.CacheWrite), round1(s.NonMain), math.Round(*g.Shares.MeanContextMain)}
		if got != w {
			t.Errorf("%s: got %v, want %v", g.Key, got, w)
		}
		delete(want, g.Key)
	}
	if len(want) != 0 {
		t.Errorf("sessions missing: %v", want)
	}
	// Reference requests main/sub for 258c7280: 152/4.
	for _, g := range rep.Groups {
		if strings.HasPrefix(g.Key, "258c7280") && (g.Totals.MainRequests != 152 || g.Totals.SubRequests != 4) {
			t.Errorf("258c7280 requests %d/%d, want 152/4", g.Totals.MainRequests, g.Totals.SubRequests)
		}
	}
}

func TestSharesArithmetic(t *testing.T) {
	reqs := []transcript.Request{
		{Class: transcript.ClassMain, InputTokens: 10, OutputTokens: 100, CacheReadTokens: 1000, CacheCreationTokens: 80,
			CacheCreation5m: 40, CacheCreation1h: 40, ThinkingTokens: 60, ThinkingSrc: transcript.ThinkingExact},
		{Class: transcript.ClassSubagent, InputTokens: 0, OutputTokens: 20, CacheReadTokens: 0, CacheCreationTokens: 0,
			ThinkingTokens: 20, ThinkingSrc: transcript.ThinkingEstimated},
	}
	rep := Aggregate(reqs, ByClass)
	// spend = 10 + 120×5 + 1000×0.1 + 80×1.25 = 10 + 600 + 100 + 100 = 810; TTL: 40×1.25 + 40×2 = 130 → 840.
	if rep.Totals.Spend != 810 || rep.Totals.SpendTTL != 840 {
		t.Fatalf("spend %v / %v", rep.Totals.Spend, rep.Totals.SpendTTL)
	}
	s := rep.Shares
	checks := map[string][2]float64{
		"output":        {s.Spend.Output, 600.0 / 810},
		"thinking":      {s.Spend.Thinking, 400.0 / 810},
		"cache write":   {s.Spend.CacheWrite, 100.0 / 810},
		"ttl write":     {s.TTL.CacheWrite, 130.0 / 840},
		"non-main":      {s.Spend.NonMain, 100.0 / 810},
		"in main":       {*s.ThinkingInMain, 0.75},
		"mean main":     {*s.MeanThinkingMain, 60},
		"mean sub":      {*s.MeanThinkingSub, 20},
		"mean context":  {*s.MeanContextMain, 1090},
		"think of out":  {s.ThinkingOfOutput, 80.0 / 120},
		"group of main": {rep.Groups[0].Shares.OfTotal, 710.0 / 810},
	}
	for name, c := range checks {
		if math.Abs(c[0]-c[1]) > 1e-12 {
			t.Errorf("%s: %v, want %v", name, c[0], c[1])
		}
	}
	if !s.ThinkingEstimated || s.ThinkingIncomplete || rep.Groups[0].Key != "main" || rep.Groups[1].Shares.MeanThinkingMain != nil {
		t.Errorf("flags or groups wrong: %+v %+v", s, rep.Groups)
	}
}

func TestKeysAndOrder(t *testing.T) {
	res := scan(t, transcript.Options{}, spotterDir)
	days := Aggregate(res.Requests, ByDay)
	var keys []string
	for _, g := range days.Groups {
		keys = append(keys, g.Key)
	}
	// ccusage's daily buckets of the spotter files (-z UTC).
	if strings.Join(keys, " ") != "2026-02-10 2026-02-11 2026-02-12" {
		t.Errorf("days %v", keys)
	}
	models := Aggregate(res.Requests, ByModel)
	for i := 1; i < len(models.Groups); i++ {
		if models.Groups[i].Totals.Spend > models.Groups[i-1].Totals.Spend {
			t.Errorf("models not by spend: %v", models.Groups)
		}
	}
	effort := Aggregate(scan(t, transcript.Options{}, effortDir).Requests, ByEffort)
	got := map[string]int{}
	for _, g := range effort.Groups {
		got[g.Key] = g.Totals.Requests
	}
	if got["high"] == 0 || got["xhigh"] == 0 || got["medium"] != 12 || got[NoEffort] == 0 {
		t.Errorf("effort groups %v", got)
	}
}

func TestVersionFamily(t *testing.T) {
	for v, want := range map[string]Family{
		"1.0.98": FamilyPartial, "2.0.77": FamilyPartial, "2.1.39": FamilyPartial, "2.1.69": FamilyPartial,
		"2.1.70": FamilyLastLine, "2.1.96": FamilyLastLine, "2.1.97": FamilyFinal, "2.1.217": FamilyFinal,
		"2.2.0": FamilyFinal, "3.0.1-beta": FamilyFinal, "": FamilyUnknown, "dev": FamilyUnknown, "2.1": FamilyUnknown,
	} {
		if got := VersionFamily(v); got != want {
			t.Errorf("%q: %s, want %s", v, got, want)
		}
	}
}

// splitSpotter makes two arms of the real sessions: alternate sessions in path order.
func splitSpotter(t testing.TB) (a, b Arm) {
	res := scan(t, transcript.Options{}, spotterDir)
	a.Name, b.Name = "A", "B"
	for i, r := range RunsOf(res, "", nil) {
		if i%2 == 0 {
			r.Arm = "A"
			a.Runs = append(a.Runs, r)
		} else {
			r.Arm = "B"
			b.Runs = append(b.Runs, r)
		}
	}
	return a, b
}

func effortArms(t testing.TB) []Arm {
	res := scan(t, transcript.Options{}, effortDir)
	arms, none := ArmsByEffort(RunsOf(res, "", []string{effortDir}))
	if len(arms) != 2 || len(none) != 1 || arms[0].Name != "high" || arms[1].Name != "xhigh" || len(arms[0].Runs) != 6 {
		t.Fatalf("arms %+v, without effort %d", arms, len(none))
	}
	return arms
}

// TestABMatchesBenchmath checks the statistics wiring against x/perf's benchmath (what benchstat
// computes): every arm's median and CI, and the Mann–Whitney p of every metric whose samples have
// no ties (with ties the exact p is computed differently, see internal/stats).
func TestABMatchesBenchmath(t *testing.T) {
	a, b := splitSpotter(t)
	for _, arms := range [][]Arm{effortArms(t), {a, b}} {
		rep, err := CompareArms(arms, ABOptions{})
		if err != nil {
			t.Fatal(err)
		}
		compared := 0
		for _, mr := range rep.Metrics {
			x, _ := values(&arms[0], mr.Name)
			y, _ := values(&arms[1], mr.Name)
			thr := benchmath.DefaultThresholds
			sx, sy := benchmath.NewSample(x, &thr), benchmath.NewSample(y, &thr)
			for name, s := range map[string]*benchmath.Sample{arms[0].Name: sx, arms[1].Name: sy} {
				sum := benchmath.AssumeNothing.Summary(s, 0.95)
				got := mr.Arms[name]
				if got.Median == nil || *got.Median != sum.Center {
					t.Errorf("%s %s: median %v, benchmath %v", mr.Name, name, got.Median, sum.Center)
				}
				if finite := !math.IsInf(sum.Lo, 0) && !math.IsInf(sum.Hi, 0); finite != (got.Lo != nil) ||
					finite && (*got.Lo != sum.Lo || *got.Hi != sum.Hi) {
					t.Errorf("%s %s: CI %v–%v, benchmath %v–%v", mr.Name, name, got.Lo, got.Hi, sum.Lo, sum.Hi)
				}
			}
			if hasTies(append(append([]float64{}, x...), y...)) {
				continue
			}
			c := benchmath.AssumeNothing.Compare(sx, sy)
			if mr.P == nil || math.Abs(*mr.P-c.P) > 1e-9 {
				t.Errorf("%s: p %v, benchmath %v", mr.Name, mr.P, c.P)
			}
			compared++
		}
		if compared < 3 {
			t.Errorf("only %d metrics without ties compared", compared)
		}
	}
}

func hasTies(xs []float64) bool {
	seen := map[float64]bool{}
	for _, x := range xs {
		if seen[x] {
			return true
		}
		seen[x] = true
	}
	return false
}

// TestHolmAndSignificance: with complete separation of 6 runs per arm, the exact two-sided p is
// 2/924; Holm multiplies the smallest of five p by 5.
func TestHolmAndSignificance(t *testing.T) {
	rep, err := CompareArms(effortArms(t), ABOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, mr := range rep.Metrics {
		if mr.Name != "thinking_tokens" {
			continue
		}
		if math.Abs(*mr.P-2.0/924) > 1e-12 || !mr.Significant || math.Abs(*mr.PHolm-5*2.0/924) > 1e-12 {
			t.Errorf("thinking: p %v, Holm %v, significant %v", *mr.P, *mr.PHolm, mr.Significant)
		}
		if *mr.RatioLo > *mr.Ratio || *mr.Ratio > *mr.RatioHi || *mr.RatioLo <= 1 {
			t.Errorf("ratio %v [%v, %v]", *mr.Ratio, *mr.RatioLo, *mr.RatioHi)
		}
	}
	// Reproducible: the bootstrap is seeded from the data.
	again, _ := CompareArms(effortArms(t), ABOptions{})
	if *again.Metrics[2].RatioLo != *rep.Metrics[2].RatioLo {
		t.Error("bootstrap not reproducible")
	}
}

// TestHolmFootnote: 4 runs per arm, completely separated, give p = 2/70 = 0.029 ≤ 0.05, so the
// per-test footnote stays silent, yet Holm over five metrics needs p ≤ 0.01: nothing can be
// significant, and a footnote must say so (5 runs per arm: 2/252·5 = 0.040). At 6 it is silent.
func TestHolmFootnote(t *testing.T) {
	arms := effortArms(t)
	small := []Arm{{Name: arms[0].Name, Runs: arms[0].Runs[:4]}, {Name: arms[1].Name, Runs: arms[1].Runs[:4]}}
	rep, err := CompareArms(small, ABOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "need ≥ 5 runs per arm for any significant result at alpha level 0.05 after Holm over 5 tests"
	for _, mr := range rep.Metrics {
		if mr.Significant || !slices.Contains(mr.Warnings, want) {
			t.Errorf("%s: significant %v, warnings %q", mr.Name, mr.Significant, mr.Warnings)
		}
	}
	rep, err = CompareArms(arms, ABOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, mr := range rep.Metrics {
		for _, w := range mr.Warnings {
			if strings.Contains(w, "after Holm") {
				t.Errorf("%s: %q with 6 runs per arm", mr.Name, w)
			}
		}
	}
}

func TestPairing(t *testing.T) {
	arms := effortArms(t)
	rep, err := CompareArms(arms, ABOptions{Paired: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Metrics[0].Test != "signed-rank" || rep.PairBy != "order" {
		t.Errorf("paired test %q by %q", rep.Metrics[0].Test, rep.PairBy)
	}
	short := []Arm{arms[0], {Name: "x", Runs: arms[1].Runs[:5]}}
	if _, err := CompareArms(short, ABOptions{Paired: true}); !errors.Is(err, ErrPairing) {
		t.Errorf("unequal arms paired: %v", err)
	}
	if _, err := CompareArms(arms, ABOptions{Paired: true, PairBy: "task"}); !errors.Is(err, ErrPairing) {
		t.Errorf("runs without task directories paired by task: %v", err)
	}
	// By task: each run in its own task directory, in reverse order in the second arm.
	for i := range arms[0].Runs {
		arms[0].Runs[i].Task = string(rune('a' + i))
		arms[1].Runs[len(arms[1].Runs)-1-i].Task = string(rune('a' + i))
	}
	rep, err = CompareArms(arms, ABOptions{Paired: true, PairBy: "task"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs[0].Task != "a" || rep.Runs[6].Task != "a" {
		t.Errorf("runs not paired by task: %v %v", rep.Runs[0].Task, rep.Runs[6].Task)
	}
}

func TestMixedVersionsRefused(t *testing.T) {
	arms := effortArms(t)
	arms[1].Runs[0].Versions = []string{"2.1.39"}
	_, err := CompareArms(arms, ABOptions{})
	var mixed *MixedVersionsError
	if !errors.As(err, &mixed) || !strings.Contains(err.Error(), "--allow-mixed") || !strings.Contains(err.Error(), "2.1.39") {
		t.Fatalf("mixed versions: %v", err)
	}
	rep, err := CompareArms(arms, ABOptions{AllowMixed: true})
	if err != nil || !rep.MixedVersions || !strings.Contains(strings.Join(rep.Notes, " "), "MIXED") {
		t.Fatalf("allow mixed: %v %+v", err, rep)
	}
}

func TestTaskOf(t *testing.T) {
	for _, c := range []struct{ roots, dir, want string }{
		{"runs/high", "runs/high/t1/projects/x", "t1"},
		{"runs/high", "runs/high/projects/p1", "p1"},
		{"runs/high", "runs/high", ""},
		{"runs/high", "elsewhere/t1", ""},
		{"", "runs/high/t1", ""},
	} {
		var roots []string
		if c.roots != "" {
			roots = []string{c.roots}
		}
		if got := taskOf(roots, c.dir); got != c.want {
			t.Errorf("taskOf(%s, %s) = %q, want %q", c.roots, c.dir, got, c.want)
		}
	}
}

// TestRunsWallAndActiveTime checks each session's wall time (first to last line over its files) and
// Σ turn durations against the reference breakdown (transcripts.md §10.6).
func TestRunsWallAndActiveTime(t *testing.T) {
	want := map[string][2]float64{ // minutes: wall, active (-1: none recorded)
		"258c7280-ae70-4798-800f-63464d01a85d": {74.5, 45.5},
		"4d5611e5-241a-462a-8d15-5122611a9569": {301.2, 31.2},
		"8463c716-a2ea-4c14-9efa-87158ebd9f20": {72.8, 65.0},
		"ae4a77f8-aedd-4bc1-888f-c94edc91af04": {53.1, 35.5},
		"fa812bfe-b295-4cca-9c2f-fdf01028cb46": {41.8, 38.6},
		"subagent":                             {9.6, -1},
	}
	for _, r := range RunsOf(scan(t, transcript.Options{}, spotterDir), "x", nil) {
		w, ok := want[r.Session]
		if !ok {
			continue
		}
		active := -1.0
		if r.HasActive {
			active = math.Round(r.ActiveSeconds/6) / 10
		}
		if got := [2]float64{math.Round(r.WallSeconds/6) / 10, active}; got != w {
			t.Errorf("%s: wall/active %v min, want %v", r.Session, got, w)
		}
		delete(want, r.Session)
	}
	if len(want) > 0 {
		t.Errorf("missing runs %v", want)
	}
}

// TestThinkingBlocksPerSession: thinking blocks per session, as the reference breakdown counts them
// (transcripts.md §10.6), with no block counted twice across progress copies and subagent files.
func TestThinkingBlocksPerSession(t *testing.T) {
	want := map[string]int{
		"258c7280-ae70-4798-800f-63464d01a85d": 19, "4d5611e5-241a-462a-8d15-5122611a9569": 14,
		"8463c716-a2ea-4c14-9efa-87158ebd9f20": 19, "ae4a77f8-aedd-4bc1-888f-c94edc91af04": 6,
		"fa812bfe-b295-4cca-9c2f-fdf01028cb46": 11, "subagent": 4,
	}
	for _, g := range Aggregate(scan(t, transcript.Options{}, spotterDir).Requests, BySession).Groups {
		if w, ok := want[g.Key]; ok && g.Totals.ThinkingBlocks != w {
			t.Errorf("%s: %d thinking blocks, want %d", g.Key, g.Totals.ThinkingBlocks, w)
		}
	}
}
