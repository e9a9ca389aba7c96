package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/ldd-tools/tune/internal/effort"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/textfmt"
)

// EffortJSON writes tune effort's report as indented JSON.
func EffortJSON(w io.Writer, r *effort.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// emDash stands for a value that is not known.
const emDash = "—"

// EffortText writes tune effort's human view: the census table and the settings, then what the
// transcripts show.
func EffortText(w io.Writer, r *effort.Report) error {
	var b bytes.Buffer
	// the tables fit the width w carries; the prose is wrapped to it at the end
	sized := termtable.WithWidth(&b, termtable.WidthOf(w))
	if r.Repo != "" {
		if err := writeCensus(sized, r); err != nil {
			return err
		}
	}
	if r.Observed != nil {
		if r.Repo != "" {
			b.WriteString("\n")
		}
		if err := writeObserved(sized, r.Observed, r.Repo != ""); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, termtable.Fill(b.String(), termtable.WidthOf(w)))
	return err
}

func writeCensus(b io.Writer, r *effort.Report) error {
	count := func(ps []effort.Pin, kind string) int {
		n := 0
		for _, p := range ps {
			if p.Kind == kind {
				n++
			}
		}
		return n
	}
	fmt.Fprintf(b, "census of %s: agents %d pinned of %d, skills %d pinned of %d\n", r.Repo,
		count(r.Pins, effort.KindAgent), count(r.Pins, effort.KindAgent)+count(r.Unpinned, effort.KindAgent),
		count(r.Pins, effort.KindSkill), count(r.Pins, effort.KindSkill)+count(r.Unpinned, effort.KindSkill))
	if len(r.Pins)+len(r.Unpinned) > 0 {
		t := termtable.New(b, "kind", "name", "effort", "file").Shrink("name", "file")
		rows := append(append([]effort.Pin{}, r.Pins...), r.Unpinned...)
		effort.SortPins(rows)
		for _, p := range rows {
			level, file := p.Effort, p.File
			if level == "" {
				level = "(unpinned)"
			}
			if p.Line > 0 {
				file = fmt.Sprintf("%s:%d", file, p.Line)
			}
			if p.Link != "" {
				file += " → " + p.Link
			}
			if err := t.Append(p.Kind, p.Name, level, file); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	if len(r.Settings) == 0 {
		io.WriteString(b, "settings: no settings.json (the session level is the model's default)\n")
	}
	for _, s := range r.Settings {
		var parts []string
		level := s.EffortLevel
		if level == "" {
			level = emDash
		}
		parts = append(parts, "effortLevel "+level)
		if s.EnvEffortLevel != "" {
			parts = append(parts, "env CLAUDE_CODE_EFFORT_LEVEL="+s.EnvEffortLevel+" (beats every pin and shift)")
		}
		fmt.Fprintf(b, "settings: %s: %s\n", s.File, strings.Join(parts, ", "))
	}
	return nil
}

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
		return emDash
	}
	return *p
}

func writeObserved(b io.Writer, o *effort.Observed, census bool) error {
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
	for _, v := range effort.ShiftVerdicts {
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
		t := effortTable(b, []string{"agent", "pinned", "observed requests", "runs", "verdict", "evidence"}, "runs").Key("agent", "verdict").Shrink("observed requests").ShrinkStart("evidence").Optional("runs", "evidence")
		for _, a := range o.Agents {
			pinned := orDash(a.Pinned)
			if a.Pinned == nil && a.Verdict == effort.AgentInherits {
				pinned = "(unpinned)"
			}
			ev := emDash
			for _, r := range o.Runs {
				if r.Agent == a.Agent && r.Verdict == effort.AgentOffPin {
					ev = fmt.Sprintf("%s %s %s:%d", shortID(r.Session), clock(r.Timestamp), path.Base(r.File), r.Line)
					break
				}
			}
			if err := t.Append(a.Agent, pinned, effort.LevelCounts(a.Observed), fmt.Sprint(a.Runs), a.Verdict, ev); err != nil {
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

func writeShifts(b io.Writer, shifts []effort.Shift) error {
	t := effortTable(b, []string{"session", "time", "skill", "from", "to", "next", "paired", "verdict", "call"}).
		Key("skill", "verdict").ShrinkStart("call").Optional("time", "paired", "from")
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

func writeReasserts(b io.Writer, rs []effort.Reassert) error {
	counts := map[string]int{}
	for _, r := range rs {
		counts[r.Verdict]++
	}
	var parts []string
	for _, v := range []string{effort.ReassertOK, effort.ReassertSuperseded, effort.ReassertMissing} {
		if counts[v] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", v, counts[v]))
		}
	}
	fmt.Fprintf(b, "\nnested skills with another level (the orchestrator must re-assert its own): %d (%s)\n", len(rs), strings.Join(parts, ", "))
	t := effortTable(b, []string{"session", "time", "orchestrator", "nested", "verdict", "by", "requests after", "call"}, "requests after").
		Key("verdict").ShrinkStart("call").Optional("time", "by", "requests after")
	for _, r := range rs {
		by := emDash
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

func writeBuckets(b io.Writer, title, key string, bs []effort.Bucket, levels bool) error {
	if len(bs) == 0 {
		return nil
	}
	io.WriteString(b, title)
	// Short headers (the tokens are said once, in the title row) keep the table within 80 columns.
	header := []string{key, "requests", "output tok", "thinking tok", "of spend", "cost"}
	if levels {
		header = append(header, "levels")
	}
	t := effortTable(b, header, header[1:6]...).Key(key)
	if levels {
		t.Shrink("levels").Optional("levels")
	}
	for _, x := range bs {
		row := []string{x.Key, fmt.Sprint(x.Requests), textfmt.ThousandsUint(x.OutputTokens), textfmt.ThousandsUint(x.ThinkingTokens), fmt.Sprintf("%.1f %%", 100*x.Share), effortUSD(x.CostUSD)}
		if levels {
			row = append(row, effort.LevelCounts(x.Levels))
		}
		if err := t.Append(row...); err != nil {
			return err
		}
	}
	return t.Render()
}

// effortTable is an ASCII table with the given headers, left-aligned but for the right ones (numbers).
func effortTable(w io.Writer, headers []string, right ...string) *termtable.Table {
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

// effortUSD is a cost in dollars, "—" when some model has no price.
func effortUSD(c *float64) string {
	if c == nil {
		return emDash
	}
	return fmt.Sprintf("$%.4f", *c)
}
