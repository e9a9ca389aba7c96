package report

// reportCharts are the charts of the sample reports, for TestChartsPNG.
func reportCharts() []NamedChart {
	var out []NamedChart
	for _, c := range ProposalCharts(sampleProposal()) {
		out = append(out, NamedChart{"proposal-" + c.Name, c.Chart})
	}
	for _, c := range HistoryCharts(sampleHistoryAccuracy()) {
		out = append(out, NamedChart{"history-" + c.Name, c.Chart})
	}
	for _, c := range AuditCharts(sampleAudit()) {
		out = append(out, NamedChart{"audit-" + c.Name, c.Chart})
	}
	return out
}
