package report

import "github.com/ldd-tools/tune/internal/redact"

// Redacted replaces a secret-looking string.
const Redacted = redact.Redacted

// Redact is redact.String, the one redaction of tune: reports apply it to every task title and free-text
// label (titles from a trace log arrive redacted already; other free text may not).
func Redact(s string) string { return redact.String(s) }

// RedactCount is redact.Count: Redact with the number of strings replaced, for the report's footnote.
func RedactCount(s string) (string, int) { return redact.Count(s) }
