package stats

// MannWhitney is the two-sided Mann–Whitney U test of x against y. See
// MannWhitneyTest for details.
func MannWhitney(x, y []float64) (u, p float64) {
	r := MannWhitneyTest(x, y)
	return r.U, r.P
}

// SignedRank is the two-sided Wilcoxon signed-rank p for paired
// differences. See SignedRankTest.
func SignedRank(diffs []float64) (p float64) {
	return SignedRankTest(diffs).P
}
