package report

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkRender renders each sample report (Markdown and SVG charts).
func BenchmarkRender(b *testing.B) {
	for _, c := range []struct {
		name   string
		render func() ([]File, error)
	}{
		{"proposal", func() ([]File, error) { return RenderProposal(sampleProposal()) }},
		{"history", func() ([]File, error) { return RenderHistory(sampleHistory()) }},
		{"audit", func() ([]File, error) { return RenderAudit(sampleAudit()) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.render(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkProposalScenarios renders a proposal report over suites of growing size (the replay table and
// the loss chart grow with it).
func BenchmarkProposalScenarios(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		in := sampleProposal()
		in.Replay = nil
		for i := range n {
			in.Replay = append(in.Replay, ScenarioLoss{Scenario: fmt.Sprintf("scenario-%04d", i), Expected: "L2",
				LevelBefore: "L1", LevelAfter: "L2", LossBefore: float64(i % 3), LossAfter: float64(i % 2)})
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := RenderProposal(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRedact(b *testing.B) {
	title := "rotate the deploy key " + secretKey + " in ci/secrets.yaml and https://ops:pw@host/x"
	for b.Loop() {
		Redact(title)
	}
}

func BenchmarkChartSVG(b *testing.B) {
	for _, nc := range sampleCharts() {
		b.Run(nc.Name, func(b *testing.B) {
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if err := nc.Chart.Render(&buf, SVG); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
