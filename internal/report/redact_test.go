package report

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRedact(t *testing.T) {
	cases := []struct {
		name, in, want string
		n              int
	}{
		{"openai key", "debug sk-proj-AbCdEf0123456789xyzXYZ failing", "debug [REDACTED] failing", 1},
		{"anthropic key", "use sk-ant-api03-abcdefghijklmnopqrstuv in CI", "use [REDACTED] in CI", 1},
		{"github token", "push with ghp_0123456789abcdefghijABCDEFGHIJ012345", "push with [REDACTED]", 1},
		{"github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "[REDACTED]", 1},
		{"slack token", "post via xoxb-1234567890-abcdefghij", "post via [REDACTED]", 1},
		{"aws key id", "rotate AKIAIOSFODNN7EXAMPLE now", "rotate [REDACTED] now", 1},
		{"google key", "maps AIzaSyA-0123456789abcdefghijklmnopqrstu", "maps [REDACTED]", 1},
		{"bearer", "curl -H 'Authorization: Bearer abc.def-ghi_jkl012'", "curl -H 'Authorization: Bearer [REDACTED]'", 1},
		{"jwt", "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig-nature_x", "token [REDACTED]", 1},
		{"url password", "clone https://alice:hunter2@git.example.com/repo.git", "clone https://alice:[REDACTED]@git.example.com/repo.git", 1},
		{"postgres url", "postgres://app:s3cr%21t@db:5432/x", "postgres://app:[REDACTED]@db:5432/x", 1},
		{"password=", "set DB_PASSWORD=hunter2 in env", "set DB_PASSWORD=[REDACTED] in env", 1},
		{"token= in query", "GET /cb?code=1&token=abc123&x=1", "GET /cb?code=1&token=[REDACTED]&x=1", 1},
		{"api_key quoted", `api_key="my key here" then`, `api_key=[REDACTED] then`, 1},
		{"password colon", "password: hunter2 leaked", "password: [REDACTED] leaked", 1},
		// A value quoted in pieces is one value (found by FuzzRedact: the quoted piece alone left the rest
		// for a second pass).
		{"value quoted in pieces", `PASSWORD="00"0000 and pwd: 'a'b"c" x`, `PASSWORD=[REDACTED] and pwd: [REDACTED] x`, 2},
		{"secret=", "client_secret=zzz", "client_secret=[REDACTED]", 1},
		{"private key", "-----BEGIN RSA PRIVATE KEY----- MIIE -----END RSA PRIVATE KEY----- x", "[REDACTED] x", 1},
		{"two secrets", "sk-aaaaaaaaaaaaaaaaaaaa and AKIAIOSFODNN7EXAMPLE", "[REDACTED] and [REDACTED]", 2},
		// Titles that look a little like secrets but are not.
		{"conventional auth prefix", "auth: fix login redirect", "auth: fix login redirect", 0},
		{"token prefix", "token: rename refresh helper", "token: rename refresh helper", 0},
		{"tokenizer", "tokenizer splits sk-learn names", "tokenizer splits sk-learn names", 0},
		{"commit hash", "revert 3f2a9c1d0b8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a", "revert 3f2a9c1d0b8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a", 0},
		{"url without password", "see https://example.com/a@b and git@github.com:o/r", "see https://example.com/a@b and git@github.com:o/r", 0},
		{"already redacted", "DB_PASSWORD=[REDACTED] https://u:[REDACTED]@h", "DB_PASSWORD=[REDACTED] https://u:[REDACTED]@h", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, n := RedactCount(c.in)
			if got != c.want || n != c.n {
				t.Errorf("RedactCount(%q)\n got %q (%d)\nwant %q (%d)", c.in, got, n, c.want, c.n)
			}
		})
	}
}

// secretSamples are strings that must never survive Redact, wherever they appear between spaces.
var secretSamples = []string{
	"sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA",
	"ghp_0123456789abcdefghijABCDEFGHIJ012345",
	"xoxp-0123456789-abcdefghijk",
	"AKIAIOSFODNN7EXAMPLE",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl",
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{"", "fix the parser", "password=x", "https://u:p@h/x", "Bearer abcdefghijklmnop", "auth: fix"} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, which uint8) {
		once := Redact(s)
		if twice := Redact(once); twice != once {
			t.Fatalf("Redact is not idempotent on %q:\n once %q\ntwice %q", s, once, twice)
		}
		secret := secretSamples[int(which)%len(secretSamples)]
		mid := len(s) / 2
		withSecret := s[:mid] + " " + secret + " " + s[mid:]
		if got := Redact(withSecret); strings.Contains(got, secret) {
			t.Fatalf("secret survived in %q", got)
		}
	})
}

// A title tune writes for people is bounded, redacted whole where it is kept, and says when it was cut.
func TestTaskTitleIsBounded(t *testing.T) {
	if got, cut := TaskTitle("fix the login"); got != "fix the login" || cut {
		t.Errorf("a short title: %q, cut %v", got, cut)
	}
	long := strings.Repeat("word ", 200000) // 1 MB
	got, cut := TaskTitle(long)
	if !cut || utf8.RuneCountInString(got) != MaxTitleRunes || !strings.HasSuffix(got, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("a 1 MB title: %d runes, cut %v, %.40q", utf8.RuneCountInString(got), cut, got)
	}
	secret := "ghp_" + strings.Repeat("a1B2c3D4", 5)
	got, _ = TaskTitle("token " + secret + " " + long)
	if strings.Contains(got, secret[:12]) {
		t.Errorf("the secret at the start of a long title survived: %.80q", got)
	}
	got, cut = TaskTitle(strings.Repeat("é", MaxTitleRunes))
	if cut || got != strings.Repeat("é", MaxTitleRunes) {
		t.Errorf("a title of exactly %d runes was cut", MaxTitleRunes)
	}
}
