package evolve

import (
	"math"
	"slices"

	"github.com/ldd-tools/tune/internal/weights"
)

// The accumulated evidence of a signal is tested with an e-value (docs/decisions.md#anytime-valid-test):
// a statistic whose expectation is at most 1 under the null at every sample size, and which, read at any
// night, after any number of earlier looks, rejects with probability at most 1/threshold (Ville's
// inequality). A night's look is therefore free, and a table that was refused keeps accumulating.
const (
	// EvidenceAlpha is the family-wise error over every night, log and signal: the probability that noise
	// ever makes any of the nine signals pass.
	EvidenceAlpha = 0.02
	// EvidenceFamily is the number of signals tested (Bonferroni on e-values: each needs e ≥ family/α).
	EvidenceFamily = weights.NumSignals
)

// Threshold is the e-value a signal needs: EvidenceFamily / EvidenceAlpha (450).
var Threshold = float64(EvidenceFamily) / EvidenceAlpha

// The alternative's prior: the regression rate of carriers pa ~ Beta(2,1), of the other eligible tasks
// pb ~ Beta(1,2), restricted to pa > pb. Its mean gap is 1/3, the smallest excess rate at which lifting a
// task pays under the stated losses (2·excess > 1 − excess); it is not fitted to any generator.
const (
	priorCarrierA, priorCarrierB = 2, 1
	priorOtherA, priorOtherB     = 1, 2
)

// lbeta is log B(a, b).
func lbeta(a, b float64) float64 {
	x, _ := math.Lgamma(a)
	y, _ := math.Lgamma(b)
	z, _ := math.Lgamma(a + b)
	return x + y - z
}

// probGreater is P(X > Y) for independent X ~ Beta(ax, bx), Y ~ Beta(ay, by), ax a positive integer: the
// exact finite sum (written by hand: gonum has the incomplete beta, not this closed form, and the sum is
// exact where a quadrature of two peaked densities is not).
func probGreater(ax, bx, ay, by float64) float64 {
	s := 0.0
	for i := 0.0; i < ax; i++ {
		s += math.Exp(lbeta(ay+i, by+bx) - math.Log(bx+i) - lbeta(1+i, bx) - lbeta(ay, by))
	}
	return math.Min(1, s)
}

// priorMass is P(pa > pb) under the unrestricted prior, the restriction's normaliser.
var priorMass = probGreater(priorCarrierA, priorCarrierB, priorOtherA, priorOtherB)

func xlogy(x, y float64) float64 {
	if x == 0 {
		return 0
	}
	return x * math.Log(y)
}

// Table is one stratum's 2×2 counts of a signal: a carriers flagged, b carriers not flagged, c other
// eligible tasks flagged, d not.
type Table [4]int

// tableCell is the cell of a Table a task enters: carriers first, regressed (flagged) first.
func tableCell(carrier, regressed bool) int {
	i := 3
	if carrier {
		i = 1
	}
	if regressed {
		i--
	}
	return i
}

// LogEValueStrata is the log e-value of a signal whose evidence comes from several strata (the logs
// read, and their 30-day blocks). Of one table: numerator the marginal likelihood of the two-Bernoulli
// alternative pa > pb under the prior above, denominator the likelihood maximised over the null pa ≤ pb.
// For each null parameter the numerator over that parameter's likelihood is a test martingale in task
// order; dividing by the null's maximum bounds the ratio by every one of them (universal inference), so
// the result is an e-process for the whole composite null, a function of the counts. Over strata the
// numerator is the alternative's marginal likelihood of the pooled table (any predictive distribution is
// a valid numerator), the denominator the null's likelihood maximised in each stratum apart (each its
// own rates, pa_k ≤ pb_k). The null maximised over the pooled table instead is not an e-process when
// logs differ: a project that regresses more and carries a signal more often makes the pooled carriers
// regress more though no log's do (Simpson), and the pooled e-value then grows without bound on noise
// (docs/decisions.md#evidence-per-log; the i28 review measured 99.9 % of 45-night sequences passing with
// five such logs). The screen mixes it over onsets (LogEValueOnsets).
func LogEValueStrata(tables []Table) float64 {
	var pooled Table
	den := 0.0
	for _, t := range tables {
		for i := range pooled {
			pooled[i] += t[i]
		}
		den += nullLogLik(t)
	}
	return logAlternative(pooled) - den
}

// logAlternative is the log marginal likelihood of a table under the alternative's prior.
func logAlternative(t Table) float64 {
	A, B, C, D := float64(t[0]), float64(t[1]), float64(t[2]), float64(t[3])
	return lbeta(A+priorCarrierA, B+priorCarrierB) - lbeta(priorCarrierA, priorCarrierB) +
		lbeta(C+priorOtherA, D+priorOtherB) - lbeta(priorOtherA, priorOtherB) +
		math.Log(probGreater(A+priorCarrierA, B+priorCarrierB, C+priorOtherA, D+priorOtherB)) - math.Log(priorMass)
}

// nullLogLik is a table's log likelihood maximised over the null pa ≤ pb.
func nullLogLik(t Table) float64 {
	A, B, C, D := float64(t[0]), float64(t[1]), float64(t[2]), float64(t[3])
	if A*(C+D) <= C*(A+B) {
		// The unrestricted maximum lies in the null: the MLE of each group.
		pa, pb := rate0(A, A+B), rate0(C, C+D)
		return xlogy(A, pa) + xlogy(B, 1-pa) + xlogy(C, pb) + xlogy(D, 1-pb)
	}
	q := (A + C) / (A + B + C + D)
	return xlogy(A+C, q) + xlogy(B+D, 1-q)
}

func rate0(k, n float64) float64 {
	if n == 0 {
		return 0
	}
	return k / n
}

// MaxLogE caps an e-value as shown and stored at 1e300, far past any threshold: a strong effect over
// months takes the log e-value past 709, where exp overflows to +Inf, which JSON cannot carry (a
// proposal's id is the hash of its JSON) and a reader could not use.
var MaxLogE = 300 * math.Ln10

// ShownEValue is the e-value of a log e-value as shown and stored: exp, capped at exp(MaxLogE).
func ShownEValue(logE float64) float64 { return math.Exp(min(logE, MaxLogE)) }

// OnsetWeight is the mixture's weight on the e-value of the whole history; the rest, 1 − OnsetWeight, is
// spread over the onsets at the start of each later 30-day block, (1 − OnsetWeight)/(k(k+1)) on block k
// (docs/decisions.md#onsets-at-30-day-blocks): an effect that begins after a long quiet history is
// judged on the blocks since it began, and one present from the start needs 2 % more evidence.
const OnsetWeight = 0.98

// LogEValueOnsets is the log e-value of a signal's evidence mixed over where an effect began: blocks[i]
// is the 30-day block of stratum i within its log (StratumSpan; NoBlock for tasks without a time, which
// only the whole history counts; nil: every stratum in block 0). E = w·E(every stratum) + (1 − w)·Σ_{k≥1}
// E(the strata of block k on)/(k(k+1)), w = OnsetWeight, each E the strata e-value (LogEValueStrata) and
// 1 for a block not yet reached. Each term is an e-process (a block's strata are fixed before its
// outcomes are read) and the weights sum to 1, so the mixture is one: Ville's bound holds over every
// look as before. Without it, quiet months before an effect drive the pooled e-value towards 0 and the
// effect is not applied within 30 nights of its onset after 60 quiet ones (docs/live-harness.md).
func LogEValueOnsets(tables []Table, blocks []int) float64 {
	logE, _ := onsetMixture(tables, blocks)
	return logE
}

// OnsetWindow is how many of the latest blocks reached the mixture weighs as onsets (a year of 30-day
// blocks). An onset further back keeps its weight unspent: dropping a term of a mixture of e-processes
// only lowers it, so the bound holds, and a history of years costs 13 terms, not one per month (an
// effect that began earlier is still in the later blocks' terms while it lasts).
const OnsetWindow = 12

// onsetMixture is LogEValueOnsets and the block whose term carries the most of it: 0 when the whole
// history's does, k when the tasks from block k on do (what the explanations name as the evidence's
// start).
func onsetMixture(tables []Table, blocks []int) (logE float64, onset int) {
	m := newMixture(tables, blocks)
	return m.logE(m.alternatives(-1, 0), -1, 0)
}

// mixture is what the onset mixture's terms sum, summed once: the whole history's pooled table and null
// log likelihood, and those of each weighed onset, from its block to the last. A stratum's counts
// changed is then weighed from these sums and that stratum's own null (moreNeededFailing), not by
// summing every stratum again: with a hundred logs that search was quadratic in the logs.
//
// An onset at a block no stratum holds has, at every time, the same e-value as the onset at the next
// block that holds one, so the two are one term whose weight is their weights' sum: Σ_{k=a+1..b}
// 1/(k(k+1)) = 1/(a+1) − 1/(b+1), a the block held before b (0 for the first). So a month without
// tasks — a project paused, or one task misdated years ahead — neither spends the window nor loses the
// weight of the onsets it skips. Only the onsets whose data begin in one of the last OnsetWindow blocks
// that hold a stratum are weighed; dropping the others only lowers the mixture.
type mixture struct {
	whole     Table   // every stratum pooled
	wholeNull float64 // Σ nullLogLik over every stratum
	// onsets[k] is the onset at the k-th weighed block (ascending): its block, the log of its weight,
	// and the strata from its block on, pooled and their nulls summed from the last block back.
	onsets []mixtureOnset
	index  map[int]int // a weighed block → its onset's position
	last   int         // the last block held (0: none after block 0)
}

type mixtureOnset struct {
	block   int
	logW    float64
	suffix  Table
	sufNull float64
}

func newMixture(tables []Table, blocks []int) *mixture {
	m := &mixture{}
	for _, t := range tables {
		for j := range t {
			m.whole[j] += t[j]
		}
		m.wholeNull += nullLogLik(t)
	}
	var held []int
	for _, b := range blocks {
		if b >= 1 {
			held = append(held, b)
		}
	}
	slices.Sort(held)
	held = slices.Compact(held)
	if len(held) == 0 {
		return m
	}
	m.last = held[len(held)-1]
	// prev[i] is the block held before held[i] (0 for the first): the onsets in (prev, held[i]] share
	// its term.
	prev := make([]int, len(held))
	for i := 1; i < len(held); i++ {
		prev[i] = held[i-1]
	}
	from := max(0, len(held)-OnsetWindow)
	held, prev = held[from:], prev[from:]
	m.index = make(map[int]int, len(held))
	for i, b := range held {
		m.index[b] = i
	}
	pooled := make([]Table, len(held))
	null := make([]float64, len(held))
	for i, t := range tables {
		if k, ok := m.index[blocks[i]]; ok {
			for j := range t {
				pooled[k][j] += t[j]
			}
			null[k] += nullLogLik(t)
		}
	}
	m.onsets = make([]mixtureOnset, len(held))
	var suffix Table
	sufNull := 0.0
	for k := len(held) - 1; k >= 0; k-- {
		for j := range suffix {
			suffix[j] += pooled[k][j]
		}
		sufNull += null[k]
		weight := 1/float64(prev[k]+1) - 1/float64(held[k]+1)
		m.onsets[k] = mixtureOnset{held[k], math.Log((1 - OnsetWeight) * weight), suffix, sufNull}
	}
	return m
}

// position is the onset whose block a stratum's is, -1 when none is weighed (block 0, NoBlock, or
// before the window): only the whole history's term then counts that stratum.
func (m *mixture) position(block int) int {
	if k, ok := m.index[block]; ok {
		return k
	}
	return -1
}

// alternatives is each term's log weight plus the alternative's log marginal likelihood of its pooled
// table, with add flagged carriers more in a stratum at position at: the whole history's first, then the
// onsets'. They depend on the stratum only through its position, so the search for more_needed weighs
// them once per position and count.
func (m *mixture) alternatives(at, add int) []float64 {
	alts := make([]float64, 1+len(m.onsets))
	whole := m.whole
	whole[0] += add
	alts[0] = logAlternative(whole)
	for k, o := range m.onsets {
		if k <= at {
			o.suffix[0] += add
		}
		alts[1+k] = o.logW + logAlternative(o.suffix)
	}
	return alts
}

// logE is the mixture's log e-value and its largest term's block, from alternatives(at, …) and the
// change delta of the null log likelihood of the stratum the carriers were added to (0: none added).
func (m *mixture) logE(alts []float64, at int, delta float64) (float64, int) {
	logs := make([]float64, 0, len(alts)+1)
	best := onsetTerm{0, math.Log(OnsetWeight) + (alts[0] - (m.wholeNull + delta))}
	logs = append(logs, best.logE)
	for k, o := range m.onsets {
		null := o.sufNull
		if k <= at {
			null += delta
		}
		t := onsetTerm{o.block, alts[1+k] - null}
		logs = append(logs, t.logE)
		if t.logE > best.logE {
			best = t
		}
	}
	// The onsets after the last block reached: E = 1 each, weights summing to (1 − w)/(last+1).
	logs = append(logs, math.Log((1-OnsetWeight)/float64(m.last+1)))
	return logSumExp(logs), best.block
}

// onsetTerm is one weighted term of the mixture: the onset's block (0: the whole history) and the log
// of its weight times its e-value.
type onsetTerm struct {
	block int
	logE  float64
}

// logSumExp is log Σ exp(x).
func logSumExp(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	if math.IsInf(m, 0) {
		return m
	}
	s := 0.0
	for _, x := range xs {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}

// PassesOnsets reports whether the onset mixture's e-value reaches the threshold.
func PassesOnsets(tables []Table, blocks []int) bool {
	return LogEValueOnsets(tables, blocks) >= math.Log(Threshold)
}

// MaxMoreNeeded bounds the search for how many more flagged carriers a signal needs.
const MaxMoreNeeded = 50

// MoreNeeded is how many more low-side regressions carrying the signal (each a new flagged carrier,
// nothing else changing) would make the table pass: 0 when it passes, -1 when more than MaxMoreNeeded.
func MoreNeeded(a, b, c, d int) int { return MoreNeededOnsets([]Table{{a, b, c, d}}, nil, nil) }

// MoreNeededOnsets is MoreNeeded over strata: the fewest new flagged carriers, all in one stratum where
// latest is set (each log's latest block, where the regressions still to come arrive; every stratum when
// latest is nil), that make the onset mixture pass. The counts are tried in order, not bisected: a
// flagged carrier added to a stratum with few other tasks can lower the e-value (the stratum's null then
// explains it with a rate near 1), so the counts that pass need not be every count from some k on (the
// independent review of the mixture, TestMoreNeededIsNotBisected).
func MoreNeededOnsets(tables []Table, blocks []int, latest []bool) int {
	if PassesOnsets(tables, blocks) {
		return 0 // one evaluation, the common case of a candidate
	}
	return moreNeededFailing(tables, blocks, latest)
}

// moreNeededFailing is MoreNeededOnsets of strata that do not pass (the screen knows it already).
func moreNeededFailing(tables []Table, blocks []int, latest []bool) int {
	m := newMixture(tables, blocks)
	threshold := math.Log(Threshold)
	at := make([]int, len(tables))
	for i := range tables {
		at[i] = -1
		if blocks != nil {
			at[i] = m.position(blocks[i])
		}
	}
	alts := map[int][]float64{}
	for k := 1; k <= MaxMoreNeeded; k++ {
		clear(alts)
		for i, t := range tables {
			if latest != nil && !latest[i] {
				continue
			}
			a, ok := alts[at[i]]
			if !ok {
				a = m.alternatives(at[i], k)
				alts[at[i]] = a
			}
			with := t
			with[0] += k
			if logE, _ := m.logE(a, at[i], nullLogLik(with)-nullLogLik(t)); logE >= threshold {
				return k
			}
		}
	}
	return -1
}

// Excess is the estimated excess regression rate of carriers over the other eligible tasks: the
// difference of the posterior means under uniform priors, floored at 0 (an estimate for the loss rule,
// docs/decisions.md#loss-rule; the test's prior is not used for it, so it does not lean towards an effect).
func Excess(a, b, c, d int) float64 {
	x := float64(a+1)/float64(a+b+2) - float64(c+1)/float64(c+d+2)
	return math.Max(0, x)
}
