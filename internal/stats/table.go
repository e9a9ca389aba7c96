package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Table cells follow one layout throughout (see the package doc):
// a = signal present & flagged, b = present & not flagged,
// c = absent & flagged, d = absent & not flagged.

func anyNegative(cells ...int) bool {
	for _, c := range cells {
		if c < 0 {
			return true
		}
	}
	return false
}

// hypergeomLogPMF is log P(X=x) for X = flagged among the signal-present
// rows, with rowPresent rows having the signal, colFlagged flagged rows and
// total rows in all.
func hypergeomLogPMF(x, rowPresent, colFlagged, total int) float64 {
	return logChoose(colFlagged, x) + logChoose(total-colFlagged, rowPresent-x) - logChoose(total, rowPresent)
}

// fisherTail is P(X ≥ from) for the table's margins. gonum has no
// hypergeometric distribution, so the terms come from math.Lgamma.
func fisherTail(from, rowPresent, colFlagged, total int) float64 {
	lo := max(0, rowPresent+colFlagged-total)
	hi := min(rowPresent, colFlagged)
	if from <= lo {
		return 1
	}
	p := 0.0
	// Summing from the far tail inwards adds the small terms first.
	for x := hi; x >= from; x-- {
		p += math.Exp(hypergeomLogPMF(x, rowPresent, colFlagged, total))
	}
	return math.Min(1, p)
}

// FisherGreater is the one-sided Fisher exact test that the signal goes with
// more flags than chance: P(X ≥ a) given the margins (scipy
// fisher_exact(alternative="greater")). Negative cells give NaN.
func FisherGreater(a, b, c, d int) float64 {
	if anyNegative(a, b, c, d) {
		return math.NaN()
	}
	return fisherTail(a, a+b, a+c, a+b+c+d)
}

// FisherMinP is the smallest one-sided p FisherGreater could give for any
// table with these margins, P(X = min(a+b, a+c)). When it exceeds α the
// screen cannot find anything, whatever the counts: "underpowered".
func FisherMinP(a, b, c, d int) float64 {
	if anyNegative(a, b, c, d) {
		return math.NaN()
	}
	rowPresent, colFlagged := a+b, a+c
	return fisherTail(min(rowPresent, colFlagged), rowPresent, colFlagged, a+b+c+d)
}

// Phi is the phi coefficient (Matthews correlation) of the table, in [-1, 1].
// It is 0 when a margin is empty (no variation to correlate), as sklearn's
// matthews_corrcoef, and NaN for negative cells.
func Phi(a, b, c, d int) float64 {
	if anyNegative(a, b, c, d) {
		return math.NaN()
	}
	fa, fb, fc, fd := float64(a), float64(b), float64(c), float64(d)
	den := float64(fa+fb) * float64(fc+fd) * float64(fa+fc) * float64(fb+fd)
	if den == 0 {
		return 0
	}
	// Explicit float64 conversions stop the compiler fusing multiply-adds,
	// so the value is identical on every architecture.
	num := float64(fa*fd) - float64(fb*fc)
	return num / math.Sqrt(den)
}

// LogOddsZ is the log odds ratio log(ad/bc) with the Haldane–Anscombe
// correction (+½ to every cell when any cell is 0, as statsmodels
// Table2x2(shift_zeros=True)), its standard error √(1/a+1/b+1/c+1/d) and
// z = logOR/se. Negative cells give NaNs.
func LogOddsZ(a, b, c, d int) (logOR, se, z float64) {
	if anyNegative(a, b, c, d) {
		return math.NaN(), math.NaN(), math.NaN()
	}
	fa, fb, fc, fd := float64(a), float64(b), float64(c), float64(d)
	if a == 0 || b == 0 || c == 0 || d == 0 {
		fa, fb, fc, fd = fa+0.5, fb+0.5, fc+0.5, fd+0.5
	}
	logOR = math.Log(fa) + math.Log(fd) - math.Log(fb) - math.Log(fc)
	se = math.Sqrt(1/fa + 1/fb + 1/fc + 1/fd)
	return logOR, se, logOR / se
}

// JeffreysInterval is the equal-tailed Jeffreys interval for a proportion
// k/n: quantiles of Beta(k+½, n−k+½), with lo=0 when k=0 and hi=1 when k=n
// (statsmodels proportion_confint(method="jeffreys")). For 2/9 at 0.95 it is
// [0.049, 0.544]. Invalid counts give NaNs.
func JeffreysInterval(k, n int, confidence float64) (lo, hi float64) {
	if k < 0 || n < k || !(confidence > 0 && confidence < 1) {
		return math.NaN(), math.NaN()
	}
	beta := distuv.Beta{Alpha: float64(k) + 0.5, Beta: float64(n-k) + 0.5}
	tail := (1 - confidence) / 2
	lo, hi = 0, 1
	if k > 0 {
		lo = beta.Quantile(tail)
	}
	if k < n {
		hi = beta.Quantile(1 - tail)
	}
	return lo, hi
}

// TableScreen is one row of the signal screen: everything the evolution step
// reports about a signal's 2×2 table. Holm adjustment needs the whole family
// and is left to the caller (Holm over the P fields).
type TableScreen struct {
	A, B, C, D int

	RateWith, RateWithLo, RateWithHi          float64 // a/(a+b), Jeffreys CI
	RateWithout, RateWithoutLo, RateWithoutHi float64 // c/(c+d), Jeffreys CI

	Phi               float64
	LogOR, SE, Z      float64 // Haldane–Anscombe
	P                 float64 // one-sided Fisher (greater)
	MinP              float64 // smallest attainable P for these margins
	Underpowered      bool    // MinP > alpha: no count could reach alpha
	Alpha, Confidence float64
}

// PrevalenceDiff is a/(a+c) − b/(b+d): how much more common the property is in the first group
// (a present, c absent) than in the second (b present, d absent); NaN when a group is empty. The screen
// calls it the effect (docs/decisions.md#screen).
func PrevalenceDiff(a, b, c, d int) float64 {
	if a+c == 0 || b+d == 0 {
		return math.NaN()
	}
	return float64(a)/float64(a+c) - float64(b)/float64(b+d)
}

// Screen computes a TableScreen. Rates of an empty row are NaN with a [0,1]
// interval.
func Screen(a, b, c, d int, alpha, confidence float64) TableScreen {
	s := TableScreen{A: a, B: b, C: c, D: d, Alpha: alpha, Confidence: confidence}
	s.RateWith, s.RateWithLo, s.RateWithHi = rateWithCI(a, a+b, confidence)
	s.RateWithout, s.RateWithoutLo, s.RateWithoutHi = rateWithCI(c, c+d, confidence)
	s.Phi = Phi(a, b, c, d)
	s.LogOR, s.SE, s.Z = LogOddsZ(a, b, c, d)
	s.P = FisherGreater(a, b, c, d)
	s.MinP = FisherMinP(a, b, c, d)
	s.Underpowered = !(s.MinP <= alpha)
	return s
}

func rateWithCI(k, n int, confidence float64) (rate, lo, hi float64) {
	lo, hi = JeffreysInterval(k, n, confidence)
	if n == 0 {
		return math.NaN(), lo, hi
	}
	return float64(k) / float64(n), lo, hi
}
