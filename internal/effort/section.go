package effort

import "github.com/ldd-tools/tune/internal/report"

// Section is the audit report's effort conformance section of o: numbers and labels only. census
// says whether pins were read (without, agents are not judged).
func Section(o *Observed, census bool) *report.EffortSection {
	s := &report.EffortSection{Requests: o.Input.Requests, WithEffort: o.Input.WithEffort, Census: census,
		SubagentShifts: len(o.SubagentShifts), StuckSessions: len(o.Stuck)}
	counts := map[string]int{}
	for _, sh := range o.Shifts {
		counts[sh.Verdict]++
	}
	for _, v := range ShiftVerdicts {
		if counts[v] > 0 {
			s.Shifts = append(s.Shifts, report.EffortCount{Verdict: v, N: counts[v]})
		}
	}
	reasserts := map[string]int{}
	for _, r := range o.Reasserts {
		reasserts[r.Verdict]++
	}
	for _, v := range []string{ReassertOK, ReassertSuperseded, ReassertMissing} {
		if reasserts[v] > 0 {
			s.Reasserts = append(s.Reasserts, report.EffortCount{Verdict: v, N: reasserts[v]})
		}
	}
	for _, a := range o.Agents {
		pinned := ""
		if a.Pinned != nil {
			pinned = *a.Pinned
		}
		s.Agents = append(s.Agents, report.EffortAgent{Agent: a.Agent, Pinned: pinned, Observed: LevelCounts(a.Observed),
			Runs: a.Runs, Verdict: a.Verdict})
	}
	for _, b := range o.ByLevel {
		s.Levels = append(s.Levels, report.EffortLevel{Level: b.Key, Requests: b.Requests, Output: int64(b.OutputTokens),
			Thinking: int64(b.ThinkingTokens), Share: b.Share})
	}
	return s
}
