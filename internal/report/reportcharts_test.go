package report

// reportCharts are the charts of the sample reports, for TestChartsPNG.
func reportCharts() []namedChart { return nil }
