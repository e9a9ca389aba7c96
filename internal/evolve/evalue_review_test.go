package evolve

// An independent review of the accumulated-evidence e-value (issue 28): its own generator of task
// sequences, not the harness's. Every rate is printed with its Wilson 95 % interval; the in-suite sizes
// are small (seconds), TUNE_HARNESS=full plays the sizes the review note quotes.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"testing"

	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/weights"
)

const reviewSignals = int(weights.NumSignals)

// nullCase is a generator of accumulated evidence under a null: within each log and night a task's
// regression is independent of its signals. base and prev may drift with the night and differ between
// logs; cluster > 1 makes runs of consecutive tasks share their signals and their regression (one later
// same-area failure flags the whole run).
type nullCase struct {
	name    string
	logs    int
	base    func(night, nights, log int) float64
	prev    func(sig, night, nights, log int) float64
	cluster int
	// nights overrides the sequence length (0: reviewSize's).
	nights int
}

// spread gives the nine signals prevalences from 1 % to 95 %.
var spread = [reviewSignals]float64{0.01, 0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.85, 0.95}

func constBase(p float64) func(int, int, int) float64 {
	return func(int, int, int) float64 { return p }
}
func constPrev(sig, _, _, _ int) float64 { return spread[sig] }

// lerp goes from a at the first night to b at the last.
func lerp(a, b float64, night, nights int) float64 {
	return a + (b-a)*float64(night)/float64(max(1, nights-1))
}

// nullResult counts the sequences in which the e-value ever reached a level.
type nullResult struct {
	reps int
	// perSig450[s]: signal s ever a candidate (carriers flagged more often, e ≥ Threshold); perSig20 at
	// e ≥ 20 (a level the sample resolves); family: any signal a candidate; strat*: the same with the
	// per-log stratified null (LogEValueStrata).
	perSig450, perSig20 [reviewSignals]int
	family, stratFamily int
	// blocked*: the null maximised per log and per block of blockNights nights; onset*: the same
	// strata mixed over onsets at the blocks (LogEValueOnsets, what the screen decides with).
	blockedFamily   int
	blockedPerSig20 [reviewSignals]int
	onsetFamily     int
	onsetPerSig20   [reviewSignals]int
	stratPerSig20   [reviewSignals]int
	maxLogE         float64
	nonFinite       int
}

// eligiblePerNight is a night's eligible tasks in one log: 5–20 tasks a night, 25–65 % of them eligible
// (the 5–13 of 20).
func eligiblePerNight(r *rand.Rand) int {
	n := 5 + r.IntN(16)
	return int(math.Round(float64(n) * (0.25 + 0.4*r.Float64())))
}

func playNull(c nullCase, reps, nights int, seed uint64) nullResult {
	r := rand.New(rand.NewPCG(seed, 2828))
	res := nullResult{reps: reps}
	logT := math.Log(Threshold)
	for rep := 0; rep < reps; rep++ {
		tab := make([][reviewSignals][4]int, c.logs)
		var blk [][][reviewSignals][4]int // [block][log]
		var hit450, hit20, shit20, bhit20, ohit20 [reviewSignals]bool
		fam, sfam, bfam, ofam := false, false, false, false
		for night := 0; night < nights; night++ {
			if night%blockNights == 0 {
				blk = append(blk, make([][reviewSignals][4]int, c.logs))
			}
			for lg := 0; lg < c.logs; lg++ {
				n := eligiblePerNight(r)
				p := c.base(night, nights, lg)
				var fired [reviewSignals]bool
				flagged := false
				for k := 0; k < n; k++ {
					if c.cluster <= 1 || k%c.cluster == 0 {
						flagged = r.Float64() < p
						for s := range fired {
							fired[s] = r.Float64() < c.prev(s, night, nights, lg)
						}
					}
					for s := range fired {
						cell := 3
						switch {
						case fired[s] && flagged:
							cell = 0
						case fired[s]:
							cell = 1
						case flagged:
							cell = 2
						}
						tab[lg][s][cell]++
						blk[len(blk)-1][lg][s][cell]++
					}
				}
			}
			// The night's look: every signal over the pooled logs.
			for s := 0; s < reviewSignals; s++ {
				var pooled [4]int
				strata := make([]Table, c.logs)
				for lg := range tab {
					strata[lg] = tab[lg][s]
					for i := range pooled {
						pooled[i] += tab[lg][s][i]
					}
				}
				a, b, cc, d := pooled[0], pooled[1], pooled[2], pooled[3]
				e := LogEValue(a, b, cc, d)
				if math.IsNaN(e) || math.IsInf(e, 1) {
					res.nonFinite++
				}
				higher := a*(cc+d) > cc*(a+b)
				if higher {
					res.maxLogE = math.Max(res.maxLogE, e)
					hit20[s] = hit20[s] || e >= math.Log(20)
					if e >= logT {
						hit450[s], fam = true, true
					}
					se := LogEValueStrata(strata)
					shit20[s] = shit20[s] || se >= math.Log(20)
					sfam = sfam || se >= logT
					var bs []Table
					var blocks []int
					for k, b := range blk {
						for lg := range b {
							bs, blocks = append(bs, b[lg][s]), append(blocks, k)
						}
					}
					be := LogEValueStrata(bs)
					bhit20[s] = bhit20[s] || be >= math.Log(20)
					bfam = bfam || be >= logT
					oe := LogEValueOnsets(bs, blocks)
					ohit20[s] = ohit20[s] || oe >= math.Log(20)
					ofam = ofam || oe >= logT
				}
			}
		}
		for s := range hit450 {
			res.perSig450[s] += b2i(hit450[s])
			res.perSig20[s] += b2i(hit20[s])
			res.stratPerSig20[s] += b2i(shit20[s])
			res.blockedPerSig20[s] += b2i(bhit20[s])
			res.onsetPerSig20[s] += b2i(ohit20[s])
		}
		res.blockedFamily += b2i(bfam)
		res.onsetFamily += b2i(ofam)
		res.family += b2i(fam)
		res.stratFamily += b2i(sfam)
	}
	return res
}

// blockNights is the block length of the time-stratified variant (a month of nights).
const blockNights = 30

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func wrate(k, n int) string {
	lo, hi := stats.Wilson(k, n, 0.95)
	return fmt.Sprintf("%d/%d = %.2f%% [%.2f–%.2f%%]", k, n, 100*float64(k)/float64(n), 100*lo, 100*hi)
}

// reviewNullLogLik is the log likelihood maximised over the null pa ≤ pb (the review's own closed form: the
// groups' rates when the carriers' is not higher, else the pooled rate).
func reviewNullLogLik(a, b, c, d int) float64 {
	A, B, C, D := float64(a), float64(b), float64(c), float64(d)
	if A*(C+D) <= C*(A+B) {
		return xlogy(A, A/(A+B)) + xlogy(B, B/(A+B)) + xlogy(C, C/(C+D)) + xlogy(D, D/(C+D))
	}
	q := (A + C) / (A + B + C + D)
	return xlogy(A+C, q) + xlogy(B+D, 1-q)
}

// logMarginal is the alternative's marginal log likelihood, written independently of evalue.go: the
// integral over the Beta(2,1)×Beta(1,2) prior restricted to pa > pb, by the midpoint rule on a grid.
func logMarginal(a, b, c, d int) float64 {
	const n = 400
	A, B, C, D := float64(a), float64(b), float64(c), float64(d)
	// log of ∫∫_{pa>pb} 2pa · 2(1−pb) · pa^A (1−pa)^B pb^C (1−pb)^D / P(pa>pb), with P(pa>pb) = 5/6 under
	// Beta(2,1)×Beta(1,2). Computed with a running max for stability.
	var terms []float64
	for i := 0; i < n; i++ {
		pa := (float64(i) + 0.5) / n
		for j := 0; j < n; j++ {
			pb := (float64(j) + 0.5) / n
			if pb >= pa {
				break
			}
			terms = append(terms, math.Log(2*pa)+math.Log(2*(1-pb))+A*math.Log(pa)+B*math.Log1p(-pa)+C*math.Log(pb)+D*math.Log1p(-pb))
		}
	}
	m := math.Inf(-1)
	for _, t := range terms {
		m = math.Max(m, t)
	}
	s := 0.0
	for _, t := range terms {
		s += math.Exp(t - m)
	}
	return m + math.Log(s/(n*n)) - math.Log(5.0/6)
}

func reviewSize() (reps, nights int) {
	if os.Getenv("TUNE_HARNESS") == "full" {
		return 4000, 45
	}
	return 50, 30
}

// The validity of the e-value as the issue defines the null, on the review's own generator.
func TestReviewEValueNullStationary(t *testing.T) {
	reps, nights := reviewSize()
	var cases []nullCase
	for _, p := range []float64{0.02, 0.05, 0.15, 0.3, 0.5} {
		cases = append(cases, nullCase{name: fmt.Sprintf("one log, base %.2f", p), logs: 1, base: constBase(p), prev: constPrev})
	}
	cases = append(cases,
		nullCase{name: "5 logs, base 0.15", logs: 5, base: constBase(0.15), prev: constPrev},
		nullCase{name: "one log, base drifts 0.02→0.5", logs: 1, base: func(n, N, _ int) float64 { return lerp(0.02, 0.5, n, N) }, prev: constPrev},
		nullCase{name: "one log, prevalences drift 1%↔95%", logs: 1, base: constBase(0.15),
			prev: func(s, n, N, _ int) float64 { return lerp(spread[s], spread[reviewSignals-1-s], n, N) }},
	)
	for i, c := range cases {
		res := playNull(c, reps, nights, uint64(100+i))
		reportNull(t, c, res, nights, true)
	}
}

// The hard nulls: regression independent of every signal within each log and night, but the pooled
// population is confounded (logs or nights that regress more also carry a signal more often), or the
// outcomes are clustered (one same-area failure flags a run of tasks of the same kind).
func TestReviewEValueNullConfounded(t *testing.T) {
	reps, nights := reviewSize()
	// Five projects: the one that regresses most carries the signals that are frequent in it most.
	logBase := []float64{0.02, 0.05, 0.1, 0.2, 0.4}
	cases := []nullCase{
		{name: "5 logs, base 2–40 % by log, prevalence rising with the log's base", logs: 5,
			base: func(_, _, lg int) float64 { return logBase[lg] },
			prev: func(s, _, _, lg int) float64 { return lerp(0.05, 0.9, lg, 5) * spread[s] / 0.95 }},
		{name: "one log, base 0.05→0.4 and prevalences 5 %→90 % over the nights", logs: 1,
			base: func(n, N, _ int) float64 { return lerp(0.05, 0.4, n, N) },
			prev: func(s, n, N, _ int) float64 { return lerp(0.05, 0.9, n, N) * spread[s] / 0.95 }},
		{name: "one log, base 0.15, runs of 2 tasks share kind and outcome", logs: 1, cluster: 2,
			base: constBase(0.15), prev: constPrev},
		{name: "one log, base 0.15, runs of 3 tasks share kind and outcome", logs: 1, cluster: 3,
			base: constBase(0.15), prev: constPrev},
	}
	if os.Getenv("TUNE_HARNESS") == "full" {
		cases = append(cases, nullCase{name: "one log, base 0.05→0.4 and prevalences 5 %→90 % over the nights", logs: 1, nights: 120,
			base: func(n, N, _ int) float64 { return lerp(0.05, 0.4, n, N) },
			prev: func(s, n, N, _ int) float64 { return lerp(0.05, 0.9, n, N) * spread[s] / 0.95 }})
	}
	for i, c := range cases {
		n := nights
		if c.nights > 0 {
			n = c.nights
		}
		res := playNull(c, reps, n, uint64(200+i))
		// The pooled e-value fails the first case (the review note's finding 1) and the per-log one holds
		// there; drift within one log (finding 3) breaks the per-log e-value over long histories, and the
		// null maximised per log and per 30-night block holds; clustered outcomes break every variant
		// (finding 2) and are reported only.
		switch {
		case c.cluster > 1:
			logNull(t, c, res, n)
		case c.logs > 1:
			reportNull(t, c, res, n, false)
		default:
			logNull(t, c, res, n)
			checkOnsets(t, c, res)
			checkBounds(t, c, res, "per-block", res.blockedFamily, res.blockedPerSig20)
		}
	}
}

// blockedSummary is the time-stratified variant's rates.
func blockedSummary(res nullResult) string {
	w := 0
	for _, k := range res.blockedPerSig20 {
		w = max(w, k)
	}
	o := 0
	for _, k := range res.onsetPerSig20 {
		o = max(o, k)
	}
	return fmt.Sprintf("per log and %d-night block: family %s, worst e≥20 %s; mixed over onsets: family %s, worst e≥20 %s",
		blockNights, wrate(res.blockedFamily, res.reps), wrate(w, res.reps), wrate(res.onsetFamily, res.reps), wrate(o, res.reps))
}

// checkOnsets fails when the onset mixture (the screen's e-value) passes noise beyond its bounds: a
// family-wise rate above α or a signal's rate at e ≥ 20 above 1/20, beyond the interval.
func checkOnsets(t *testing.T, c nullCase, res nullResult) {
	t.Helper()
	checkBounds(t, c, res, "onset mixture", res.onsetFamily, res.onsetPerSig20)
}

// checkBounds fails when a variant's family-wise rate (sequences in which any signal ever reached 450)
// is above α, or its worst signal's rate at e ≥ 20 above 1/20, beyond the interval.
func checkBounds(t *testing.T, c nullCase, res nullResult, variant string, family int, perSig20 [reviewSignals]int) {
	t.Helper()
	worst := 0
	for _, k := range perSig20 {
		worst = max(worst, k)
	}
	for _, x := range []struct {
		what  string
		k     int
		bound float64
	}{{variant + " family e≥450", family, EvidenceAlpha}, {variant + " worst signal e≥20", worst, 1.0 / 20}} {
		if lo, _ := stats.Wilson(x.k, res.reps, 0.95); lo > x.bound {
			t.Errorf("%s: %s %s exceeds %.4f", c.name, x.what, wrate(x.k, res.reps), x.bound)
		}
	}
}

// logNull logs a case without checking it.
func logNull(t *testing.T, c nullCase, res nullResult, nights int) {
	t.Helper()
	worst, sworst := 0, 0
	for s := range res.perSig20 {
		worst, sworst = max(worst, res.perSig20[s]), max(sworst, res.stratPerSig20[s])
	}
	t.Logf("%s, %d nights: family e≥450 %s; per signal e≥450 %v; worst signal e≥20 %s; stratified: family %s, worst e≥20 %s; %s; max log e %.1f",
		c.name, nights, wrate(res.family, res.reps), res.perSig450, wrate(worst, res.reps), wrate(res.stratFamily, res.reps), wrate(sworst, res.reps), blockedSummary(res), res.maxLogE)
}

// reportNull logs a case and, when enforce is set, fails when the family-wise rate is above α beyond
// its interval or a signal's rate at e ≥ 20 is above 1/20 beyond its interval; the stratified variant is
// always held to both.
func reportNull(t *testing.T, c nullCase, res nullResult, nights int, enforce bool) {
	t.Helper()
	worst, worstS := 0, 0
	for s, k := range res.perSig20 {
		if k > worst {
			worst, worstS = k, s
		}
	}
	sworst := 0
	for _, k := range res.stratPerSig20 {
		sworst = max(sworst, k)
	}
	t.Logf("%s, %d nights: family e≥450 %s; per signal e≥450 %v; worst signal (prevalence %.2f) e≥20 %s; stratified: family %s, worst e≥20 %s; %s; max log e %.1f",
		c.name, nights, wrate(res.family, res.reps), res.perSig450, spread[worstS], wrate(worst, res.reps),
		wrate(res.stratFamily, res.reps), wrate(sworst, res.reps), blockedSummary(res), res.maxLogE)
	if res.nonFinite > 0 {
		t.Errorf("%s: %d NaN/+Inf e-values", c.name, res.nonFinite)
	}
	check := func(what string, k int, bound float64) {
		if lo, _ := stats.Wilson(k, res.reps, 0.95); lo > bound {
			t.Errorf("%s: %s %s exceeds %.4f", c.name, what, wrate(k, res.reps), bound)
		}
	}
	check("stratified family e≥450", res.stratFamily, EvidenceAlpha)
	check("stratified worst signal e≥20", sworst, 1.0/20)
	checkOnsets(t, c, res)
	if enforce {
		check("family e≥450", res.family, EvidenceAlpha)
		check("worst signal e≥20", worst, 1.0/20)
	}
}

// Numerics: the formula agrees with an independent quadrature of the alternative, is finite on ties,
// zeros and huge counts, and is monotone in the evidence far out.
func TestReviewEValueNumerics(t *testing.T) {
	// Independent numerator: log e + nullLogLik == logMarginal by construction, so check the numerator
	// of evalue.go against the grid on tables where the null's maximum is known in closed form.
	for _, tb := range [][4]int{{4, 0, 0, 12}, {3, 3, 0, 51}, {9, 0, 0, 2}, {7, 3, 2, 18}, {0, 5, 5, 5}, {20, 10, 15, 60}} {
		a, b, c, d := tb[0], tb[1], tb[2], tb[3]
		got, want := LogEValue(a, b, c, d)+reviewNullLogLik(a, b, c, d), logMarginal(a, b, c, d)
		if math.Abs(got-want) > 0.02 {
			t.Errorf("numerator at %v: evalue.go %.4f, grid %.4f", tb, got, want)
		}
	}
	if e := LogEValue(0, 0, 0, 0); e != 0 {
		t.Errorf("empty table: log e %v, want 0", e)
	}
	for _, tb := range [][4]int{{0, 0, 0, 5}, {0, 5, 0, 0}, {5, 0, 0, 0}, {0, 0, 5, 0}, {3, 3, 3, 3}, {1, 9, 10, 90},
		{1e5, 1e5, 1e5, 1e5}, {0, 1e6, 0, 1e6}, {1e6, 0, 0, 1e6}, {5e4, 5e4, 4e4, 6e4}} {
		e := LogEValue(tb[0], tb[1], tb[2], tb[3])
		if math.IsNaN(e) || math.IsInf(e, 1) {
			t.Errorf("%v: log e %v", tb, e)
		}
		if tb[0]*(tb[2]+tb[3]) == tb[2]*(tb[0]+tb[1]) && e > 0 {
			t.Errorf("tie %v: log e %v > 0 (evidence for a difference that is not in the table)", tb, e)
		}
	}
	// Far out: 10 %-vs-5 % tables growing ×10 each step; e must grow, never NaN.
	prev := math.Inf(-1)
	for _, n := range []int{100, 1000, 10000, 100000} {
		e := LogEValue(n/10, n-n/10, n/20, n-n/20)
		if math.IsNaN(e) || e < prev {
			t.Errorf("n=%d: log e %v after %v", n, e, prev)
		}
		prev = e
	}
}

// Power: the kept case passes at once; a moderate effect (eligible carriers flagged 75 %, the others
// 5 %) with realistic populations, nights until the signal becomes a candidate.
func TestReviewEValuePower(t *testing.T) {
	for _, tb := range [][4]int{{4, 0, 0, 12}, {4, 0, 1, 11}, {4, 1, 0, 12}, {3, 0, 0, 12}, {4, 0, 0, 6}, {9, 0, 0, 2}} {
		t.Logf("table %v: e = %.1f (threshold %.0f), more needed %d", tb, EValue(tb[0], tb[1], tb[2], tb[3]), Threshold, MoreNeeded(tb[0], tb[1], tb[2], tb[3]))
	}
	if !Passes(4, 0, 0, 12) {
		t.Errorf("the kept case 4/0/0/12 does not pass")
	}
	reps, _ := reviewSize()
	reps = max(reps, 200)
	for i, c := range []struct {
		carriers, pa, pb float64
		logs, start      int
	}{{0.3, 0.75, 0.05, 1, 0}, {0.15, 0.75, 0.05, 1, 0}, {0.3, 0.95, 0.05, 1, 0}, {0.3, 0.75, 0.05, 5, 0}, {0.3, 0.75, 0.05, 1, 15}, {0.3, 0.75, 0.05, 5, 15}} {
		r := rand.New(rand.NewPCG(uint64(300+i), 28))
		var first, firstStrat, firstBlocked []int
		// excessAt is the loss rule's Excess (‰) on the table that first passes: selected by the test,
		// it is biased upward against the planted pa − pb when the effect runs from night 1.
		var tasksAt, excessAt []int
		for rep := 0; rep < reps; rep++ {
			tab := make([]Table, c.logs)
			var blk []Table // per (block, log)
			f, fs, fb, tasks := 0, 0, 0, 0
			for night := 1; night <= 60 && (f == 0 || fs == 0 || fb == 0); night++ {
				if (night-1)%blockNights == 0 {
					blk = append(blk, make([]Table, c.logs)...)
				}
				for lg := range tab {
					for k := eligiblePerNight(r); k > 0; k-- {
						tasks++
						carrier := r.Float64() < c.carriers
						p := c.pb
						if carrier && night > c.start {
							p = c.pa
						}
						cell := 3
						flagged := r.Float64() < p
						switch {
						case carrier && flagged:
							cell = 0
						case carrier:
							cell = 1
						case flagged:
							cell = 2
						}
						tab[lg][cell]++
						blk[len(blk)-c.logs+lg][cell]++
					}
				}
				var pooled [4]int
				for _, x := range tab {
					for j := range pooled {
						pooled[j] += x[j]
					}
				}
				if f == 0 && pooled[0]*(pooled[2]+pooled[3]) > pooled[2]*(pooled[0]+pooled[1]) && Passes(pooled[0], pooled[1], pooled[2], pooled[3]) {
					f = night
					tasksAt = append(tasksAt, tasks)
					excessAt = append(excessAt, int(math.Round(1000*Excess(pooled[0], pooled[1], pooled[2], pooled[3]))))
				}
				if fs == 0 && pooled[0]*(pooled[2]+pooled[3]) > pooled[2]*(pooled[0]+pooled[1]) && passesStrata(tab) {
					fs = night
				}
				if fb == 0 && pooled[0]*(pooled[2]+pooled[3]) > pooled[2]*(pooled[0]+pooled[1]) && passesStrata(blk) {
					fb = night
				}
			}
			first, firstStrat, firstBlocked = append(first, nightOr(f)), append(firstStrat, nightOr(fs)), append(firstBlocked, nightOr(fb))
		}
		by30, sby30, bby30 := 0, 0, 0
		for j := range first {
			by30 += b2i(first[j] <= 30)
			sby30 += b2i(firstStrat[j] <= 30)
			bby30 += b2i(firstBlocked[j] <= 30)
		}
		t.Logf("carriers %.0f%% of eligible, %.0f%% vs %.0f%%, %d log(s), effect from night %d: candidate by night 30 %s, median night %d (%d eligible tasks); stratified by log: by night 30 %s, median night %d; by log and %d-night block: by night 30 %s, median night %d; Excess when it first passes: median %.3f (planted %.2f)",
			100*c.carriers, 100*c.pa, 100*c.pb, c.logs, c.start+1, wrate(by30, reps), median(first), median(tasksAt), wrate(sby30, reps), median(firstStrat), blockNights, wrate(bby30, reps), median(firstBlocked), float64(median(excessAt))/1000, c.pa-c.pb)
		if i == 0 && median(first) > 10 {
			t.Errorf("moderate effect, one log: median night %d > 10", median(first))
		}
	}
}

func nightOr(n int) int {
	if n == 0 {
		return 1 << 20
	}
	return n
}

func median(xs []int) int {
	if len(xs) == 0 {
		return -1
	}
	s := append([]int(nil), xs...)
	sort.Ints(s)
	return s[len(s)/2]
}

// Long histories (four 30-night blocks and more): the onset mixture, which restarts the e-value at each
// block, must keep noise from ever passing as the whole history's e-value does, with one log, with five,
// and with a base rate drifting together with the signals' shares.
func TestReviewEValueNullLongHistory(t *testing.T) {
	reps, nights := 40, 120
	if os.Getenv("TUNE_HARNESS") == "full" {
		reps, nights = 1000, 150
	}
	cases := []nullCase{
		{name: "one log, base 0.15", logs: 1, base: constBase(0.15), prev: constPrev},
		{name: "one log, base 0.4", logs: 1, base: constBase(0.4), prev: constPrev},
		{name: "5 logs, base 0.15", logs: 5, base: constBase(0.15), prev: constPrev},
		{name: "one log, base 0.05→0.4 and prevalences 5 %→90 % over the nights", logs: 1,
			base: func(n, N, _ int) float64 { return lerp(0.05, 0.4, n, N) },
			prev: func(s, n, N, _ int) float64 { return lerp(0.05, 0.9, n, N) * spread[s] / 0.95 }},
	}
	for i, c := range cases {
		res := playNull(c, reps, nights, uint64(500+i))
		logNull(t, c, res, nights)
		checkOnsets(t, c, res)
	}
}

// An effect after a long quiet history (eligible carriers flagged 75 % against 5 %, from night 61 or 91
// of one log): the whole history's e-value, sunk by the quiet months, rarely passes within 30 nights of
// the onset; the mixture restarts at the blocks and must pass far more often.
func TestOnsetMixtureFindsALateEffect(t *testing.T) {
	reps := 60
	if os.Getenv("TUNE_HARNESS") == "full" {
		reps = 1000
	}
	for i, quiet := range []int{60, 90} {
		r := rand.New(rand.NewPCG(uint64(600+i), 28))
		blocked, onsets := 0, 0
		for rep := 0; rep < reps; rep++ {
			var tables []Table
			var blocks []int
			fb, fo := false, false
			for night := 0; night < quiet+30 && !(fb && fo); night++ {
				if night%blockNights == 0 {
					tables, blocks = append(tables, Table{}), append(blocks, night/blockNights)
				}
				cur := &tables[len(tables)-1]
				for k := eligiblePerNight(r); k > 0; k-- {
					carrier := r.Float64() < 0.3
					p := 0.05
					if carrier && night >= quiet {
						p = 0.75
					}
					(*cur)[tableCell(carrier, r.Float64() < p)]++
				}
				var pooled Table
				for _, x := range tables {
					for j := range pooled {
						pooled[j] += x[j]
					}
				}
				if pooled[0]*(pooled[2]+pooled[3]) <= pooled[2]*(pooled[0]+pooled[1]) {
					continue
				}
				fb = fb || passesStrata(tables)
				fo = fo || PassesOnsets(tables, blocks)
			}
			blocked += b2i(fb)
			onsets += b2i(fo)
		}
		t.Logf("moderate effect after %d quiet nights, passing within 30 nights of its onset: whole history %s, mixed over onsets %s",
			quiet, wrate(blocked, reps), wrate(onsets, reps))
		if _, hi := stats.Wilson(blocked, reps, 0.95); onsets <= blocked || float64(onsets)/float64(reps) < hi {
			t.Errorf("after %d quiet nights the mixture passes %s, the whole history %s: no better", quiet, wrate(onsets, reps), wrate(blocked, reps))
		}
	}
}
