package scorecmd

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/exitcode"
	"github.com/ldd-tools/tune/internal/scorer"
	"github.com/ldd-tools/tune/internal/traceparse"
)

// RegressionKey is the meta-line field that names the earlier task a task regressed: the task's own
// meta line carries it, so no other line of the log changes and the reference's readers, which ignore
// unknown meta fields, read the log as before (docs/decisions.md#regression-of).
const RegressionKey = "regression_of"

// regressionOf finds the earlier task of the trace log at logPath that --regression-of (a meta
// timestamp, in any RFC 3339 form) or --regression-of-last (a file) names, and returns its meta
// timestamp exactly as the log holds it, the form the readers match.
func regressionOf(logPath, stamp, file string) (string, error) {
	var at time.Time
	if stamp != "" {
		t, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil {
			return "", exitcode.FlagErrorf("--regression-of %q: not a meta timestamp (RFC 3339, e.g. 2026-11-02T10:00:00.123456Z); nothing was written", stamp)
		}
		at = t
	}
	var found string
	_, err := traceparse.StreamLog(logPath, func(t *traceparse.Task) error {
		switch {
		case t.Legacy || t.MetaTimestamp == "":
		case stamp != "" && (t.MetaTimestamp == stamp || (!t.MetaTime.IsZero() && t.MetaTime.Equal(at))):
			found = strings.Clone(t.MetaTimestamp)
		case file != "" && touches(t, file):
			found = strings.Clone(t.MetaTimestamp) // the last one wins
		}
		return nil
	}, nil)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("--log %s: no such trace log, so no earlier task to name; nothing was written", logPath)
	case err != nil:
		return "", err
	case found == "" && stamp != "":
		return "", fmt.Errorf("--regression-of %s: no task of %s has that meta timestamp; nothing was written", stamp, logPath)
	case found == "":
		return "", fmt.Errorf("--regression-of-last %s: no task of %s names that file (files=, its title, action= or layer=); nothing was written", file, logPath)
	}
	return found, nil
}

// touches reports whether the task names file: in files=, or among the paths the scorer sees in its
// title and its action= and layer= text (what --history reads). Paths match when equal or when one
// ends with the other at a path boundary ("internal/x.go" and "x.go" do, "ax.go" and "x.go" do not).
func touches(t *traceparse.Task, file string) bool {
	want := path.Clean(strings.ReplaceAll(file, `\`, "/"))
	match := func(paths ...string) bool {
		for _, p := range paths {
			p = path.Clean(strings.ReplaceAll(p, `\`, "/"))
			if p == want || strings.HasSuffix(p, "/"+want) || strings.HasSuffix(want, "/"+p) {
				return true
			}
		}
		return false
	}
	if match(t.Files...) || match(wholePaths(t.Title)...) {
		return true
	}
	for _, e := range t.Entries {
		if match(wholePaths(e.Fields.Value("action"))...) || match(wholePaths(e.Fields.Value("layer"))...) {
			return true
		}
	}
	return false
}

// wholePaths are the paths the scorer sees in text (scorer.ExtractPaths) that stand whole in it. The
// scorer's pattern, the reference's, ends a path at its extension, so "date.go.orig" yields "date.go";
// as evidence of which task touched date.go that names the wrong task (the trace review). A path stands
// whole when what follows it is not more of a name: a letter, a digit, "_", "/", "-", or a "." that
// goes on ("date.go." ending a sentence, "date.go:42" and "date.go," stand whole).
func wholePaths(text string) []string {
	var out []string
	for _, p := range scorer.ExtractPaths(text) {
		for rest := text; ; {
			i := strings.Index(rest, p)
			if i < 0 {
				break
			}
			after := rest[i+len(p):]
			if !continuesName(after) {
				out = append(out, p)
				break
			}
			rest = rest[i+1:]
		}
	}
	return out
}

// continuesName reports whether after (the text right after a path) goes on with more of the name.
func continuesName(after string) bool {
	nameByte := func(c byte) bool {
		return c == '_' || c == '/' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	switch {
	case after == "":
		return false
	case after[0] == '.':
		return len(after) > 1 && nameByte(after[1])
	}
	return nameByte(after[0])
}
