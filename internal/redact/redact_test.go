package redact

import (
	"strings"
	"testing"
)

// Every known key format is redacted whole, and so is what is left of one after a title was cut.
func TestKeysAndFragments(t *testing.T) {
	secrets := []string{
		"sk-ant-api03-Q7xLmP2vTr9KwN4bZc8HjY",
		"sk-proj-abcdefghijklmnop1234",
		"ghp_0123456789abcdefghijABCDEFGHIJ0123",
		"github_pat_11ABCDEFG0123456789_abcdefghij",
		"xoxb-1234567890-abcdefghij",
		"AKIAIOSFODNN7EXAMPLE",
		"AIzaSyA1234567890abcdefghijklmnopqrstu",
		"sk_live_4eC39HqLyjWDarjtT1zdp7dc",
		"npm_abcdefghijklmnopqrstuvwxyz0123456789",
		"hf_abcdefghijklmnopqrstuvwxyz0123456",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
		// fragments of a title cut before redaction
		"ghp_0123456789abcdefghi",
		"sk-ant-ap",
		"AKIAIOSFODNN",
		"xoxb-1234",
		"eyJhbGciOiJIUzI1",
	}
	for _, s := range secrets {
		for _, title := range []string{s, "deploy with " + s, "deploy with " + s + "…"} {
			got := String(title)
			if strings.Contains(got, s) || !strings.Contains(got, Redacted) {
				t.Errorf("%q → %q", title, got)
			}
			if String(got) != got {
				t.Errorf("not idempotent: %q → %q", got, String(got))
			}
		}
	}
	for _, clear := range []string{"fix the login page", "refactor auth flow across 3 layers", "bump sklearn", "task-runner tweak", "use basic layout"} {
		if got := String(clear); got != clear {
			t.Errorf("over-redacted %q → %q", clear, got)
		}
	}
	if got := String("postgres://app:hunter2@db/x"); strings.Contains(got, "hunter2") {
		t.Errorf("url password: %q", got)
	}
}

// withoutPrefilter is Count with every pattern tried on every string: what String must equal.
func withoutPrefilter(s string) string {
	for _, r := range secretPatterns() {
		s = r.re.ReplaceAllStringFunc(s, func(m string) string {
			if r.keep == 0 {
				return Redacted
			}
			sub := r.re.FindStringSubmatch(m)
			kept := ""
			for _, k := range sub[1 : 1+r.keep] {
				kept += k
			}
			if r.kind == "url-password" {
				return kept + Redacted + "@"
			}
			return kept + Redacted
		})
	}
	return s
}

var prefilterSeeds = []string{"checkout → auth guarded", "Bearer abcdefghijklmnop", "BASIC abcdefghijklmnopq", "baſic abcdefghijklmnop",
	"token=abc", "pwd: x", "ghp_0123456789abcdefghij", "xoxb-1234567890", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIx.abc", "AKIAIOSFODNN7EXAMPLE",
	"https://u:p@h", "-----BEGIN RSA PRIVATE KEY----- x", "sk-ant-api03-Q7xLmP2vTr9KwN4bZc8HjY", "plain words only", "K kelvin \u212a"}

// The cheap tests that skip the patterns never skip a string a pattern would change.
func TestPrefilterSkipsNoSecret(t *testing.T) {
	for _, s := range prefilterSeeds {
		if got, want := String(s), withoutPrefilter(s); got != want {
			t.Errorf("%q: %q, want %q", s, got, want)
		}
	}
}

// scansPerWord is the prefilter as it was before its one scan: a scan per literal and per word of
// strings.ToLower(s). The one scan must stop at least what it stopped.
func scansPerWord(s string) bool {
	for _, lit := range literals {
		if strings.Contains(s, lit) {
			return true
		}
	}
	l := strings.ToLower(s)
	if strings.Contains(l, "bearer") || strings.Contains(l, "basic") || strings.ContainsAny(s, "\u017f\u212a") {
		return true
	}
	if strings.ContainsAny(s, "=:") {
		for _, w := range secretWords {
			if strings.Contains(l, w) {
				return true
			}
		}
	}
	return false
}

func TestOneScanPrefilter(t *testing.T) {
	for _, s := range append(prefilterSeeds, "x:token", "KEY=1", "a\u212aey=", "auth: fix", "3: contract · 5: guard", "ſk-", "BeArEr") {
		if mayHoldSecret(s) && scansPerWord(s) && !maybeSecret(s) {
			t.Errorf("%q: the one-scan prefilter passes what a scan per literal and word stopped", s)
		}
	}
}

func FuzzPrefilter(f *testing.F) {
	for _, s := range prefilterSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := String(s), withoutPrefilter(s); got != want {
			t.Fatalf("%q: %q, want %q", s, got, want)
		}
		if mayHoldSecret(s) && scansPerWord(s) && !maybeSecret(s) {
			t.Fatalf("%q: the one-scan prefilter passes what a scan per literal and word stopped", s)
		}
	})
}

// BenchmarkString redacts the free text of a generated trace's lines (actions, layers, titles), which
// `tune trace --format jsonl` passes through String once per entry.
func BenchmarkString(b *testing.B) {
	texts := []string{"checkout → docs guarded", "baseline for test middleware #0", "3: contract · 5: guard",
		"flaky auth #1", "consensus → retry guarded", "cache → parser guarded", "Add API docs for the billing endpoint",
		"refactor the token bucket (rate-limit) handler", "fix: null deref in session_store"}
	n := 0
	for _, s := range texts {
		n += len(s)
	}
	b.SetBytes(int64(n))
	for b.Loop() {
		for _, s := range texts {
			String(s)
		}
	}
}
