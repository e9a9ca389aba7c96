package effort

import (
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/ldd-tools/tune/internal/termtable"
)

// shortID is the first 8 characters of a session or agent id, enough to find it.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// clock is a transcript timestamp as "2006-01-02 15:04:05".
func clock(ts string) string {
	if len(ts) >= 19 && ts[10] == 'T' {
		return ts[:10] + " " + ts[11:19]
	}
	return ts
}

func orDash(p *string) string {
	if p == nil {
		return dash
	}
	return *p
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func thousands(n uint64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// levelCounts is "high 3, medium 2" in level order.
func levelCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return levelLess(keys[i], keys[j]) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func writeObserved(b io.Writer, o *Observed, census bool) error {
	in := o.Input
	fmt.Fprintf(b, "transcripts: %d sessions, %d files, %d requests, effort recorded on %d", in.Sessions, in.Files, in.Requests, in.WithEffort)
	if n := in.Requests - in.WithEffort; n > 0 {
		fmt.Fprintf(b, " (%d unknown: Claude Code records effort since ≈2.1.21x; never guessed)", n)
	}
	io.WriteString(b, "\n")
	if !census {
		io.WriteString(b, "no --repo: shifts are the effort-<level> skills; agents are not checked against pins\n")
	}

	counts := map[string]int{}
	for _, s := range o.Shifts {
		counts[s.Verdict]++
	}
	fmt.Fprintf(b, "\nshifts on the main loop: %d", len(o.Shifts))
	var parts []string
	for _, v := range ShiftVerdicts {
		if counts[v] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", v, counts[v]))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(b, " (%s)", strings.Join(parts, ", "))
	}
	io.WriteString(b, "\n")
	if len(o.Shifts) > 0 {
		if err := writeShifts(b, o.Shifts); err != nil {
			return err
		}
	}
	if len(o.Reasserts) > 0 {
		if err := writeReasserts(b, o.Reasserts); err != nil {
			return err
		}
	}
	if len(o.SubagentShifts) > 0 {
		fmt.Fprintf(b, "\nshifts inside subagents (the design forbids them: agents run on their pin): %d\n", len(o.SubagentShifts))
		if err := writeShifts(b, o.SubagentShifts); err != nil {
			return err
		}
	}
	for _, s := range o.Shifts {
		if s.Note != "" {
			fmt.Fprintf(b, "note: shift %s in session %s at %s: %s\n", s.Skill, shortID(s.Session), clock(s.Timestamp), s.Note)
		}
	}
	for _, s := range o.Stuck {
		fmt.Fprintf(b, "\nsession %s stays at %s despite %d paired shift(s): %s\n", shortID(s.Session), s.Level, s.Shifts, s.Reason)
	}

	if len(o.Agents) > 0 {
		io.WriteString(b, "\nsubagents against their pins:\n")
		t := table(b, []string{"agent", "pinned", "observed requests", "runs", "verdict", "evidence"}, "runs").ShrinkStart("evidence")
		for _, a := range o.Agents {
			pinned := orDash(a.Pinned)
			if a.Pinned == nil && a.Verdict == AgentInherits {
				pinned = "(unpinned)"
			}
			ev := dash
			for _, r := range o.Runs {
				if r.Agent == a.Agent && r.Verdict == AgentOffPin {
					ev = fmt.Sprintf("%s %s %s:%d", shortID(r.Session), clock(r.Timestamp), path.Base(r.File), r.Line)
					break
				}
			}
			if err := t.Append(a.Agent, pinned, levelCounts(a.Observed), fmt.Sprint(a.Runs), a.Verdict, ev); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
		for _, r := range o.Runs {
			if r.Note != "" {
				fmt.Fprintf(b, "note: %s run %s (session %s): %s\n", r.Agent, r.AgentID, shortID(r.Session), r.Note)
			}
		}
	}

	if len(o.Sessions) > 0 {
		io.WriteString(b, "\nmain-loop level by session (level×requests):\n")
		for _, s := range o.Sessions {
			spans := make([]string, len(s.Spans))
			for i, sp := range s.Spans {
				spans[i] = fmt.Sprintf("%s×%d", sp.Level, sp.Requests)
			}
			fmt.Fprintf(b, "  %s  %s\n", shortID(s.Session), strings.Join(spans, " → "))
		}
	}
	if err := writeBuckets(b, "\nby level (all requests):\n", "level", o.ByLevel, false); err != nil {
		return err
	}
	return writeBuckets(b, "\nby phase (main loop; a phase is the last pinned skill loaded in the turn):\n", "phase", o.ByPhase, true)
}

func writeShifts(b io.Writer, shifts []Shift) error {
	t := table(b, []string{"session", "time", "skill", "from", "to", "next", "paired", "verdict", "call"}).
		ShrinkStart("call").Optional("time", "paired", "from")
	for _, s := range shifts {
		sess := shortID(s.Session)
		if s.AgentID != "" {
			sess += "/" + shortID(s.AgentID)
		}
		if err := t.Append(sess, clock(s.Timestamp), s.Skill, orDash(s.From), s.To, orDash(s.Observed), yesNo(s.Paired), s.Verdict,
			fmt.Sprintf("%s:%d", path.Base(s.File), s.Line)); err != nil {
			return err
		}
	}
	return t.Render()
}

func writeReasserts(b io.Writer, rs []Reassert) error {
	counts := map[string]int{}
	for _, r := range rs {
		counts[r.Verdict]++
	}
	var parts []string
	for _, v := range []string{ReassertOK, ReassertSuperseded, ReassertMissing} {
		if counts[v] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", v, counts[v]))
		}
	}
	fmt.Fprintf(b, "\nnested skills with another level (the orchestrator must re-assert its own): %d (%s)\n", len(rs), strings.Join(parts, ", "))
	t := table(b, []string{"session", "time", "orchestrator", "nested", "verdict", "by", "requests after", "call"}, "requests after").
		ShrinkStart("call").Optional("time")
	for _, r := range rs {
		by := dash
		if r.By != "" {
			by = r.By + " (" + r.ByVerdict + ")"
		}
		if err := t.Append(shortID(r.Session), clock(r.Timestamp), r.Orchestrator+" "+r.Level, r.Nested+" "+r.NestedLevel, r.Verdict, by,
			fmt.Sprint(r.Requests), fmt.Sprintf("%s:%d", path.Base(r.File), r.Line)); err != nil {
			return err
		}
	}
	return t.Render()
}

func writeBuckets(b io.Writer, title, key string, bs []Bucket, levels bool) error {
	if len(bs) == 0 {
		return nil
	}
	io.WriteString(b, title)
	header := []string{key, "requests", "output tokens", "thinking tokens", "share of spend", "cost"}
	if levels {
		header = append(header, "levels")
	}
	t := table(b, header, header[1:6]...)
	for _, x := range bs {
		row := []string{x.Key, fmt.Sprint(x.Requests), thousands(x.OutputTokens), thousands(x.ThinkingTokens), fmt.Sprintf("%.1f %%", 100*x.Share), usd(x.CostUSD)}
		if levels {
			row = append(row, levelCounts(x.Levels))
		}
		if err := t.Append(row...); err != nil {
			return err
		}
	}
	return t.Render()
}

// table is an ASCII table with the given headers, left-aligned but for the right ones (numbers).
func table(w io.Writer, headers []string, right ...string) *termtable.Table {
	cols := termtable.Columns(headers...)
	for i := range cols {
		for _, r := range right {
			if cols[i].Header == r {
				cols[i].Align = termtable.Right
			}
		}
	}
	return termtable.NewStyled(w, termtable.ASCII, cols...)
}

// usd is a cost in dollars, "—" when some model has no price.
func usd(c *float64) string {
	if c == nil {
		return dash
	}
	return fmt.Sprintf("$%.4f", *c)
}
