package report

// reportCharts are the charts of the sample reports, for TestChartsPNG.
func reportCharts() []namedChart {
	loss, _ := proposalLossChart(sampleProposal())
	return []namedChart{{"proposal-loss", loss}}
}
