package watch

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// The watch's tests are e-processes on a Bernoulli rate: a nonnegative process that is a
// supermartingale while the tested rate is at most its null, so by Ville's inequality it ever reaches
// 1/α with probability at most α, however often it is looked at. Each night's look, every log pooled
// into one process and the regression of a task learnt only later (which can only lower the value
// seen) therefore cost nothing (docs/decisions.md#watch). Written here rather than taken from a
// library: no Go package has them, and each is a line of arithmetic on logs.

// pointLogE is the log likelihood ratio of k events in n trials at the rate alt against the rate
// null (alt > null). It is a test martingale at rate null and a supermartingale below it, because
// the ratio grows with the count of events.
func pointLogE(k, n int, null, alt float64) float64 {
	return float64(k)*math.Log(alt/null) + float64(n-k)*math.Log((1-alt)/(1-null))
}

// mixtureLogE is the log of the likelihood ratio against the rate null averaged over the
// alternatives uniform on [null, 1]. Every such ratio is a supermartingale at a rate ≤ null, so the
// average is one too; it needs no single alternative, for the tests that have none to take from the
// tasks before. The integral is B(k+1, n−k+1)·(1 − I_null(k+1, n−k+1)), and 1 − I_x(a, b) =
// I_{1−x}(b, a) keeps the precision where the tail is small.
func mixtureLogE(k, n int, null float64) float64 {
	a, b := float64(k+1), float64(n-k+1)
	tail := mathext.RegIncBeta(b, a, 1-null)
	if tail <= 0 {
		return math.Inf(-1)
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	return la + lb - lab + math.Log(tail) - math.Log(1-null) - float64(k)*math.Log(null) - float64(n-k)*math.Log(1-null)
}

// moreEvents is how many more events in a row (each one more trial with an event) would take logE
// to at least threshold, given the next value for m more; 0 when it is there already, -1 when no
// number up to limit does.
func moreEvents(logE, threshold float64, next func(m int) float64) int {
	const limit = 1000
	if logE >= threshold {
		return 0
	}
	for m := 1; m <= limit; m++ {
		if next(m) >= threshold {
			return m
		}
	}
	return -1
}
