package effort

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ldd-tools/tune/internal/termtable"
)

// Report is the whole effort check: the census of a repository and what the transcripts show.
type Report struct {
	Repo     string     `json:"repo,omitempty"`
	Pins     []Pin      `json:"pins"`
	Unpinned []Pin      `json:"unpinned"`
	Settings []Settings `json:"settings"`
	// Observed is the transcript half, absent when no transcript was read.
	*Observed
	Warnings []Warning `json:"warnings"`
}

// AddObserved adds the transcript half and its warnings.
func (r *Report) AddObserved(o *Observed) {
	r.Observed = o
	r.Warnings = append(r.Warnings, o.Warnings...)
}

// NewReport starts a report from a census (nil: no repository was read).
func NewReport(repo string, c *Census) *Report {
	r := &Report{Repo: repo, Pins: []Pin{}, Unpinned: []Pin{}, Settings: []Settings{}, Warnings: []Warning{}}
	if c != nil {
		r.Pins, r.Unpinned, r.Settings = c.Pins, c.Unpinned, c.Settings
		r.Warnings = append(r.Warnings, c.Warnings...)
	}
	return r
}

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

const dash = "—"

// WriteText writes the human view: the census table and the settings.
func WriteText(w io.Writer, r *Report) error {
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

func writeCensus(b io.Writer, r *Report) error {
	count := func(ps []Pin, kind string) int {
		n := 0
		for _, p := range ps {
			if p.Kind == kind {
				n++
			}
		}
		return n
	}
	fmt.Fprintf(b, "census of %s: agents %d pinned of %d, skills %d pinned of %d\n", r.Repo,
		count(r.Pins, KindAgent), count(r.Pins, KindAgent)+count(r.Unpinned, KindAgent),
		count(r.Pins, KindSkill), count(r.Pins, KindSkill)+count(r.Unpinned, KindSkill))
	if len(r.Pins)+len(r.Unpinned) > 0 {
		t := termtable.New(b, "kind", "name", "effort", "file").Shrink("name", "file")
		rows := append(append([]Pin{}, r.Pins...), r.Unpinned...)
		sortPins(rows)
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
			level = dash
		}
		parts = append(parts, "effortLevel "+level)
		if s.EnvEffortLevel != "" {
			parts = append(parts, "env CLAUDE_CODE_EFFORT_LEVEL="+s.EnvEffortLevel+" (beats every pin and shift)")
		}
		fmt.Fprintf(b, "settings: %s: %s\n", s.File, strings.Join(parts, ", "))
	}
	return nil
}
