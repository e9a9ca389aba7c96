// Package effort checks the effort design of a Claude Code set-up: which levels its agents and skills
// pin (the census, from their YAML frontmatter and settings.json), and whether those pins and the
// main loop's phase shifts actually take effect in the transcripts (the observed half: every shift
// with its verdict, every subagent run against its agent's pin, spend per level and per phase).
//
// The package is pure: a file system (fs.FS) or record readers in, values and warnings out. The rules
// it applies are in docs/decisions.md#effort-conformance-issue-14.
package effort

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/transcript"
)

// Warning is an input that was skipped or read with a caveat, named by file and line.
type Warning = transcript.Warning

// WarningText is "FILE:LINE: reason" (": reason" without a line); a census warning's file is named
// under the repository as given (repo; "" or "." leave it as it is).
func WarningText(repo string, w Warning) string {
	file := w.File
	if repo != "" && repo != "." {
		file = filepath.Join(repo, file)
	}
	if w.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", file, w.Line, w.Reason)
	}
	return fmt.Sprintf("%s: %s", file, w.Reason)
}

// HasSetup reports whether fsys holds a Claude Code set-up the census reads: an agents or skills
// directory, or a settings file, at one of the census's places.
func HasSetup(fsys fs.FS) bool {
	for _, dir := range append(append([]string{}, agentDirs...), skillDirs...) {
		if info, err := fs.Stat(fsys, dir); err == nil && info.IsDir() {
			return true
		}
	}
	for _, f := range settingsFiles {
		if info, err := fs.Stat(fsys, f); err == nil && info.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// Kinds of pinned files.
const (
	KindAgent = "agent"
	KindSkill = "skill"
)

// Pin is one agent or skill file and the effort its frontmatter pins ("" when it pins none).
type Pin struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Effort string `json:"effort"`
	File   string `json:"file"`           // relative to the repository, slash-separated
	Line   int    `json:"line,omitempty"` // line of the effort: key (0 when unpinned)
	// Link is the target of the symbolic link the file was reached through ("" when none): a
	// vendored skill folder linked into skills/.
	Link string `json:"link,omitempty"`
}

// Settings is what a settings file says about the session level.
type Settings struct {
	File        string `json:"file"`
	EffortLevel string `json:"effort_level,omitempty"` // top-level effortLevel
	// EnvEffortLevel is env.CLAUDE_CODE_EFFORT_LEVEL: when set it beats every frontmatter pin and
	// every shift, so the census warns about it.
	EnvEffortLevel string `json:"env_effort_level,omitempty"`
}

// Census is the pins of a repository.
type Census struct {
	Pins     []Pin      `json:"pins"`     // pinned agents and skills, sorted by kind then name
	Unpinned []Pin      `json:"unpinned"` // agents and skills without an effort: key
	Settings []Settings `json:"settings"`
	Warnings []Warning  `json:"warnings"`
}

// Lookup returns the pin of the named agent or skill: its level, and whether the census knows the
// name at all (a known but unpinned file returns "", true).
func (c *Census) Lookup(kind, name string) (level string, known bool) {
	for _, p := range c.Pins {
		if p.Kind == kind && p.Name == name {
			return p.Effort, true
		}
	}
	for _, p := range c.Unpinned {
		if p.Kind == kind && p.Name == name {
			return "", true
		}
	}
	return "", false
}

// Where the census looks (docs/decisions.md#effort-conformance-issue-14): repository-level and
// project-level (.claude/) agents and skills, and the three settings files Claude Code reads from a
// project.
var (
	agentDirs     = []string{"agents", ".claude/agents"}
	skillDirs     = []string{"skills", ".claude/skills"}
	settingsFiles = []string{"settings.json", ".claude/settings.json", ".claude/settings.local.json"}
)

// maxFrontmatter bounds the frontmatter read from one file; maxSettings bounds a settings file.
const (
	maxFrontmatter = 64 << 10
	maxSettings    = 1 << 20
)

// TakeCensus reads the pins of the repository fsys. Folders linked into skills/ are followed (the
// layout is fixed-depth, so a link cycle cannot make it loop; a link that cannot be resolved is a
// warning). Only an unreadable directory that exists is an error.
func TakeCensus(fsys fs.FS) (*Census, error) {
	c := &Census{Pins: []Pin{}, Unpinned: []Pin{}, Settings: []Settings{}, Warnings: []Warning{}}
	for _, dir := range agentDirs {
		entries, err := readDir(fsys, dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			p := path.Join(dir, e.Name())
			if !c.isFile(fsys, p, e) {
				continue
			}
			c.readPin(fsys, KindAgent, strings.TrimSuffix(e.Name(), ".md"), p, "")
		}
	}
	for _, dir := range skillDirs {
		entries, err := readDir(fsys, dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			p := path.Join(dir, e.Name())
			link := ""
			if e.Type()&fs.ModeSymlink != 0 {
				target, err := fs.ReadLink(fsys, p)
				if err != nil {
					c.warn(p, 0, "unreadable link: "+errText(err))
					continue
				}
				link = target
			}
			info, err := fs.Stat(fsys, p)
			if err != nil {
				c.warn(p, 0, "skipped: "+errText(err))
				continue
			}
			if !info.IsDir() {
				continue
			}
			file := path.Join(p, "SKILL.md")
			if _, err := fs.Stat(fsys, file); err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					c.warn(file, 0, "skipped: "+errText(err))
				}
				continue
			}
			c.readPin(fsys, KindSkill, e.Name(), file, link)
		}
	}
	for _, f := range settingsFiles {
		c.readSettings(fsys, f)
	}
	SortPins(c.Pins)
	SortPins(c.Unpinned)
	c.duplicates()
	return c, nil
}

func readDir(fsys fs.FS, dir string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("effort census: %s: %w", dir, err)
	}
	return entries, nil
}

// isFile reports whether p (entry e) is a regular file or a link to one; a broken link is a warning.
func (c *Census) isFile(fsys fs.FS, p string, e fs.DirEntry) bool {
	if e.Type().IsRegular() {
		return true
	}
	info, err := fs.Stat(fsys, p)
	if err != nil {
		c.warn(p, 0, "skipped: "+errText(err))
		return false
	}
	return info.Mode().IsRegular()
}

func (c *Census) warn(file string, line int, reason string) {
	c.Warnings = append(c.Warnings, Warning{File: file, Line: line, Reason: reason})
}

// errText is err without the path that the warning already names.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func (c *Census) readPin(fsys fs.FS, kind, name, file, link string) {
	f, err := fsys.Open(file)
	if err != nil {
		c.warn(file, 0, "skipped: "+errText(err))
		return
	}
	defer f.Close()
	fm, err := ParseFrontmatter(f)
	for _, w := range fm.Warnings {
		c.warn(file, w.Line, w.Reason)
	}
	if err != nil {
		c.warn(file, 0, "skipped: "+errText(err))
		return
	}
	if fm.Name != "" {
		name = fm.Name
	}
	p := Pin{Kind: kind, Name: name, Effort: fm.Effort, File: file, Line: fm.EffortLine, Link: link}
	if fm.Effort == "" {
		p.Line = 0
		c.Unpinned = append(c.Unpinned, p)
		return
	}
	c.Pins = append(c.Pins, p)
}

// SortPins orders pins by kind, then name (the census and its table list them so).
func SortPins(ps []Pin) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Kind != ps[j].Kind {
			return ps[i].Kind < ps[j].Kind
		}
		if ps[i].Name != ps[j].Name {
			return ps[i].Name < ps[j].Name
		}
		return ps[i].File < ps[j].File
	})
}

// duplicates warns when two files define the same agent or skill name: which one Claude Code loads
// depends on its precedence rules, so a pin of either may be the one that is not used.
func (c *Census) duplicates() {
	seen := map[[2]string]string{}
	for _, list := range [][]Pin{c.Pins, c.Unpinned} {
		for _, p := range list {
			k := [2]string{p.Kind, p.Name}
			if first, ok := seen[k]; ok {
				c.warn(p.File, 0, fmt.Sprintf("%s %q is also defined in %s", p.Kind, p.Name, first))
				continue
			}
			seen[k] = p.File
		}
	}
}

// Frontmatter is what the census reads from a Markdown file's YAML frontmatter.
type Frontmatter struct {
	Present    bool   // the file starts with a --- line
	Name       string // name:
	Effort     string // effort:, when it is a valid level
	EffortLine int    // the line of the effort: key in the file (1 = the opening ---)
	// Warnings name the line in the file (not in the frontmatter) of what could not be used: YAML
	// that does not parse, an effort that is not a level, a frontmatter that never closes.
	Warnings []Warning
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// ParseFrontmatter reads the YAML frontmatter at the start of r: a first line "---", then YAML, then
// a line "---" (or "..."). A file without one has no pins and no warnings. Only a read error is an
// error; content problems are warnings with their file line. At most 64 KiB are read.
func ParseFrontmatter(r io.Reader) (Frontmatter, error) {
	var fm Frontmatter
	br := bufio.NewReader(io.LimitReader(r, maxFrontmatter+1))
	var body bytes.Buffer
	lineNo, read := 0, 0
	closed := false
	for {
		line, err := br.ReadBytes('\n')
		read += len(line)
		if len(line) > 0 {
			lineNo++
			text := strings.TrimRight(string(line), " \t\r\n")
			if lineNo == 1 {
				text = strings.TrimPrefix(text, "\ufeff")
				if text != "---" {
					return fm, nil
				}
				fm.Present = true
			} else if text == "---" || text == "..." {
				closed = true
				break
			} else {
				body.Write(line)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fm, err
		}
	}
	if !fm.Present {
		return fm, nil
	}
	if !closed {
		reason := "frontmatter is not closed by a --- line"
		if read > maxFrontmatter {
			reason = fmt.Sprintf("frontmatter longer than %d KiB: not read", maxFrontmatter>>10)
		}
		fm.Warnings = append(fm.Warnings, Warning{Line: 1, Reason: reason})
		return fm, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(body.Bytes(), &doc); err != nil {
		fm.Warnings = append(fm.Warnings, yamlWarning(err))
		return fm, nil
	}
	if len(doc.Content) == 0 {
		return fm, nil // an empty frontmatter
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		fm.Warnings = append(fm.Warnings, Warning{Line: root.Line + 1, Reason: "frontmatter is not a mapping of keys"})
		return fm, nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "name":
			if v.Kind == yaml.ScalarNode && v.Tag == "!!str" {
				fm.Name = strings.TrimSpace(v.Value)
			}
		case "effort":
			line := k.Line + 1
			switch {
			case v.Kind != yaml.ScalarNode:
				fm.Warnings = append(fm.Warnings, Warning{Line: line, Reason: "effort is not a single value"})
			case v.Tag == "!!null":
				fm.Warnings = append(fm.Warnings, Warning{Line: line, Reason: "effort is empty"})
			case !audit.IsEffortLevel(v.Value):
				fm.Warnings = append(fm.Warnings, Warning{Line: line, Reason: fmt.Sprintf("effort %q is not a level (want %s)",
					v.Value, strings.Join(audit.EffortLevels, ", "))})
			default:
				if fm.Effort != "" {
					fm.Warnings = append(fm.Warnings, Warning{Line: line, Reason: "effort is set twice; the last one is read"})
				}
				fm.Effort, fm.EffortLine = v.Value, line
			}
		}
	}
	return fm, nil
}

// yamlWarning turns a YAML error into a warning on its file line (the frontmatter starts on line 2).
func yamlWarning(err error) Warning {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	w := Warning{Line: 1, Reason: "frontmatter is not valid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			w.Line = n + 1
			w.Reason = "frontmatter is not valid YAML: " + msg[len(m[0]):]
		}
	}
	return w
}

func (c *Census) readSettings(fsys fs.FS, file string) {
	f, err := fsys.Open(file)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.warn(file, 0, "skipped: "+errText(err))
		}
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSettings+1))
	if err != nil {
		c.warn(file, 0, "skipped: "+errText(err))
		return
	}
	if len(data) > maxSettings {
		c.warn(file, 0, fmt.Sprintf("larger than %d MiB: not read", maxSettings>>20))
		return
	}
	var raw struct {
		EffortLevel json.RawMessage            `json:"effortLevel"`
		Env         map[string]json.RawMessage `json:"env"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		line := 1
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line = 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		case errors.As(err, &te):
			line = 1 + bytes.Count(data[:min(int(te.Offset), len(data))], []byte("\n"))
		}
		c.warn(file, line, "not valid settings JSON: "+err.Error())
		return
	}
	s := Settings{File: file}
	if len(raw.EffortLevel) > 0 && string(raw.EffortLevel) != "null" {
		var v string
		line := lineOfKey(data, "effortLevel")
		switch {
		case json.Unmarshal(raw.EffortLevel, &v) != nil:
			c.warn(file, line, "effortLevel is not a string")
		case !audit.IsEffortLevel(v):
			c.warn(file, line, fmt.Sprintf("effortLevel %q is not a level (want %s)", v, strings.Join(audit.EffortLevels, ", ")))
		default:
			s.EffortLevel = v
		}
	}
	if env, ok := raw.Env["CLAUDE_CODE_EFFORT_LEVEL"]; ok {
		var v string
		if json.Unmarshal(env, &v) == nil && v != "" {
			s.EnvEffortLevel = v
			c.warn(file, lineOfKey(data, "CLAUDE_CODE_EFFORT_LEVEL"),
				fmt.Sprintf("env.CLAUDE_CODE_EFFORT_LEVEL=%s beats every effort: pin and every shift: keep it unset", v))
		}
	}
	c.Settings = append(c.Settings, s)
}

// lineOfKey is the line of the first "key": in data (1 when absent), for warnings.
func lineOfKey(data []byte, key string) int {
	i := bytes.Index(data, []byte(`"`+key+`"`))
	if i < 0 {
		return 1
	}
	return 1 + bytes.Count(data[:i], []byte("\n"))
}
