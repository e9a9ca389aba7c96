// Package stats is the pure statistics used by tune: the evolution step's
// signal screen (2×2 tables) and the transcript A/B audit (medians, rank
// tests, bootstrap effect sizes). Nothing here prints or reads files; where
// a result needs a caveat, the caveat is returned as data (Warnings).
//
// Every 2×2 table function takes its cells in this layout:
//
//	                 flagged (miss)   not flagged
//	signal present        a               b
//	signal absent         c               d
//
// Conventions and assumptions, function by function:
//
//   - Median is the ordinary sample median: the middle value, or the mean of
//     the middle pair for even n. It is NOT gonum's stat.Quantile(LinInterp),
//     which gives 2.5 for {1,2,3,4,10}. Empty input gives NaN.
//
//   - MedianCI / QuantileCI are distribution-free intervals built from order
//     statistics (binomial sampling distribution of the rank of the
//     population quantile), the method benchstat uses (go-moremath
//     QuantileCI). ok=false when the sample is too small for the requested
//     confidence; the missing bound is then ±Inf. MinSamplesForCI gives the
//     threshold (6 at 95%, 8 at 99%). Ties are harmless: bounds are sample
//     values.
//
//   - MannWhitneyTest: two-sided Wilcoxon–Mann–Whitney U test.
//     u is U for x: #(x>y) + ½·#(x=y) over all pairs. Tied values get
//     mid-ranks. The p-value is exact (the permutation distribution of the
//     rank sum, conditional on the tie pattern) when both samples have ≤ 50
//     values and there are no ties, or ≤ 25 values with ties — benchstat's
//     limits. Without ties p equals benchstat's (go-moremath); with ties it
//     can differ, because go-moremath doubles one tail as if the tied null
//     distribution were symmetric and can return p>1 or even 0 (see the
//     tests). Above the limits it is the normal approximation with tie and
//     continuity correction, as benchstat. Empty samples or a NaN value give
//     U=p=NaN; all values equal give p=1. MannWhitneyMinP gives the smallest
//     p attainable for the sizes; MinMWUSamples the per-arm n needed for that
//     to reach α (4 at 0.05).
//
//   - SignTest: exact two-sided binomial test with P=½ on the counts of
//     positive and negative differences (McNemar exact on discordant pairs);
//     zeros/concordant pairs must be dropped by the caller. pos+neg=0 gives 1.
//     SignTestMinP(k)=min(1, 2·0.5^k).
//
//   - SignedRankTest: two-sided Wilcoxon signed-rank test on
//     paired differences. Zero differences are dropped (Wilcoxon's method,
//     scipy's default), |d| ties get mid-ranks. Exact (conditional on ties)
//     for ≤ 50 non-zero differences, normal approximation with tie and
//     continuity correction above. No non-zero difference gives p=1.
//
//   - Holm: Holm–Bonferroni step-down adjusted p-values, in the input order,
//     each ≥ its raw p, capped at 1, monotone in the raw order. NaN entries
//     stay NaN and do not count towards the family size.
//
//   - 2×2 tables use the layout shown below (a = signal present and
//     flagged). FisherGreater is the one-sided Fisher exact p that the signal raises
//     the miss rate: P(X ≥ a) under the hypergeometric law with the table's
//     margins (computed from math.Lgamma; gonum has no hypergeometric).
//     FisherMinP is the smallest p attainable with those margins; if it is
//     above α the table is underpowered whatever the counts. Phi is the
//     Matthews/phi correlation, 0 when any margin is empty. LogOddsZ is the
//     log odds ratio with the Haldane–Anscombe correction (+½ to every cell
//     when any cell is 0), its Woolf SE and z=logOR/SE. JeffreysInterval is
//     the Beta(k+½, n−k+½) posterior interval, with lo=0 when k=0 and hi=1
//     when k=n (as statsmodels). Negative cells give NaN.
//
//   - BootstrapRatioCI: the ratio of medians Median(y)/Median(x) and its
//     percentile-bootstrap interval from n resamples (1000 when n ≤ 0),
//     each arm resampled independently with math/rand/v2 PCG seeded by the
//     caller (use SeedFrom(x, y): an FNV-1a hash of the data, so the same
//     data gives the same bytes). A resampled baseline median of 0 gives a
//     ratio of +Inf, -Inf, or 1 (0/0: "no change"). Percentiles are type 7
//     (linear between order statistics), written so the compiler cannot fuse
//     multiply-adds, so results are identical across architectures.
//
//   - Summarize, CompareUnpaired and ComparePaired bundle the above for the
//     audit table and attach benchstat-style warnings ("need ≥ 6 samples for
//     a confidence interval at level 0.95", "need ≥ 4 samples to detect a
//     difference at alpha level 0.05", ...). Screen does the same for one row
//     of the signal screen.
package stats
