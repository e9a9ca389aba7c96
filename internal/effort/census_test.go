package effort

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeTree writes files (slash paths relative to root) and returns root.
func writeTree(t testing.TB, root string, files map[string]string) string {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
}

// censusRepo builds the repository of seed 002's layout: pinned, unpinned and mis-pinned agents,
// project-level agents, skills with and without pins, the five shifters, vendored skills linked in
// from skills-external/ (one whose target is missing), a link cycle, bad frontmatter, and settings
// with the env override.
func censusRepo(t testing.TB) string {
	root := writeTree(t, t.TempDir(), map[string]string{
		"agents/hotfixer.md":                     "---\nname: hotfixer\ndescription: fixes\neffort: low\n---\nbody\n",
		"agents/verifier.md":                     "---\nname: verifier\nmodel: sonnet\neffort: xhigh\n---\n",
		"agents/interviewer.md":                  "---\nname: interviewer\n---\n# no pin by design\n",
		"agents/mispinned.md":                    "---\nname: mispinned\neffort: ultra\n---\n",
		"agents/broken.md":                       "---\nname: broken\neffort: [high\n---\n",
		"agents/unclosed.md":                     "---\nname: unclosed\neffort: high\n",
		"agents/notes.txt":                       "not an agent",
		"agents/plain.md":                        "# no frontmatter at all\neffort: high\n",
		".claude/agents/feater.md":               "---\nname: feater\neffort: medium\n---\n",
		"skills/feat/SKILL.md":                   "---\nname: feat\neffort: high\n---\nSkill(effort-medium) …\n",
		"skills/commit-change/SKILL.md":          "---\nname: commit-change\neffort: low\n---\n",
		"skills/effort-low/SKILL.md":             "---\nname: effort-low\neffort: low\n---\nShift to low.\n",
		"skills/effort-max/SKILL.md":             "---\nname: effort-max\neffort: max\n---\nShift to max.\n",
		"skills/graphify/SKILL.md":               "---\nname: graphify\n---\n",
		"skills/no-skill-file/README.md":         "a folder without SKILL.md",
		".claude/skills/gitflow/SKILL.md":        "---\nname: gitflow\neffort: medium\n---\n",
		"skills-external/brainstorming/SKILL.md": "---\nname: brainstorming\neffort: xhigh\n---\n",
		"settings.json":                          "{\n  \"effortLevel\": \"high\",\n  \"env\": {\n    \"CLAUDE_CODE_EFFORT_LEVEL\": \"max\"\n  }\n}\n",
		".claude/settings.local.json":            "{\"effortLevel\": \"turbo\"}",
	})
	symlink(t, "../skills-external/brainstorming", filepath.Join(root, "skills", "brainstorming"))
	symlink(t, "../skills-external/writing-plans", filepath.Join(root, "skills", "writing-plans")) // not installed
	symlink(t, "loop", filepath.Join(root, "skills", "loop"))                                      // a cycle
	symlink(t, "../../agents/hotfixer.md", filepath.Join(root, ".claude", "agents", "hotfixer-link.md"))
	return root
}

func TestCensus(t *testing.T) {
	root := censusRepo(t)
	c, err := TakeCensus(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	var pins []string
	for _, p := range c.Pins {
		s := p.Kind + " " + p.Name + "=" + p.Effort + " " + p.File
		if p.Link != "" {
			s += " via " + p.Link
		}
		pins = append(pins, s)
	}
	want := []string{
		"agent feater=medium .claude/agents/feater.md",
		"agent hotfixer=low .claude/agents/hotfixer-link.md",
		"agent hotfixer=low agents/hotfixer.md",
		"agent verifier=xhigh agents/verifier.md",
		"skill brainstorming=xhigh skills/brainstorming/SKILL.md via ../skills-external/brainstorming",
		"skill commit-change=low skills/commit-change/SKILL.md",
		"skill effort-low=low skills/effort-low/SKILL.md",
		"skill effort-max=max skills/effort-max/SKILL.md",
		"skill feat=high skills/feat/SKILL.md",
		"skill gitflow=medium .claude/skills/gitflow/SKILL.md",
	}
	if !reflect.DeepEqual(pins, want) {
		t.Errorf("pins:\n%s\nwant:\n%s", strings.Join(pins, "\n"), strings.Join(want, "\n"))
	}
	var unpinned []string
	for _, p := range c.Unpinned {
		unpinned = append(unpinned, p.Kind+" "+p.Name)
	}
	wantUnpinned := []string{"agent broken", "agent interviewer", "agent mispinned", "agent plain", "agent unclosed", "skill graphify"}
	if !reflect.DeepEqual(unpinned, wantUnpinned) {
		t.Errorf("unpinned = %v, want %v", unpinned, wantUnpinned)
	}
	if lvl, known := c.Lookup(KindSkill, "feat"); lvl != "high" || !known {
		t.Errorf("Lookup(feat) = %q, %v", lvl, known)
	}
	if lvl, known := c.Lookup(KindAgent, "interviewer"); lvl != "" || !known {
		t.Errorf("Lookup(interviewer) = %q, %v", lvl, known)
	}
	if _, known := c.Lookup(KindAgent, "nobody"); known {
		t.Error("Lookup(nobody) is known")
	}

	got := map[string]string{}
	for _, w := range c.Warnings {
		got[w.File+":"+itoa(w.Line)] = w.Reason
	}
	wantWarn := map[string]string{
		// yaml.v3 names the line where it reports the unclosed flow sequence: the line before the [.
		"agents/broken.md:2":            "frontmatter is not valid YAML",
		"agents/mispinned.md:3":         `effort "ultra" is not a level`,
		"agents/unclosed.md:1":          "frontmatter is not closed",
		"skills/loop:0":                 "skipped:",
		"skills/writing-plans:0":        "skipped:",
		"settings.json:4":               "CLAUDE_CODE_EFFORT_LEVEL=max beats every",
		".claude/settings.local.json:1": `effortLevel "turbo" is not a level`,
		"agents/hotfixer.md:0":          `agent "hotfixer" is also defined in .claude/agents/hotfixer-link.md`,
	}
	for k, sub := range wantWarn {
		if !strings.Contains(got[k], sub) {
			t.Errorf("warning %s = %q, want it to contain %q (all: %v)", k, got[k], sub, c.Warnings)
		}
	}
	if len(c.Warnings) != len(wantWarn) {
		t.Errorf("%d warnings, want %d: %v", len(c.Warnings), len(wantWarn), c.Warnings)
	}
	wantSettings := []Settings{
		{File: "settings.json", EffortLevel: "high", EnvEffortLevel: "max"},
		{File: ".claude/settings.local.json"},
	}
	if !reflect.DeepEqual(c.Settings, wantSettings) {
		t.Errorf("settings = %+v, want %+v", c.Settings, wantSettings)
	}
}

func TestCensusEmptyRepo(t *testing.T) {
	c, err := TakeCensus(os.DirFS(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Pins)+len(c.Unpinned)+len(c.Settings)+len(c.Warnings) != 0 {
		t.Errorf("empty repository: %+v", c)
	}
}

func TestParseFrontmatter(t *testing.T) {
	cases := []struct {
		name, in     string
		effort, nm   string
		line         int
		warnLine     int
		warnContains string
	}{
		{name: "pinned", in: "---\nname: a\neffort: high\n---\n", effort: "high", nm: "a", line: 3},
		{name: "crlf and bom", in: "\ufeff---\r\nname: a\r\neffort: max\r\n---\r\n", effort: "max", nm: "a", line: 3},
		{name: "quoted", in: "---\neffort: \"xhigh\"\n---\n", effort: "xhigh", line: 2},
		{name: "dots close", in: "---\neffort: low\n...\n", effort: "low", line: 2},
		{name: "none", in: "no frontmatter\n"},
		{name: "empty", in: "---\n---\n"},
		{name: "number", in: "---\neffort: 3\n---\n", warnLine: 2, warnContains: `effort "3" is not a level`},
		{name: "upper case", in: "---\neffort: High\n---\n", warnLine: 2, warnContains: `"High" is not a level`},
		{name: "null", in: "---\neffort:\n---\n", warnLine: 2, warnContains: "effort is empty"},
		{name: "list", in: "---\neffort: [low, high]\n---\n", warnLine: 2, warnContains: "not a single value"},
		{name: "twice", in: "---\neffort: low\neffort: high\n---\n", effort: "high", line: 3, warnLine: 3, warnContains: "set twice"},
		{name: "bad yaml", in: "---\nname: a\ndescription: \"x\n---\n", warnLine: 3, warnContains: "not valid YAML"},
		{name: "bad indent", in: "---\nname: a\n  effort: high\n---\n", warnLine: 3, warnContains: "not valid YAML"},
		{name: "scalar", in: "---\njust text\n---\n", warnLine: 2, warnContains: "not a mapping"},
		{name: "unclosed", in: "---\neffort: high\n", warnLine: 1, warnContains: "not closed"},
		{name: "too long", in: "---\n" + strings.Repeat("# pad\n", 20000) + "effort: high\n---\n", warnLine: 1, warnContains: "longer than 64 KiB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fm, err := ParseFrontmatter(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if fm.Effort != tc.effort || fm.Name != tc.nm || fm.EffortLine != tc.line {
				t.Errorf("got effort %q name %q line %d, want %q %q %d", fm.Effort, fm.Name, fm.EffortLine, tc.effort, tc.nm, tc.line)
			}
			if tc.warnContains == "" {
				if len(fm.Warnings) != 0 {
					t.Errorf("unexpected warnings %v", fm.Warnings)
				}
				return
			}
			if len(fm.Warnings) != 1 || fm.Warnings[0].Line != tc.warnLine || !strings.Contains(fm.Warnings[0].Reason, tc.warnContains) {
				t.Errorf("warnings %v, want one on line %d containing %q", fm.Warnings, tc.warnLine, tc.warnContains)
			}
		})
	}
}

func itoa(n int) string {
	const digits = "0123456789"
	if n < 10 {
		return digits[n : n+1]
	}
	return itoa(n/10) + digits[n%10:n%10+1]
}
