package report

import (
	"unicode/utf8"

	"github.com/ldd-tools/tune/internal/redact"
)

// Redacted replaces a secret-looking string.
const Redacted = redact.Redacted

// Redact is redact.String, the one redaction of tune: reports apply it to every task title and free-text
// label (titles from a trace log arrive redacted already; other free text may not).
func Redact(s string) string { return redact.String(s) }

// RedactCount is redact.Count: Redact with the number of strings replaced, for the report's footnote.
func RedactCount(s string) (string, int) { return redact.Count(s) }

// MaxTitleRunes bounds a task title where tune writes one for people: a proposal, its log entries, the
// EVAL report, the pull request's body. A trace log's title has no bound (the reference writer keeps
// the whole prompt): three titles of 440 KB made a 5 MB proposal the store then refused to read, a
// report padded to 7 MB and a body GitHub refuses (the review of the reports).
const MaxTitleRunes = 300

// TaskTitle is title as tune writes it for people: redacted, then cut to MaxTitleRunes ("…" at the
// end); cut says whether it was. A long title is cut before the redaction too (its first 4 bytes a rune
// and the redaction's margin, redact.Head): redacting costs seconds a megabyte.
func TaskTitle(title string) (shown string, cut bool) {
	shown, cut, _ = taskTitleCount(title)
	return shown, cut
}

// taskTitleCount is TaskTitle with the number of strings the redaction replaced (the report's footnote).
func taskTitleCount(title string) (shown string, cut bool, redacted int) {
	head := redact.Head(title, 4*MaxTitleRunes)
	cut = len(head) < len(title)
	title, redacted = RedactCount(head)
	if utf8.RuneCountInString(title) > MaxTitleRunes {
		n := 0
		for i := range title {
			if n == MaxTitleRunes-1 {
				return title[:i] + "…", true, redacted
			}
			n++
		}
	}
	return title, cut, redacted
}
