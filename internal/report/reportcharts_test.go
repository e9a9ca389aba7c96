package report

// reportCharts are the charts of the sample reports, for TestChartsPNG.
func reportCharts() []namedChart {
	loss, _ := proposalLossChart(sampleProposal())
	hloss, _ := historyLossChart(sampleHistory())
	traj, _ := historyTrajectoryChart(sampleHistory())
	audit := sampleAudit()
	return []namedChart{
		{"proposal-loss", loss}, {"history-loss", hloss}, {"history-weights", traj},
		{"audit-spend", auditSpendChart(audit.Spend)}, {"audit-ab", auditABChart(audit.AB)},
	}
}
