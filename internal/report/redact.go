package report

import (
	"regexp"
)

// Redacted replaces a secret-looking string.
const Redacted = "[REDACTED]"

// redaction is one kind of secret-looking string. keep is the number of leading submatches kept in the
// output (the key in "password=…", the scheme and user in a URL); the rest of the match is replaced.
type redaction struct {
	kind string
	re   *regexp.Regexp
	keep int
}

// secretPatterns are tried in order. They aim at what leaks into task titles — pasted keys, tokens, URLs with
// credentials — and accept some over-redaction (a long token-like word after "token=") over a leak.
// Hand-written because no dependency in go.mod does this; gitleaks' rule set is the model, much reduced.
var secretPatterns = []redaction{
	// Credentials in a URL: scheme://user:password@host → scheme://user:[REDACTED]@host.
	{"url-password", regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]+:)[^\s/@]+(@)`), 1},
	// PEM private keys (one line in a title, but never print even the header's body).
	{"private-key", regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)`), 0},
	// JWTs: three base64url parts, the first two JSON objects ("eyJ" is base64 of `{"`).
	{"jwt", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`), 0},
	// Authorization headers.
	{"bearer", regexp.MustCompile(`(?i)(\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{12,}`), 1},
	// Vendor key formats: OpenAI/Anthropic sk-…, GitHub tokens, Slack, AWS access key ids, Google API keys,
	// Stripe, npm, Hugging Face.
	{"api-key", regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`), 0},
	{"github-token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`), 0},
	{"slack-token", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), 0},
	{"aws-access-key", regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b`), 0},
	{"google-api-key", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{30,}`), 0},
	{"stripe-key", regexp.MustCompile(`\b[rsp]k_(?:live|test)_[0-9A-Za-z]{16,}`), 0},
	{"npm-token", regexp.MustCompile(`\bnpm_[A-Za-z0-9]{30,}`), 0},
	{"hf-token", regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`), 0},
	// key=value secrets (DB_PASSWORD=…, ?token=…). The value runs to whitespace or a separator, or is quoted.
	{"assignment", regexp.MustCompile(`(?i)(\b[A-Za-z0-9_.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?|auth)\s*=\s*)("[^"]*"|'[^']*'|[^\s,;&"']+)`), 1},
	// "password: …" — the colon form only for names that are not also common title prefixes ("auth: fix
	// login", "token: rename" stay readable).
	{"assignment", regexp.MustCompile(`(?i)(\b(?:password|passwd|pwd|secret|api[_ -]?key|client[_ -]?secret|private[_ -]?key)\s*:\s*)("[^"]*"|'[^']*'|[^\s,;&"']+)`), 1},
}

// Redact replaces secret-looking strings in s (API keys such as sk-…, ghp_…, xox…-…, AKIA…, bearer
// tokens, JWTs, passwords in URLs, key=value secrets) with [REDACTED]. It is applied to every task title and
// free-text label before a report writes it.
func Redact(s string) string {
	out, _ := RedactCount(s)
	return out
}

// RedactCount is Redact that also returns how many strings it replaced, for the report's footnote.
func RedactCount(s string) (string, int) {
	n := 0
	for _, r := range secretPatterns {
		s = r.re.ReplaceAllStringFunc(s, func(m string) string {
			n++
			if r.keep == 0 {
				return Redacted // no pattern matches "[REDACTED]" itself
			}
			sub := r.re.FindStringSubmatch(m)
			kept := ""
			for _, k := range sub[1 : 1+r.keep] {
				kept += k
			}
			repl := kept + Redacted
			if r.kind == "url-password" {
				repl += "@"
			}
			if repl == m { // already redacted: keep Redact idempotent and the count honest
				n--
			}
			return repl
		})
	}
	return s, n
}
