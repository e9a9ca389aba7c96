package redact

import (
	"regexp/syntax"
	"strings"
	"testing"
	"unicode"
)

// example builds a string the regex matches, choosing in every character class a new character each
// time (round robin over the class), so the secret has the entropy the rule asks for; repeats take
// their minimum, or one more when that is 0 and the class is the secret.
type exampleGen struct {
	b    strings.Builder
	next map[*syntax.Regexp]int
}

func (g *exampleGen) classChar(re *syntax.Regexp) rune {
	// the ranges of a class, preferring letters and digits (what a secret is made of)
	var pool []rune
	for i := 0; i+1 < len(re.Rune); i += 2 {
		for c := re.Rune[i]; c <= re.Rune[i+1] && c < 0x80 && len(pool) < 200; c++ {
			if unicode.IsLetter(c) || unicode.IsDigit(c) {
				pool = append(pool, c)
			}
		}
	}
	if len(pool) == 0 {
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i] < 0x80 && re.Rune[i] >= 0x20 {
				pool = append(pool, re.Rune[i])
			}
		}
	}
	if len(pool) == 0 {
		return 'x'
	}
	k := g.next[re]
	g.next[re] = k + 7 // a step coprime with most pool sizes, so the string looks random
	return pool[k%len(pool)]
}

func (g *exampleGen) gen(re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				r = unicode.ToLower(r)
			}
			g.b.WriteRune(r)
		}
	case syntax.OpCharClass:
		g.b.WriteRune(g.classChar(re))
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		g.b.WriteRune('a')
	case syntax.OpCapture:
		g.gen(re.Sub[0])
	case syntax.OpConcat:
		for _, s := range re.Sub {
			g.gen(s)
		}
	case syntax.OpAlternate:
		g.gen(re.Sub[0])
	case syntax.OpStar, syntax.OpQuest:
	case syntax.OpPlus:
		g.gen(re.Sub[0])
	case syntax.OpRepeat:
		for i := 0; i < re.Min; i++ {
			g.gen(re.Sub[0])
		}
	}
}

func example(t *testing.T, expr string) string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	g := &exampleGen{next: map[*syntax.Regexp]int{}}
	g.gen(re.Simplify())
	return g.b.String()
}

// TestGitleaksCorpus: one generated example per vendored rule (a string its regex matches, carrying one
// of its keywords and the entropy it asks for) is redacted: the secret it matched is gone from the output.
func TestGitleaksCorpus(t *testing.T) {
	rs := Gitleaks()
	if len(rs.rules) < 200 {
		t.Fatalf("only %d rules compiled; skipped: %v", len(rs.rules), rs.Skipped)
	}
	if len(rs.Skipped) != 1 || !strings.HasPrefix(rs.Skipped[0], "pkcs12-file:") {
		t.Errorf("skipped rules changed (list them in gitleaks/README.md): %v", rs.Skipped)
	}
	generated, redacted := 0, 0
	for _, r := range rs.rules {
		if r.regexp() == nil {
			t.Errorf("%s: RE2 cannot compile %q (or it lacks secret group %d): list it in gitleaks/README.md", r.ID, r.expr, r.group)
			continue
		}
		ex := example(t, r.expr)
		// a keyword ahead, and spaces around, as a pasted secret in a title would have
		text := "see " + r.keywords[0] + " " + ex + " done"
		loc := r.regexp().FindStringSubmatchIndex(text)
		if loc == nil {
			t.Logf("%s: no example generated (%q)", r.ID, ex)
			continue
		}
		lo, hi := secretSpan(loc, r.group)
		secret := text[lo:hi]
		if r.entropy > 0 && shannonEntropy(secret) <= r.entropy {
			t.Logf("%s: the generated secret %q lacks the entropy %v", r.ID, secret, r.entropy)
			continue
		}
		generated++
		out := String(text)
		if strings.Contains(out, secret) && len(secret) >= 8 {
			t.Errorf("%s: %q leaks %q in %q", r.ID, text, secret, out)
			continue
		}
		redacted++
	}
	t.Logf("%d rules, %d examples generated, %d redacted", len(rs.rules), generated, redacted)
	if generated < len(rs.rules)*9/10 {
		t.Errorf("examples for only %d of %d rules", generated, len(rs.rules))
	}
}

// The forms the issue found passing through every field, and the canary of the output tests.
func TestIssueFormsAreRedacted(t *testing.T) {
	for _, c := range []struct{ text, secret string }{
		{"DB_PASS=hunter2pw", "hunter2pw"},
		{`"password": "hunter2pw"`, "hunter2pw"},
		{"glpat-xK9mP2qR7sT4vW8yZ1aB", "xK9mP2qR7sT4vW8yZ1aB"},
		{"DefaultEndpointsProtocol=https;AccountName=x;AccountKey=bG9uZ3NlY3JldGJhc2U2NGtleXZhbHVlCg==", "bG9uZ3NlY3JldGJhc2U2NGtleXZhbHVlCg"},
		{"-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBGM\n-----END PGP PRIVATE KEY BLOCK-----", "lQOYBGM"},
		{"https://hooks.slack.com/services/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", "aB3dE5fG7hI9jK1lM3nO5pQ7"},
		{"sk-ant-api03-CANARYq8Zr3Lw9Xv2Nt5Kp7Hs4Jd6Fb1Gm0Cy", "CANARYq8Zr3Lw9Xv2Nt5Kp7Hs4Jd6Fb1Gm0Cy"},
	} {
		out := String("title " + c.text + " end")
		if strings.Contains(out, c.secret) || !strings.Contains(out, Redacted) {
			t.Errorf("%q -> %q", c.text, out)
		}
	}
}
