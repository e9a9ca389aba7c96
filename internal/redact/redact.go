// Package redact replaces secret-looking strings (pasted API keys, tokens, passwords in URLs) before
// text reaches any output: the one redaction function of tune (docs/decisions.md#store-integrity-and-hostile-inputs-issue-18).
package redact

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
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
// Compiled on first use: compiling them was a thousand allocations in the start-up of every tune process,
// most of which never meet a string that gets past maybeSecret.
var secretPatterns = sync.OnceValue(func() []redaction {
	return []redaction{
		// Credentials in a URL: scheme://user:password@host → scheme://user:[REDACTED]@host.
		{"url-password", regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]+:)[^\s/@]+(@)`), 1},
		// PEM private keys (one line in a title, but never print even the header's body).
		{"private-key", regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|$)`), 0},
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
		// Fragments: a title cut before it was redacted (tune score cut at 80 characters, older trace logs)
		// can end in the first characters of a key, e.g. "ghp_" and 19 more. The vendor prefixes are
		// distinctive enough to redact from a few characters on.
		{"key-fragment", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{4,}|github_pat_[A-Za-z0-9_]{4,}|xox[abposr]-[A-Za-z0-9-]{4,}|sk-(?:ant-|proj-)[A-Za-z0-9_-]{2,}|sk-[A-Za-z0-9_-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{8,}|AIza[0-9A-Za-z_-]{8,}|[rsp]k_(?:live|test)_[0-9A-Za-z]{4,}|npm_[A-Za-z0-9]{10,}|hf_[A-Za-z0-9]{10,}|eyJ[A-Za-z0-9_-]{10,})`), 0},
		// key=value secrets (DB_PASSWORD=…, ?token=…). The value runs to whitespace or a separator, and may
		// be quoted in pieces as a shell word is ("00"000 is one value: a quoted piece alone would leave
		// the rest for a second pass, and Redact would not be idempotent).
		{"assignment", regexp.MustCompile(`(?i)(\b[A-Za-z0-9_.-]*(?:pass(?:word|wd)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|account[_-]?key|private[_-]?key|credentials?|auth)\s*=\s*)((?:"[^"]*"|'[^']*'|[^\s,;&"']+)+)`), 1},
		// "password: …" — the colon form only for names that are not also common title prefixes ("auth: fix
		// login", "token: rename" stay readable).
		{"assignment", regexp.MustCompile(`(?i)(\b(?:password|passwd|pwd|secret|api[_ -]?key|client[_ -]?secret|private[_ -]?key)["']?\s*:\s*)((?:"[^"]*"|'[^']*'|[^\s,;&"']+)+)`), 1},
	}
})

// String replaces secret-looking strings in s (API keys such as sk-…, ghp_…, xox…-…, AKIA…, bearer
// tokens, JWTs, passwords in URLs, key=value secrets, and the fragments a cut title leaves of the vendor
// formats) with [REDACTED]. It is the one redaction of tune: the trace reader applies it to every task
// title as it reads it, tune score before it cuts a title for the trace log, the reports to every
// free-text value.
func String(s string) string {
	out, _ := Count(s)
	return out
}

// Count is String that also returns how many strings it replaced, for a report's footnote.
func Count(s string) (string, int) { return countCached(s, countAll) }

// countAll is Count without the memo.
func countAll(s string) (string, int) {
	s, n := countHand(s)
	s, m := Gitleaks().redact(s)
	return s, n + m
}

// countHand is Count with the hand-written patterns only.
func countHand(s string) (string, int) {
	if !maybeSecret(s) {
		return s, 0
	}
	n := 0
	for _, r := range secretPatterns() {
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

// maybeSecret is a cheap test that lets String skip its regular expressions on the common text (every
// trace line's action passes through String): each pattern above needs one of these literals — a URL
// scheme, a PEM header, a JWT's "eyJ", a vendor prefix, bearer/basic, or a '=' or ':' with a secret
// word. Measured on a 100 MB generated trace exported whole: without it redaction more than doubled the
// CPU time (docs/decisions.md#store-integrity-and-hostile-inputs-issue-18).
func maybeSecret(s string) bool {
	if !mayHoldSecret(s) {
		return false
	}
	// One scan for all of them (a literal, bearer/basic, a secret word next to a '=' or ':'), where a
	// scan per literal and word was most of the cost of the text that gets this far (a close line's
	// layer="3: contract · 5: guard"). Words are matched in ASCII case folding, as in strings.ToLower's
	// output: ToLower maps no other rune to ASCII but U+212A (K), which returns true here as before.
	sep, word := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		for _, lit := range literalsByFirst[c] {
			if strings.HasPrefix(s[i:], lit) {
				return true
			}
		}
		switch c {
		case '=', ':':
			sep = true
		case 0xC5: // may start U+017F (ſ), which the (?i) patterns fold to s
			return true
		case 0xE2:
			if i+1 < len(s) && s[i+1] == 0x84 { // may start U+212A (K), folded to k
				return true
			}
		}
		if lc := c | 0x20; lc >= 'a' && lc <= 'z' {
			for _, w := range foldedWords[lc] {
				if hasPrefixLower(s[i+1:], w.rest) {
					if w.alone {
						return true
					}
					word = true
				}
			}
		}
	}
	return sep && word
}

// mayHoldSecret is maybeSecret's first pass, one scan of s: every pattern needs one of ':', '-',
// '_', '=', 'J' (of "eyJ"), 'A' (of AKIA…, AIza) or the word bearer/basic in any case, so most free
// text (an iteration's action) is cleared here without the literals' two dozen scans, which were a
// tenth of the CPU of a streamed `tune trace --format jsonl`. A byte that may start a rune the case-
// insensitive patterns fold to an ASCII letter (U+017F ſ, U+212A K) defers to the full test.
func mayHoldSecret(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ':', '-', '_', '=', 'J', 'A', 0xC5:
			return true
		case 0xE2:
			if i+1 < len(s) && s[i+1] == 0x84 {
				return true
			}
		case 'b', 'B':
			if r := s[i+1:]; hasPrefixLower(r, "earer") || hasPrefixLower(r, "asic") {
				return true
			}
		}
	}
	return false
}

var (
	literals = []string{"://", "-----BEGIN", "eyJ", "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AKIA", "ASIA", "AGPA", "AIDA", "AROA",
		"AIza", "k_live_", "k_test_", "npm_", "hf_"}
	secretWords = []string{"pass", "pwd", "secret", "token", "key", "credential", "auth"}
	// aloneWords are enough by themselves (an authorization header), in any case.
	aloneWords = []string{"bearer", "basic"}

	literalsByFirst = func() (t [256][]string) {
		for _, l := range literals {
			t[l[0]] = append(t[l[0]], l)
		}
		return t
	}()
	// foldedWords are the secret and alone words by their first letter, lower case.
	foldedWords = func() (t [256][]foldedWord) {
		for _, w := range secretWords {
			t[w[0]] = append(t[w[0]], foldedWord{w[1:], false})
		}
		for _, w := range aloneWords {
			t[w[0]] = append(t[w[0]], foldedWord{w[1:], true})
		}
		return t
	}()
)

// foldedWord is a word of maybeSecret without its first letter; alone: it is enough without a '=' or ':'.
type foldedWord struct {
	rest  string
	alone bool
}

// Margin is how far past the part of a text that is kept its redaction must read: more than any secret
// the rules know is long, so a secret that begins in the kept part is whole in what is redacted.
const Margin = 64 << 10

// Head is the start of s a redaction needs when only its first n bytes are kept: n bytes and Margin
// more, cut back to a rune's start (s whole when it is shorter). Redacting a megabyte costs seconds; a
// title needs only its head.
func Head(s string, n int) string {
	end := n + Margin
	if end >= len(s) {
		return s
	}
	for end > n && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end]
}
