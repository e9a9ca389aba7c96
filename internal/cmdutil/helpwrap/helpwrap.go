// Package helpwrap fits cobra's help to the terminal: the description, the examples, the command
// lists and the flags are wrapped to a width (the terminal's, $COLUMNS, 80 when unknown) instead of
// running as wide as their source lines. It lives apart from cmdutil so that the light `tune score`
// binary does not link the wrapping library; it hands help requests to tune-full.
package helpwrap

import (
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/muesli/reflow/wordwrap"
	"github.com/muesli/reflow/wrap"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// DefaultWidth is the width when the terminal's is unknown (piped help, CI logs).
const DefaultWidth = 80

// width is the width of the help being rendered: cobra's template functions are global, so the
// help function of the tree sets it just before rendering.
var width atomic.Int64

var registerOnce sync.Once

// widthFunc is the width function of the last tree Install set up, for Topic.
var widthFunc atomic.Value

// Topic wraps the text of a help topic that prints itself (a Markdown playbook) as Prose wraps a
// description, at the width Install was given.
func Topic(s string) string {
	w := DefaultWidth
	if f, ok := widthFunc.Load().(func() int); ok && f() > 0 {
		w = f()
	}
	return Prose(s, w)
}

// Install makes the help of root and of every command under it fit widthOf() columns (0 or less:
// DefaultWidth).
func Install(root *cobra.Command, widthOf func() int) {
	registerOnce.Do(func() {
		cobra.AddTemplateFuncs(map[string]any{
			"wrapProse":   func(s string) string { return Prose(s, current()) },
			"wrapExample": func(s string) string { return Example(s, current()) },
			"wrapFlags":   func(fs *pflag.FlagSet) string { return fs.FlagUsagesWrapped(current()) },
			"wrapItem":    func(name, text string) string { return item(name, text, current()) },
		})
	})
	root.SetHelpTemplate(mustReplace(root.HelpTemplate(), "{{. | trimTrailingWhitespaces}}", "{{wrapProse . | trimTrailingWhitespaces}}"))
	usage := root.UsageTemplate()
	for _, r := range [][2]string{
		{"{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}", "{{wrapFlags .LocalFlags | trimTrailingWhitespaces}}"},
		{"{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}", "{{wrapFlags .InheritedFlags | trimTrailingWhitespaces}}"},
		{"{{.Example}}", "{{wrapExample .Example}}"},
		{"{{rpad .Name .NamePadding }} {{.Short}}", "{{wrapItem (rpad .Name .NamePadding) .Short}}"},
		{"{{rpad .CommandPath .CommandPathPadding}} {{.Short}}", "{{wrapItem (rpad .CommandPath .CommandPathPadding) .Short}}"},
	} {
		usage = mustReplace(usage, r[0], r[1])
	}
	root.SetUsageTemplate(usage)
	widthFunc.Store(widthOf)
	help := root.HelpFunc()
	root.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		w := widthOf()
		if w <= 0 {
			w = DefaultWidth
		}
		width.Store(int64(w))
		help(cmd, args)
	})
}

// mustReplace replaces old in a cobra template, and panics when cobra's template no longer holds it
// (a cobra upgrade changed it: the help would silently stop wrapping).
func mustReplace(tmpl, old, new string) string {
	if !strings.Contains(tmpl, old) {
		panic("helpwrap: cobra's template no longer holds " + old)
	}
	return strings.ReplaceAll(tmpl, old, new)
}

func current() int {
	if w := int(width.Load()); w > 0 {
		return w
	}
	return DefaultWidth
}

// fill wraps s (one line, no indentation) to lines of at most limit cells, at spaces; a word longer
// than a line is cut. reflow's word wrap breaks at spaces only here (its default also breaks after
// '-', which would split --flags), and its hard wrap cuts what is still too long.
func fill(s string, limit int) []string {
	limit = max(limit, 10)
	ww := wordwrap.NewWriter(limit)
	ww.Breakpoints = nil
	ww.KeepNewlines = false
	_, _ = ww.Write([]byte(s))
	_ = ww.Close()
	return strings.Split(wrap.String(ww.String(), limit), "\n")
}

// hanging wraps body to width after prefix (a line's indentation and list marker): its first line
// follows prefix, the others are indented to prefix's width. A prefix that leaves less than a third of
// the width is not followed: the text then starts on a line of its own, four further in.
func hanging(prefix, body string, width int) string {
	hang := len([]rune(prefix))
	if hang+len([]rune(body)) <= width {
		return prefix + body
	}
	if width-hang < width/3 {
		indent := len(prefix) - len(strings.TrimLeft(prefix, " "))
		return strings.TrimRight(prefix, " ") + "\n" + hanging(strings.Repeat(" ", indent+4), body, width)
	}
	parts := fill(body, width-hang)
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.Repeat(" ", hang) + parts[i]
	}
	return prefix + strings.Join(parts, "\n")
}

// lead is the start of a line up to its text: indentation, then a list marker ("- ", "1. ") or the
// term of an aligned list ("  Fisher p   " before "one-sided …"), whose text the continuation lines
// align with.
var lead = regexp.MustCompile(`^( *)((?:[-*] |\d+\. )?)((?:\S+(?: \S+)*? {2,})?)`)

// Prose wraps a command's description (or a Markdown help topic) to width. A paragraph is a line and
// the lines after it that continue its text (indented to where its text starts, neither blank, nor a
// list item, nor after a line ending in a shell continuation "\" or in a colon, which introduces
// what follows): it is rejoined and wrapped, its
// continuation lines under its text, since its source lines were broken for another width. Lines
// that fit are kept as they are when they stand alone. A fenced code block (from a line starting
// "```" to the next) is code, kept line for line: a TOML table joined to its keys is no longer TOML.
func Prose(s string, width int) string {
	lines := strings.Split(s, "\n")
	var out []string
	for i := 0; i < len(lines); {
		line := lines[i]
		if fence(line) {
			j := i + 1
			for j < len(lines) && !fence(lines[j]) {
				j++
			}
			j = min(j+1, len(lines))
			out = append(out, lines[i:j]...)
			i = j
			continue
		}
		m := lead.FindStringSubmatch(line)
		prefix := m[0]
		j := i + 1
		for j < len(lines) && continues(lines[j-1], lines[j], len([]rune(prefix))) {
			j++
		}
		if strings.TrimSpace(line) == "" || (j == i+1 && len([]rune(line)) <= width) {
			out = append(out, line)
			i = j
			continue
		}
		body := line[len(prefix):]
		for _, next := range lines[i+1 : j] {
			body += " " + strings.TrimLeft(next, " ")
		}
		out = append(out, hanging(prefix, body, width))
		i = j
	}
	return strings.Join(out, "\n")
}

// fence reports whether line opens or closes a fenced code block.
func fence(line string) bool { return strings.HasPrefix(strings.TrimLeft(line, " "), "```") }

// continues reports whether next continues the paragraph of prev, whose text starts at column hang.
func continues(prev, next string, hang int) bool {
	body := strings.TrimLeft(next, " ")
	if strings.TrimSpace(prev) == "" || body == "" || fence(next) || strings.HasSuffix(prev, "\\") || strings.HasSuffix(prev, ":") || len(next)-len(body) != hang {
		return false
	}
	m := lead.FindStringSubmatch(next)
	return m[2] == "" && m[3] == ""
}

// Example wraps the example lines to width the way a shell reads them: a command too long for a line
// is continued with " \" after a space outside quotes, its continuation indented by four. A line
// with no such space is left whole.
func Example(s string, width int) string {
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		lines[i] = continueLine(line, width)
	}
	return strings.Join(lines, "\n")
}

func continueLine(line string, width int) string {
	indent := len(line) - len(strings.TrimLeft(line, " "))
	cont := strings.Repeat(" ", indent+4)
	var out []string
	rest, prefix := line, ""
	for len([]rune(prefix+rest)) > width {
		cut := breakBefore(rest, width-len([]rune(prefix))-2) // room for " \"
		if cut <= 0 {
			break
		}
		out = append(out, prefix+strings.TrimRight(rest[:cut], " ")+` \`)
		rest, prefix = strings.TrimLeft(rest[cut:], " "), cont
	}
	return strings.Join(append(out, prefix+rest), "\n")
}

// breakBefore is the byte index of the last space outside quotes at which s can be cut so that the
// part before it is at most limit runes, or -1.
func breakBefore(s string, limit int) int {
	best, runes := -1, 0
	var quote rune
	for i, r := range s {
		if runes > limit {
			break
		}
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '\'' || r == '"'):
			quote = r
		case quote == 0 && r == ' ' && runes > 0 && s[i-1] != ' ':
			best = i
		}
		runes++
	}
	if runes <= limit {
		return -1 // it fits already
	}
	return best
}

// item is one line of a command list ("  name   short description"), wrapped under its description.
func item(name, text string, width int) string {
	return strings.TrimPrefix(hanging("  "+name+" ", text, width), "  ")
}
