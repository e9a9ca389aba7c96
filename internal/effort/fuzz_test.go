package effort

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/audit"
)

// FuzzFrontmatter feeds arbitrary files to the frontmatter parser: it must never fail on content
// (only read errors are errors), never return a pin that is not a level, and name a line inside the
// file for every warning.
func FuzzFrontmatter(f *testing.F) {
	for _, s := range []string{
		"---\nname: a\neffort: high\n---\nbody\n",
		"\ufeff---\r\neffort: max\r\n---\r\n",
		"---\neffort: [high\n---\n",
		"---\nname: a\n  effort: high\n---\n",
		"---\neffort: &a low\nname: *a\n---\n",
		"---\neffort: !!binary aGk=\n---\n",
		"---\n- a\n- b\n---\n",
		"---\neffort:\n---\n",
		"---\neffort: high\n",
		"---\na: &a [*a]\n---\n",
		"---\n" + strings.Repeat("a: [", 50) + "\n---\n",
		"no frontmatter",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fm, err := ParseFrontmatter(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("content error: %v", err)
		}
		if fm.Effort != "" && !audit.IsEffortLevel(fm.Effort) {
			t.Fatalf("pin %q is not a level", fm.Effort)
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		if fm.Effort != "" && (fm.EffortLine < 2 || fm.EffortLine > lines) {
			t.Fatalf("effort line %d outside the file's %d lines", fm.EffortLine, lines)
		}
		for _, w := range fm.Warnings {
			if w.Line < 1 || w.Line > lines || w.Reason == "" {
				t.Fatalf("warning %+v outside the file's %d lines", w, lines)
			}
		}
		if !fm.Present && (fm.Effort != "" || len(fm.Warnings) > 0) {
			t.Fatalf("no frontmatter but %+v", fm)
		}
	})
}
