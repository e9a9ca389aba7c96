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
