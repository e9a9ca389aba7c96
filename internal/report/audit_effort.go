package report

import (
	"fmt"
	"io"

	"github.com/ldd-tools/tune/internal/textfmt"
)

// EffortSection is the effort conformance of the audited transcripts (tune effort's check; rules in
// docs/decisions.md#effort-conformance-issue-14): how the main loop's phase shifts fared, how
// subagents ran against their agents' pins, and requests and spend per recorded level. Numbers and
// labels (verdicts, levels, agent types) only.
type EffortSection struct {
	Requests   int // requests read
	WithEffort int // requests whose transcript records a level (the rest are unknown, never guessed)
	// Census is false when no repository was read: shifts are then the effort-<level> skills and
	// agents are not judged against pins.
	Census bool
	Shifts []EffortCount // main-loop shifts by verdict, in the verdicts' order
	// Reasserts are the nested skills (loaded by an orchestrator skill with another pin) by verdict:
	// re-asserted, superseded, not re-asserted. Only with a census.
	Reasserts      []EffortCount
	SubagentShifts int // shifts inside subagents (the design forbids them)
	StuckSessions  int // sessions whose level never moves despite paired shifts
	Agents         []EffortAgent
	Levels         []EffortLevel
}

// EffortCount is a verdict and how many shifts got it.
type EffortCount struct {
	Verdict string
	N       int
}

// EffortAgent is one agent type's runs against its pin.
type EffortAgent struct {
	Agent, Pinned string // Pinned "" when the agent pins no level
	Observed      string // requests per level, e.g. "low 3, medium 1"
	Runs          int
	Verdict       string
}

// EffortLevel is the requests, output, thinking and share of weighted spend at one level.
type EffortLevel struct {
	Level            string
	Requests         int
	Output, Thinking int64
	Share            float64
}

// auditEffort writes the effort conformance section.
func auditEffort(w io.Writer, e *EffortSection, red *redactions) error {
	if !section(w, "Effort conformance", e.Requests, "No requests.") {
		return nil
	}
	fmt.Fprintf(w, "%s of %s %s record their effort level", fmtInt(int64(e.WithEffort)), fmtInt(int64(e.Requests)),
		textfmt.Form(e.Requests, "request", "requests"))
	if e.WithEffort < e.Requests {
		fmt.Fprintf(w, "; the other %s are unknown (Claude Code records effort since ≈2.1.21x), never guessed",
			fmtInt(int64(e.Requests-e.WithEffort)))
	}
	fmt.Fprintf(w, ".")
	if !e.Census {
		fmt.Fprintf(w, " No repository was read: shifts are the `effort-<level>` skills, and agents are not checked against pins (`--repo DIR`, or run inside the project that holds them).")
	}
	fmt.Fprintf(w, "\n\n")
	total := 0
	for _, c := range e.Shifts {
		total += c.N
	}
	if total > 0 {
		rows := make([][]string, len(e.Shifts))
		for i, c := range e.Shifts {
			rows[i] = []string{red.safe(c.Verdict), fmtInt(int64(c.N))}
		}
		if err := tableBlock(w, []Column{Text("main-loop shift verdict"), Num("shifts")}, rows); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "_No shift on the main loop._\n\n")
	}
	if len(e.Reasserts) > 0 {
		rows := make([][]string, len(e.Reasserts))
		for i, c := range e.Reasserts {
			rows[i] = []string{red.safe(c.Verdict), fmtInt(int64(c.N))}
		}
		fmt.Fprintf(w, "A skill loaded by an orchestrator skill with another level holds for the rest of the turn unless the orchestrator reloads its own:\n\n")
		if err := tableBlock(w, []Column{Text("nested skill verdict"), Num("nested skills")}, rows); err != nil {
			return err
		}
	}
	if e.SubagentShifts > 0 {
		fmt.Fprintf(w, "- **%s %s inside subagents**: the design forbids them (agents run on their pin).\n",
			fmtInt(int64(e.SubagentShifts)), textfmt.Form(e.SubagentShifts, "shift", "shifts"))
	}
	if e.StuckSessions > 0 {
		fmt.Fprintf(w, "- **%s %s never changed level** despite paired shifts (CLAUDE_CODE_EFFORT_LEVEL set, or a headless run).\n",
			fmtInt(int64(e.StuckSessions)), textfmt.Form(e.StuckSessions, "session", "sessions"))
	}
	if e.SubagentShifts+e.StuckSessions > 0 {
		fmt.Fprintln(w)
	}
	if len(e.Agents) > 0 {
		rows := make([][]string, len(e.Agents))
		for i, a := range e.Agents {
			pinned := a.Pinned
			if pinned == "" {
				pinned = "–"
			}
			rows[i] = []string{red.safe(a.Agent), red.safe(pinned), red.safe(a.Observed), fmtInt(int64(a.Runs)), red.safe(a.Verdict)}
		}
		cols := []Column{Text("agent"), Text("pinned"), Text("observed requests"), Num("runs"), Text("verdict")}
		if err := tableBlock(w, cols, rows); err != nil {
			return err
		}
	}
	if len(e.Levels) > 0 {
		rows := make([][]string, len(e.Levels))
		for i, l := range e.Levels {
			rows[i] = []string{red.safe(l.Level), fmtInt(int64(l.Requests)), fmtInt(l.Output), fmtInt(l.Thinking), fmtPct(l.Share)}
		}
		cols := []Column{Text("level"), Num("requests"), Num("output tokens"), Num("thinking tokens"), Num("share of weighted spend")}
		if err := tableBlock(w, cols, rows); err != nil {
			return err
		}
	}
	return nil
}
