package redact

import (
	_ "embed"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// GitleaksVersion is the gitleaks release whose default rules are vendored in gitleaks/ (with its MIT
// licence): a maintained ruleset of about 220 vendor formats, used beside the hand-written patterns of
// redact.go, which catch what a rule set for source files does not (fragments of a cut title, short
// key=value passwords). See gitleaks/README.md and docs/decisions.md#hostile-files-issue-25.
const GitleaksVersion = "v8.30.1"

//go:embed gitleaks/gitleaks.toml
var gitleaksTOML string

// rule is one gitleaks rule as tune applies it: the regex, the capture group that holds the secret (0
// for the whole match), the least Shannon entropy the secret must have (0: none), and the keywords, one
// of which must occur in the text (case-insensitively) before the regex is tried.
type rule struct {
	ID string
	// expr is compiled on the rule's first use (see regexp): compiling all 221 took ~80 ms, the whole
	// start-up of a `tune trace`, and most runs need two or three rules.
	expr     string
	once     sync.Once
	re       *regexp.Regexp
	group    int
	entropy  float64
	keywords []string
	// assigns: the regex is gitleaks' key-value template, keyword, then at most 23 name or space
	// characters, then an operator (`=`, `:`, `>`, `,`, `|` …): a keyword with none of those in the 24
	// bytes after it cannot start a match. These rules (the generic one first) are the slow ones, ~20 µs a
	// title in the NFA where the whole hand-written set takes 1 µs; a file path like auth/jwt.go skips them.
	assigns bool
}

// assignOperator is the operator group of gitleaks' key-value rule template.
const assignOperator = `(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`

// ruleset is the compiled gitleaks rules with a keyword index: slot maps the first two bytes (lower-cased)
// of every keyword to 1 + its index in byPair (0: no keyword starts so), which lists the keywords starting
// so, each with the rules that need it. An array, not a map: the lookup runs for every byte of every
// redacted field, and hashing was half the cost.
type ruleset struct {
	rules []*rule
	// Skipped names the rules that are not used, with why (in v8.30.1 only pkcs12-file, which matches
	// file paths, not text). A regex RE2 could not compile would leave its rule unused too; the corpus
	// test checks that every one compiles.
	Skipped []string
	slot    [1 << 16]uint8
	byPair  [][]keyword
}

type keyword struct {
	text  string // lower case
	rules []int
}

// Gitleaks returns the compiled ruleset (compiled on first use: it costs milliseconds, and most tune
// processes never redact).
var Gitleaks = sync.OnceValue(func() *ruleset {
	rs, err := compileRules(gitleaksTOML)
	if err != nil {
		panic("redact: the vendored gitleaks.toml does not load: " + err.Error()) // a build defect
	}
	return rs
})

func compileRules(text string) (*ruleset, error) {
	var cfg struct {
		Rules []struct {
			ID          string   `toml:"id"`
			Regex       string   `toml:"regex"`
			SecretGroup int      `toml:"secretGroup"`
			Entropy     float64  `toml:"entropy"`
			Keywords    []string `toml:"keywords"`
		} `toml:"rules"`
	}
	if _, err := toml.Decode(text, &cfg); err != nil {
		return nil, err
	}
	rs := &ruleset{}
	kwIndex := map[string]int{} // keyword -> index in its byPair list
	for _, r := range cfg.Rules {
		if r.Regex == "" {
			rs.Skipped = append(rs.Skipped, r.ID+": no regex (a rule on file paths)")
			continue
		}
		if len(r.Keywords) == 0 {
			rs.Skipped = append(rs.Skipped, r.ID+": no keywords")
			continue
		}
		idx := len(rs.rules)
		rs.rules = append(rs.rules, &rule{ID: r.ID, expr: r.Regex, group: r.SecretGroup, entropy: r.Entropy, keywords: r.Keywords,
			assigns: strings.Contains(r.Regex, assignOperator)})
		for _, k := range r.Keywords {
			k = strings.ToLower(k)
			if len(k) < 2 {
				return nil, fmt.Errorf("rule %s: keyword %q is shorter than 2 bytes", r.ID, k)
			}
			p := pairOf(k[0], k[1])
			if rs.slot[p] == 0 {
				if len(rs.byPair) == 255 {
					return nil, fmt.Errorf("more than 255 keyword prefixes: widen ruleset.slot")
				}
				rs.byPair = append(rs.byPair, nil)
				rs.slot[p] = uint8(len(rs.byPair))
			}
			list := &rs.byPair[rs.slot[p]-1]
			i, ok := kwIndex[k]
			if !ok {
				i = len(*list)
				kwIndex[k] = i
				*list = append(*list, keyword{text: k})
			}
			(*list)[i].rules = append((*list)[i].rules, idx)
		}
	}
	return rs, nil
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func pairOf(a, b byte) uint16 { return uint16(lowerASCII(a))<<8 | uint16(lowerASCII(b)) }

// candidates lists the rules one of whose keywords occurs in s (ASCII case-insensitively; for a
// key-value rule, followed closely by an operator), each once: one pass over s with a 64 KiB table lookup
// per byte, so text without a keyword costs no regex.
func (rs *ruleset) candidates(s string) []int {
	var out []int
	for i := 0; i+1 < len(s); i++ {
		slot := rs.slot[pairOf(s[i], s[i+1])]
		if slot == 0 {
			continue
		}
		for _, k := range rs.byPair[slot-1] {
			if !hasPrefixLower(s[i:], k.text) {
				continue
			}
			for _, r := range k.rules {
				if rs.rules[r].assigns && !operatorNear(s[i+len(k.text):]) {
					continue
				}
				if !slices.Contains(out, r) { // a few rules at most: a scan beats a map
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// regexp is the rule's compiled regex, nil when RE2 cannot compile it or it lacks the secret group.
func (r *rule) regexp() *regexp.Regexp {
	r.once.Do(func() {
		if re, err := regexp.Compile(r.expr); err == nil && r.group <= re.NumSubexp() {
			r.re = re
		}
	})
	return r.re
}

// operatorNear reports whether one of the key-value template's operator characters occurs within the
// first 24 bytes of s (see rule.assigns).
func operatorNear(s string) bool {
	return strings.ContainsAny(s[:min(len(s), 24)], "=>:,|")
}

// hasPrefixLower reports whether s starts with the lower-case prefix, ASCII letters in any case.
func hasPrefixLower(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lowerASCII(s[i]) != prefix[i] {
			return false
		}
	}
	return true
}

// redact replaces, in s, the secret of every match of the candidate rules (the secret group, or the first
// non-empty group, or the whole match, as gitleaks reports it) whose entropy is above the rule's.
func (rs *ruleset) redact(s string) (string, int) {
	n := 0
	for _, ri := range rs.candidates(s) {
		r := rs.rules[ri]
		re := r.regexp()
		if re == nil {
			continue
		}
		locs := re.FindAllStringSubmatchIndex(s, -1)
		if locs == nil {
			continue
		}
		var b strings.Builder
		last := 0
		for _, loc := range locs {
			lo, hi := secretSpan(loc, r.group)
			if lo < last || s[lo:hi] == Redacted || (r.entropy > 0 && shannonEntropy(s[lo:hi]) <= r.entropy) {
				continue
			}
			b.WriteString(s[last:lo])
			b.WriteString(Redacted)
			last = hi
			n++
		}
		if last > 0 {
			b.WriteString(s[last:])
			s = b.String()
		}
	}
	return s, n
}

// secretSpan is the span of the secret in one match: group when set, else the first non-empty group,
// else the whole match (gitleaks' own choice).
func secretSpan(loc []int, group int) (int, int) {
	if group > 0 && 2*group+1 < len(loc) && loc[2*group] >= 0 {
		return loc[2*group], loc[2*group+1]
	}
	for g := 1; 2*g+1 < len(loc); g++ {
		if loc[2*g] >= 0 && loc[2*g+1] > loc[2*g] {
			return loc[2*g], loc[2*g+1]
		}
	}
	return loc[0], loc[1]
}

// shannonEntropy is gitleaks' measure of how random a secret looks (bits per character).
func shannonEntropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := map[rune]int{}
	for _, c := range s {
		counts[c]++
	}
	e := 0.0
	inv := 1 / float64(len(s))
	for _, c := range counts {
		f := float64(c) * inv
		e -= f * math.Log2(f)
	}
	return e
}
