package report

// reportCharts are the charts of the sample reports, for TestChartsPNG.
func reportCharts() []NamedChart {
	var out []NamedChart
	for _, c := range proposalCharts(sampleProposal()) {
		out = append(out, NamedChart{"proposal-" + c.Name, c.Chart})
	}
	for _, c := range HistoryCharts(sampleHistoryAccuracy()) {
		out = append(out, NamedChart{"history-" + c.Name, c.Chart})
	}
	for _, c := range auditCharts(sampleAudit()) {
		out = append(out, NamedChart{"audit-" + c.Name, c.Chart})
	}
	return out
}

// proposalCharts and auditCharts are the charts a proposal and an audit report draw (HistoryCharts
// is the history report's), for rendering them as PNG (make charts).
func proposalCharts(in ProposalReport) []NamedChart {
	var out []NamedChart
	if c, ok := decisionChart(in); ok {
		out = append(out, NamedChart{"decision", c})
	}
	if c, n := proposalLossChart(in); n > 0 {
		out = append(out, NamedChart{"loss", c})
	}
	return out
}

func auditCharts(in AuditReport) []NamedChart {
	var out []NamedChart
	if len(in.Spend) > 0 {
		out = append(out, NamedChart{"spend", auditSpendChart(in.Spend)})
	}
	if in.AB != nil && abHasRuns(in.AB) {
		out = append(out, NamedChart{"ab", auditABChart(in.AB)})
	}
	return out
}
