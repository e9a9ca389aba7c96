package effort

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/pricing"
	"github.com/ldd-tools/tune/internal/transcript"
)

// observer accumulates the verdicts session by session, and the scan's requests by level and phase.
type observer struct {
	census   *Census
	prices   *pricing.Table
	out      *Observed
	byLevel  map[string]*Bucket
	byPhase  map[string]*Bucket
	group    []*fileData // the files of the session being read
	warnings []Warning   // of the meta.json sidecars
	// earlier holds the message.id of every request counted in an earlier session: a resumed or
	// forked session repeats earlier requests under its own id, and the audit counts them once,
	// where they first appear (docs/decisions.md#effort-conformance-issue-14).
	earlier map[string]struct{}
	// phases is the phase of each main-loop request by message.id (its first session's), for the
	// requests the scan hands out at its end.
	phases map[string]string
}

func (o *observer) seenEarlier(id string) bool {
	_, ok := o.earlier[id]
	return ok
}

// dropEarlier removes from a file the requests an earlier session counted.
func (o *observer) dropEarlier(fd *fileData) {
	if len(o.earlier) == 0 {
		return
	}
	keep := fd.msgs[:0]
	for _, m := range fd.msgs {
		if !o.seenEarlier(m.id) {
			keep = append(keep, m)
		}
	}
	fd.msgs = keep
}

// file takes the next file in path order: the files of a session are consecutive.
func (o *observer) file(fd *fileData) {
	if len(o.group) > 0 && o.group[0].src.Session != fd.src.Session {
		o.flush()
	}
	o.group = append(o.group, fd)
	o.warnings = append(o.warnings, fd.warnings...)
}

// flush analyses the session read so far.
func (o *observer) flush() {
	if len(o.group) > 0 {
		o.session(o.group)
	}
	o.group = o.group[:0]
}

// The phase of main-loop requests before any shift in their turn.
const sessionPhase = "(session level)"

func newObserver(opt Options) *observer {
	return &observer{
		census: opt.Census,
		prices: opt.Prices,
		out: &Observed{Shifts: []Shift{}, Reasserts: []Reassert{}, Agents: []Agent{}, Runs: []Run{}, SubagentShifts: []Shift{}, Stuck: []Stuck{},
			Sessions: []Timeline{}, ByLevel: []Bucket{}, ByPhase: []Bucket{}, Warnings: []Warning{}},
		byLevel: map[string]*Bucket{},
		byPhase: map[string]*Bucket{},
		earlier: map[string]struct{}{},
		phases:  map[string]string{},
	}
}

// skillLevel is the level a Skill call of name asks for ("" when the skill pins none). Without a
// census, the design's shifters effort-<level> are recognised by name.
func (o *observer) skillLevel(name string) string {
	if o.census != nil {
		level, _ := o.census.Lookup(KindSkill, name)
		return level
	}
	if l, ok := strings.CutPrefix(name, "effort-"); ok && audit.IsEffortLevel(l) {
		return l
	}
	return ""
}

func levelOf(m *message) string {
	if m.effort == "" {
		return Unknown
	}
	return m.effort
}

func strPtr(s string) *string { return &s }

func boolPtr(b bool) *bool { return &b }

// requests returns the requests of a file that count: synthetic error replies call no API and
// record no level.
func requests(fd *fileData) []*message { return billed(fd.msgs) }

func billed(msgs []message) []*message {
	var ms []*message
	for i := range msgs {
		if !msgs[i].synthetic {
			ms = append(ms, &msgs[i])
		}
	}
	return ms
}

// session analyses the files of one session: its main file(s) first in path order, then subagents.
func (o *observer) session(files []*fileData) {
	sid := files[0].src.Session
	var main, mainAll []*message
	where := map[*message]string{}
	tools := map[string]*message{} // tool_use id → the main-loop request that made the call
	toolByID := map[string]*tool{}
	links := map[string]string{} // agent id → tool_use id
	seen := map[string]bool{}    // message ids of the session's requests
	entrypoint := ""
	for _, fd := range files {
		o.dropEarlier(fd)
	}
	for _, fd := range files {
		for tid, aid := range fd.links {
			if _, ok := links[aid]; !ok {
				links[aid] = tid
			}
		}
		if entrypoint == "" {
			entrypoint = fd.entrypoint
		}
		for i := range fd.msgs {
			seen[fd.msgs[i].id] = true
		}
		for _, m := range requests(fd) {
			where[m] = fd.path
		}
		if fd.src.Class != transcript.ClassMain {
			continue
		}
		for i := range fd.msgs {
			mainAll = append(mainAll, &fd.msgs[i])
		}
		for _, m := range requests(fd) {
			main = append(main, m)
			for i := range m.tools {
				tools[m.tools[i].id] = m
				toolByID[m.tools[i].id] = &m.tools[i]
			}
		}
	}
	o.mainLoop(sid, main, where, entrypoint)
	o.phasesOf(mainAll)
	for _, fd := range files {
		if fd.src.Class != transcript.ClassSubagent || fd.src.AgentID == "" {
			continue
		}
		o.run(sid, fd, links, tools, toolByID)
	}
	for _, fd := range o.copies(files, seen) {
		o.run(sid, fd, links, tools, toolByID)
	}
	for id := range seen {
		o.earlier[id] = struct{}{}
	}
}

// count adds one request of the scan to its level's bucket and, for a main-loop request, to its
// phase's. Synthetic error replies have no level, no tokens and no cost: they count as requests at
// level unknown, as the audit counts them.
func (o *observer) count(r *transcript.Request) {
	level := Unknown
	if r.EffortSrc == transcript.EffortTranscript {
		level = r.Effort
		o.out.Input.WithEffort++
	}
	o.out.Input.Requests++
	c := audit.Price(o.prices, r)
	addTo(o.byLevel, level, level, r, c)
	if r.Class == transcript.ClassMain {
		phase, ok := o.phases[r.MessageID]
		if !ok {
			phase = sessionPhase
		}
		addTo(o.byPhase, phase, level, r, c)
	}
}

// addTo adds request r, of cost c, to the bucket key of m (a level or a phase), noting its level.
func addTo(m map[string]*Bucket, key, level string, r *transcript.Request, c audit.Cost) {
	b := m[key]
	if b == nil {
		b = &Bucket{Key: key, Levels: map[string]int{}}
		m[key] = b
	}
	b.totals.Add(r, c)
	b.Levels[level]++
}

// copies takes the agent_progress copies of a session as the audit does
// (docs/decisions.md#effort-conformance-issue-14): a copy is a request of its subagent, taken once,
// and only when no file of the session has that request (the subagent's own file wins). It returns
// the runs known only through their copies (older builds wrote no subagent file), one pseudo-file
// per agent, in order of first copy.
func (o *observer) copies(files []*fileData, seen map[string]bool) []*fileData {
	var runs []*fileData
	byAgent := map[string]*fileData{}
	for _, fd := range files {
		for _, m := range billed(fd.copies) {
			if seen[m.id] || o.seenEarlier(m.id) {
				continue
			}
			seen[m.id] = true
			if strings.HasPrefix(m.agent, "acompact") || m.agent == "" {
				continue // a compaction is no run
			}
			run := byAgent[m.agent]
			if run == nil {
				run = &fileData{path: fd.path, fromCopies: true, src: transcript.Source{Path: fd.path, Session: fd.src.Session,
					Class: transcript.ClassSubagent, AgentID: m.agent}}
				byAgent[m.agent] = run
				runs = append(runs, run)
			}
			run.msgs = append(run.msgs, *m)
		}
	}
	return runs
}

// shiftsOf checks every pinned Skill call of a loop's requests (docs/decisions.md#effort-conformance-issue-14):
// paired when another tool call follows it in the same message, took effect when the loop's next
// request runs at the pinned level.
func (o *observer) shiftsOf(sid, agentID string, ms []*message, where map[*message]string) []Shift {
	var shifts []Shift
	for i, m := range ms {
		for k, t := range m.tools {
			if t.name != "Skill" {
				continue
			}
			to := o.skillLevel(t.skill)
			if to == "" {
				continue
			}
			s := Shift{Session: sid, MessageID: m.id, Skill: t.skill, To: to, Paired: k < len(m.tools)-1,
				AgentID: agentID, Timestamp: t.ts, File: where[m], Line: t.line}
			if m.effort != "" {
				s.From = strPtr(m.effort)
			}
			if i+1 < len(ms) {
				next := ms[i+1]
				if next.effort != "" {
					s.Observed = strPtr(next.effort)
				}
				s.ObservedAt = fmt.Sprintf("%s:%d", where[next], next.line)
			}
			s.Verdict = verdict(&s)
			if later := o.laterShift(m.tools[k+1:], s.Observed); later != "" && s.Verdict != VerdictOK {
				// Several pinned Skill calls in one message: the next request runs at a later call's
				// level, so this one was overridden (docs/decisions.md#several-shifts-in-one-message).
				s.Verdict = VerdictOverridden
				s.Note = later + " later in the same message set the level (the last one loaded wins)"
			}
			if s.Verdict == VerdictUnexpected && s.To == "xhigh" && *s.Observed == "high" {
				s.Note = "xhigh ran as high: the silent fallback of a model without xhigh"
			}
			if s.Observed != nil {
				s.TookEffect = boolPtr(*s.Observed == s.To)
			}
			shifts = append(shifts, s)
		}
	}
	return shifts
}

// laterShift is the last of the pinned Skill calls in tools (those after a shift in its message) whose
// level is the observed one, or "".
func (o *observer) laterShift(tools []tool, observed *string) string {
	name := ""
	for _, t := range tools {
		if t.name == "Skill" && observed != nil && o.skillLevel(t.skill) == *observed {
			name = t.skill
		}
	}
	return name
}

// verdict judges a shift by the level of the next request.
func verdict(s *Shift) string {
	switch {
	case s.Observed == nil:
		return VerdictUnknown
	case *s.Observed == s.To:
		return VerdictOK
	case !s.Paired:
		return VerdictLone
	case s.From != nil && *s.Observed == *s.From:
		return VerdictIgnored
	default:
		return VerdictUnexpected
	}
}

func (o *observer) mainLoop(sid string, main []*message, where map[*message]string, entrypoint string) {
	if len(main) == 0 {
		return
	}
	// The level timeline.
	tl := Timeline{Session: sid}
	for _, m := range main {
		level := levelOf(m)
		if n := len(tl.Spans); n > 0 && tl.Spans[n-1].Level == level {
			tl.Spans[n-1].Requests++
			tl.Spans[n-1].To = m.ts
			continue
		}
		tl.Spans = append(tl.Spans, Span{Level: level, Requests: 1, From: m.ts, To: m.ts, File: where[m], Line: m.line})
	}
	o.out.Sessions = append(o.out.Sessions, tl)

	shifts := o.shiftsOf(sid, "", main, where)
	o.out.Shifts = append(o.out.Shifts, shifts...)
	o.out.Reasserts = append(o.out.Reasserts, o.reasserts(sid, main, where, shifts)...)

	// A session whose level never moves although paired shifts asked it to.
	levels := map[string]bool{}
	for _, m := range main {
		if m.effort != "" {
			levels[m.effort] = true
		}
	}
	asked := 0
	for _, s := range shifts {
		if s.Paired && s.From != nil && *s.From != s.To {
			asked++
		}
	}
	if asked > 0 && len(levels) == 1 {
		st := Stuck{Session: sid, Level: main[0].effort, Shifts: asked, Entrypoint: entrypoint}
		st.Reason = o.stuckReason(st.Level, entrypoint)
		o.out.Stuck = append(o.out.Stuck, st)
	}
}

// phasesOf notes the phase of each main-loop request of a session (synthetic replies included: they
// are requests for the audit): a request belongs to the last pinned skill loaded in its turn, from
// the request after the call on; a prompt starts a new turn at the session level.
func (o *observer) phasesOf(main []*message) {
	phase := sessionPhase
	pending := ""
	for _, m := range main {
		if m.newTurn {
			phase, pending = sessionPhase, ""
			if o.skillLevel(m.command) != "" {
				phase = m.command // a skill the user invoked applies from the invocation on
			}
		}
		if pending != "" {
			phase, pending = pending, ""
		}
		if _, ok := o.phases[m.id]; !ok {
			o.phases[m.id] = phase
		}
		for _, t := range m.tools {
			if t.name == "Skill" && o.skillLevel(t.skill) != "" {
				pending = t.skill
			}
		}
	}
}

// isShifter reports whether a skill is one of the design's phase shifters, effort-<level>.
func isShifter(name string) bool {
	l, ok := strings.CutPrefix(name, "effort-")
	return ok && audit.IsEffortLevel(l)
}

// reasserts applies the re-assert rule to a main loop (docs/decisions.md#effort-conformance-issue-14).
// In a turn, the orchestrator is the pinned skill the user invoked with the prompt (/feat), else the
// first pinned skill loaded by a Skill call that is not a shifter;
// a later pinned non-shifter with another pin is nested. Each nested call is settled by the next
// Skill call of the orchestrator itself or of a shifter: at the orchestrator's pin it re-asserted,
// at another level it was superseded by an explicit phase; a turn that ends first leaves the nested
// level in force: not re-asserted. shifts are shiftsOf's for ms, in the same order.
func (o *observer) reasserts(sid string, ms []*message, where map[*message]string, shifts []Shift) []Reassert {
	if o.census == nil {
		return nil // only shifters are known without one
	}
	var out []Reassert
	orch, orchLevel := "", ""
	var open []int // indexes in out of the nested calls not settled yet
	k := 0         // the next shift of shifts
	for _, m := range ms {
		if m.newTurn {
			orch, orchLevel, open = "", "", open[:0]
			if level := o.skillLevel(m.command); level != "" && !isShifter(m.command) {
				orch, orchLevel = m.command, level // the user typed /orchestrator
			}
		}
		for _, i := range open {
			out[i].Requests++
		}
		for _, t := range m.tools {
			if t.name != "Skill" {
				continue
			}
			level := o.skillLevel(t.skill)
			if level == "" {
				continue
			}
			sh := shifts[k]
			k++
			switch {
			case orch == "" && !isShifter(t.skill):
				orch, orchLevel = t.skill, level
			case orch != "" && (t.skill == orch || isShifter(t.skill)):
				for _, i := range open {
					r := &out[i]
					r.Verdict, r.By, r.ByVerdict = ReassertSuperseded, t.skill, sh.Verdict
					if level == orchLevel {
						r.Verdict = ReassertOK
					}
				}
				open = open[:0]
			case orch != "" && level != orchLevel:
				open = append(open, len(out))
				out = append(out, Reassert{Session: sid, Orchestrator: orch, Level: orchLevel, Nested: t.skill,
					NestedLevel: level, Verdict: ReassertMissing, MessageID: m.id, Timestamp: t.ts, File: where[m], Line: t.line})
			}
		}
	}
	return out
}

// stuckReason names the likely cause of a level that never moves: the env override (named when the
// census found it at that level) or a headless run.
func (o *observer) stuckReason(level, entrypoint string) string {
	if o.census != nil {
		for _, s := range o.census.Settings {
			if s.EnvEffortLevel == level {
				return fmt.Sprintf("CLAUDE_CODE_EFFORT_LEVEL=%s in %s", level, s.File)
			}
		}
	}
	if entrypoint != "" && entrypoint != "cli" {
		return fmt.Sprintf("headless run (entrypoint %s): skill-level effort is ignored", entrypoint)
	}
	return "CLAUDE_CODE_EFFORT_LEVEL set, or a headless run (-p, SDK): both ignore skill-level effort"
}

// run checks one subagent file against its agent's pin.
func (o *observer) run(sid string, fd *fileData, links map[string]string, tools map[string]*message, toolByID map[string]*tool) {
	ms := requests(fd)
	r := Run{Session: sid, AgentID: fd.src.AgentID, Observed: map[string]int{}, File: fd.path, Progress: fd.fromCopies}
	if len(ms) > 0 {
		r.Timestamp, r.Line = ms[0].ts, ms[0].line
	}
	tid := links[fd.src.AgentID]
	switch {
	case fd.agentType != "":
		r.Agent, r.Source = fd.agentType, "meta"
	case tid != "" && toolByID[tid] != nil && toolByID[tid].agentType != "":
		r.Agent, r.Source = toolByID[tid].agentType, "dispatch"
	default:
		r.Agent = "(unknown)"
	}
	if m := tools[tid]; m != nil && m.effort != "" {
		r.Dispatched = strPtr(m.effort)
	}
	for _, m := range ms {
		r.Observed[levelOf(m)]++
	}
	where := map[*message]string{}
	for _, m := range ms {
		where[m] = fd.path
	}
	shifts := o.shiftsOf(sid, fd.src.AgentID, ms, where)
	r.Shifts = len(shifts)
	o.out.SubagentShifts = append(o.out.SubagentShifts, shifts...)

	known := o.census != nil && r.Source != ""
	pin := ""
	if known {
		pin, _ = o.census.Lookup(KindAgent, r.Agent)
	}
	if pin != "" {
		r.Pinned = strPtr(pin)
	}
	recorded := len(ms) - r.Observed[Unknown]
	switch {
	case !known:
		r.Verdict = AgentUnknown
	case pin == "":
		r.Verdict = AgentInherits
		if r.Dispatched != nil {
			for level := range r.Observed {
				if level != Unknown && level != *r.Dispatched {
					r.Note = fmt.Sprintf("ran at %s; the main loop was at %s at dispatch", level, *r.Dispatched)
				}
			}
		}
	case recorded == 0:
		r.Verdict = AgentUnknown
	case r.Observed[pin] == recorded:
		r.Verdict = AgentConformant
	default:
		r.Verdict = AgentOffPin
		if pin == "xhigh" && r.Observed["high"] > 0 {
			r.Note = "xhigh ran as high: the silent fallback of a model without xhigh"
		}
	}
	o.out.Runs = append(o.out.Runs, r)
}

// result completes the report with what the scan read.
func (o *observer) result(res *transcript.Result) *Observed {
	out := o.out
	out.Input.Files = len(res.Files)
	out.Input.Bytes = res.Bytes
	out.Input.Sessions = len(res.Sessions)
	out.Input.Skipped = res.Lines.Skipped
	out.Warnings = append(append(out.Warnings, res.Warnings...), o.warnings...)
	out.ByLevel = buckets(o.byLevel, levelLess)
	out.ByPhase = buckets(o.byPhase, func(a, b string) bool { return a < b })
	out.Agents = agents(out.Runs, o.census != nil)
	return out
}

func buckets(m map[string]*Bucket, less func(a, b string) bool) []Bucket {
	total := 0.0
	for _, b := range m {
		b.totals.Settle()
		total += b.totals.Spend
	}
	out := make([]Bucket, 0, len(m))
	for _, b := range m {
		b.Requests = b.totals.Requests
		b.OutputTokens = b.totals.OutputTokens
		b.ThinkingTokens = b.totals.ThinkingTokens
		b.Spend = b.totals.Spend
		b.CostUSD = b.totals.CostUSD
		if total > 0 {
			b.Share = b.Spend / total
		}
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i].Key, out[j].Key) })
	return out
}

// agents sums the runs per agent type, sorted by name.
func agents(runs []Run, haveCensus bool) []Agent {
	by := map[string]*Agent{}
	var names []string
	for _, r := range runs {
		a := by[r.Agent]
		if a == nil {
			a = &Agent{Agent: r.Agent, Pinned: r.Pinned, Observed: map[string]int{}}
			by[r.Agent] = a
			names = append(names, r.Agent)
		}
		a.Runs++
		for l, n := range r.Observed {
			a.Observed[l] += n
		}
		switch {
		case r.Verdict == AgentOffPin:
			if a.Verdict != AgentOffPin {
				a.Evidence = fmt.Sprintf("session %s, %s, %s:%d", r.Session, r.Timestamp, r.File, r.Line)
			}
			a.Verdict = AgentOffPin
		case a.Verdict == "" || a.Verdict == AgentUnknown:
			a.Verdict = r.Verdict
		}
	}
	sort.Strings(names)
	out := make([]Agent, 0, len(names))
	for _, n := range names {
		a := by[n]
		switch a.Verdict {
		case AgentConformant, AgentInherits:
			a.Conformant = boolPtr(true)
		case AgentOffPin:
			a.Conformant = boolPtr(false)
		}
		out = append(out, *a)
	}
	return out
}

// LevelCounts is "high 3, medium 2" in level order.
func LevelCounts(m map[string]int) string {
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

// levelLess orders levels low … max, then unknown, then anything else.
func levelLess(a, b string) bool {
	if (a == Unknown) != (b == Unknown) {
		return b == Unknown && audit.IsEffortLevel(a) || a == Unknown && !audit.IsEffortLevel(b)
	}
	return audit.EffortLess(a, b)
}
