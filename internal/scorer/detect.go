// Package scorer is a faithful port of the LDD reference level scorer (scripts/level_scorer.py,
// loss-driven-development v0.14.0): nine signals, creativity inference, overrides, the L4→L3 clamp and
// the dispatch header, with Python's Unicode regex semantics.
//
// Detection and weighting are separate. Detect does all text work once and returns what fired; the
// weight-dependent part (sum, bucket, clamp, override, header) is Detection.Score, which does no text
// work, so replaying many weight candidates over the same prompts costs almost nothing.
package scorer

import (
	"strings"
	"unicode/utf8"

	"github.com/ldd-tools/tune/internal/weights"
)

// Creativity values, as the reference prints them.
const (
	Conservative = "conservative"
	Standard     = "standard"
	Inventive    = "inventive"
)

// OverrideKind is the user override form that decided the level, in precedence order.
type OverrideKind uint8

const (
	OverrideNone       OverrideKind = iota
	OverrideExplicit                // LDD[level=Lx]:
	OverrideModeAlias               // LDD[mode=architect|reactive]: (read as LDD[level=L3|L2]:)
	OverrideMax                     // LDD=max:
	OverridePlusPlus                // LDD++:
	OverridePlus                    // LDD+:
	OverrideNaturalMax              // "full LDD", "volle Kanne", …
	OverrideNatural2                // "really think", "sehr sorgfältig", …
	OverrideNatural1                // "take your time", "denk gründlich", … (all together count once)
)

// Override is the user override found in a prompt.
type Override struct {
	Kind OverrideKind
	// Level is the absolute level of explicit, alias and max forms.
	Level weights.Level
	// Delta is the bump of the relative forms (+1 or +2).
	Delta int
	// Fragment is what the reference reports: the matched text for explicit and alias forms and natural
	// phrases (natural +1 phrases joined as "a" + "b"), a fixed "LDD=max" / "LDD++" / "LDD+" otherwise.
	Fragment string
}

// Absolute reports whether the override sets a level rather than bumping the scorer's.
func (o Override) Absolute() bool {
	switch o.Kind {
	case OverrideExplicit, OverrideModeAlias, OverrideMax, OverrideNaturalMax:
		return true
	}
	return false
}

// Detection is what fired in a text; a pure function of text and file history, independent of weights.
type Detection struct {
	// Fired lists the signals that fired, in the reference scorer's output order.
	Fired []weights.Signal
	// Creativity is the inferred creativity: conservative, standard or inventive.
	Creativity string
	// ImplicitAck is the reference's has_implicit_ack: ≥ 2 inventive cues in a prompt of ≥ 100 code
	// points. The reference computes it but never prints it; it is kept for callers.
	ImplicitAck bool
	// Override is the highest-precedence user override, nil when there is none.
	Override *Override
}

// detector holds the per-text scratch state of Detect.
type detector struct {
	text    string
	v       views
	hit     [numPatterns]bool
	first   [numPatterns][2]int // first match (start, end) in origFold, for natural bumps
	nouns   map[string]struct{} // distinct lowercased words after "new"
	lineRef bool
	// overrides found in origFold: first match of each form
	explicit, alias, max [2]int
	explicitLevel        weights.Level
	aliasLevel           weights.Level
}

// numPatterns sizes the detector's arrays; init checks it against the pattern table.
const numPatterns = 108

func init() {
	if len(patterns) != numPatterns {
		panic("scorer: numPatterns must equal len(patterns)")
	}
}

// Detect finds the signals, creativity and override of text. history lists files touched in recent
// tasks; nil or empty means no history, and unknown-file-territory never fires (as in the reference).
func Detect(text string, history []string) Detection {
	d := detector{text: text, v: makeViews(text)}
	d.explicit, d.alias, d.max = [2]int{-1}, [2]int{-1}, [2]int{-1}
	if d.v.origAt == nil { // ASCII: the three views are one string
		d.scan(d.v.lowerFold, maskLowerFold|maskLower|maskOrigFold)
	} else {
		d.scan(d.v.lowerFold, maskLowerFold)
		d.scan(d.v.lower, maskLower)
		d.scan(d.v.origFold, maskOrigFold)
	}

	paths := ExtractPaths(text)
	var out Detection
	fired := make([]weights.Signal, 0, 4)
	if d.any(grpGreenfield) {
		fired = append(fired, weights.Greenfield)
	}
	if d.count(grpComponents) >= 2 || len(d.nouns) >= 3 {
		fired = append(fired, weights.Components)
	}
	if d.any(grpCrossLayer) {
		fired = append(fired, weights.CrossLayer)
	}
	if d.any(grpAmbiguous) {
		fired = append(fired, weights.Ambiguous)
	}
	bugfix := d.any(grpBugfix)
	if bugfix {
		fired = append(fired, weights.ExplicitBugfix)
	}
	// _is_single_file_known_solution: exactly one path occurrence (duplicates count) and a line ref, a
	// bugfix cue or a rename/move/delete/remove verb.
	if len(paths) == 1 && (d.lineRef || bugfix || d.any(grpKnownVerb)) {
		fired = append(fired, weights.SingleFile)
	}
	if d.count(grpLayer) >= 2 {
		fired = append(fired, weights.LayerCrossings)
	}
	if d.any(grpContract) {
		fired = append(fired, weights.ContractRuleHit)
	}
	if len(history) > 0 && unknownFileTerritory(paths, history) {
		fired = append(fired, weights.UnknownFileTerritory)
	}
	out.Fired = fired

	switch {
	case d.any(grpConservative):
		out.Creativity = Conservative
	case d.any(grpInventive):
		out.Creativity = Inventive
	default:
		out.Creativity = Standard
	}
	// len(text) in Python counts code points, not bytes.
	out.ImplicitAck = d.count(grpInventive) >= 2 && utf8.RuneCountInString(text) >= 100
	out.Override = d.override()
	return out
}

func (d *detector) any(g group) bool {
	for _, i := range patternsOf[g] {
		if d.hit[i] {
			return true
		}
	}
	return false
}

func (d *detector) count(g group) int {
	n := 0
	for _, i := range patternsOf[g] {
		if d.hit[i] {
			n++
		}
	}
	return n
}

// unknownFileTerritory: a path of the text whose lowercase is not among the lowercased history entries.
func unknownFileTerritory(paths, history []string) bool {
	if len(paths) == 0 {
		return false
	}
	known := make(map[string]struct{}, len(history))
	for _, h := range history {
		known[pyLower(h)] = struct{}{}
	}
	for _, p := range paths {
		if _, ok := known[pyLower(p)]; !ok {
			return true
		}
	}
	return false
}

// nextWord finds the next word start at or after i; it reports whether a '\n' was passed on the way.
func nextWord(s string, i int) (start int, newline bool) {
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiWord[c] {
				return i, newline
			}
			if c == '\n' {
				newline = true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if isWord(r) {
			return i, newline
		}
		i += n
	}
	return len(s), newline
}

// fixForwardOrInPlace is the negative lookahead (?!\s+(?:forward|in place)) after a whole-word "fix"
// ending at i. The lookahead's \s+ is Python's (NBSP and tabs count); "in place" needs exactly one space.
// Each "fix" is judged on its own, so a later "fix" still counts after a "fix forward".
func fixForwardOrInPlace(s string, i int) bool {
	j := spacesEnd(s, i)
	if j == i {
		return false
	}
	return strings.HasPrefix(s[j:], "forward") || strings.HasPrefix(s[j:], "in place")
}

// doesntAfter looks in s[from:to] for doesn't / doesnt / does not followed by \b; no \b is needed before.
func doesntAfter(s string, from, to int) bool {
	seg := s[:to]
	for i := from; i < to; {
		k := strings.Index(seg[i:], "does")
		if k < 0 {
			return false
		}
		k += i
		for _, alt := range [...]string{"doesn't", "doesnt", "does not"} {
			if e := k + len(alt); strings.HasPrefix(seg[k:], alt) && !wordAt(s, e) {
				return true
			}
		}
		i = k + 1
	}
	return false
}

// intoTheLoop matches \s+the\s+\w+\s+loop\b after a whole-word "into" ending at i. \w+ is followed by
// \s+, so it is a whole word.
func intoTheLoop(s string, i int) bool {
	j := spacesEnd(s, i)
	if j == i || !strings.HasPrefix(s[j:], "the") {
		return false
	}
	j += len("the")
	k := spacesEnd(s, j)
	if k == j {
		return false
	}
	w := wordEnd(s, k)
	if w == k {
		return false
	}
	l := spacesEnd(s, w)
	if l == w || !strings.HasPrefix(s[l:], "loop") {
		return false
	}
	return !wordAt(s, l+len("loop"))
}

// teamOfDigit matches " of " + one \d + \b after a whole-word "team" ending at i.
func teamOfDigit(s string, i int) bool {
	if !strings.HasPrefix(s[i:], " of ") {
		return false
	}
	j := i + len(" of ")
	if _, n := digitsEnd(s, j); n == 0 {
		return false
	}
	_, size := utf8.DecodeRuneInString(s[j:])
	return !wordAt(s, j+size) // exactly one digit, then \b: the digit is a word character, so a non-word one
}

// ruleRef matches \bR\d{1,3}\b on a whole word: "r" and one to three \d characters.
func ruleRef(tok string) bool {
	end, n := digitsEnd(tok, 1)
	return end == len(tok) && n >= 1 && n <= 3
}

var componentNouns = []string{"gate", "service", "module", "component", "components", "mechanism", "mechanisms", "subsystem", "layer", "sublevel", "protocol", "protocols", "store", "stores", "system", "systems", "pipeline", "pipelines"}

// newComponentTail matches \s+(?:\w+\s+){0,3}(?:gate|service|…)\b after the keyword ending at i.
func newComponentTail(s string, i int) bool {
	q := spacesEnd(s, i)
	if q == i {
		return false
	}
	for k := 0; k <= 3; k++ {
		for _, noun := range componentNouns {
			if strings.HasPrefix(s[q:], noun) && !wordAt(s, q+len(noun)) {
				return true
			}
		}
		if k == 3 {
			break
		}
		w := wordEnd(s, q)
		next := spacesEnd(s, w)
		if w == q || next == w {
			return false
		}
		q = next
	}
	return false
}

type viewMask uint8

const (
	maskLowerFold viewMask = 1 << viewLowerFold
	maskLower     viewMask = 1 << viewLower
	maskOrigFold  viewMask = 1 << viewOrigFold
)

// scan walks the words of s once and runs every pattern of the views in mask. For ASCII text the three
// views are the same string and one scan does all the work.
//
//	lowerFold  the IGNORECASE patterns on text.lower() (most signals)
//	lower      the layer terms, on text.lower() without IGNORECASE
//	origFold   the patterns on the original text with IGNORECASE: natural bumps (first match of each, for
//	           the fragment), the line reference, the new-noun count and the explicit/alias/max overrides
func (d *detector) scan(s string, mask viewMask) {
	lowerFold, origFold := mask&maskLowerFold != 0, mask&maskOrigFold != 0
	betweenOnLine := false // a whole-word "between" earlier on this line (.*? does not cross \n)
	whenSearched := -1     // the "when … doesn't" search already covered s[:whenSearched]
	nounsFrom := 0         // finditer does not overlap: a word consumed as a noun cannot start the next match
	for i := 0; ; {
		p, nl := nextWord(s, i)
		if p == len(s) {
			return
		}
		if nl {
			betweenOnLine = false
		}
		e := wordEnd(s, p)
		i = e
		tok := s[p:e]
		if lowerFold {
			// \bwhen has no \b after it ("whenever" counts). Only the first such word of a line needs a
			// search: a later one on the same line sees a subset of the same text.
			if p >= whenSearched && strings.HasPrefix(tok, "when") {
				lineEnd := strings.IndexByte(s[p:], '\n')
				if lineEnd < 0 {
					lineEnd = len(s)
				} else {
					lineEnd += p
				}
				if doesntAfter(s, p+len("when"), lineEnd) {
					d.hit[customPat[cWhenDoesnt]] = true
				}
				whenSearched = lineEnd
			}
			if tok[0] == 'r' && ruleRef(tok) {
				d.hit[customPat[cRuleRef]] = true
			}
		}
		if !mayBeTableWord(tok) {
			continue
		}
		w := lookupWord(tok)
		if w == nil {
			continue
		}
		for v := range numViews {
			if mask&(1<<v) == 0 {
				continue
			}
			for _, r := range w.rules[v] {
				if d.hit[r.pat] {
					continue
				}
				if end, ok := matchLiteral(s, p, r.lit); ok {
					d.hit[r.pat] = true
					d.first[r.pat] = [2]int{p, end}
				}
			}
		}
		if w.hooks == 0 {
			continue
		}
		if lowerFold && w.hooks&lowerFoldHooks != 0 {
			switch {
			case w.hooks&hookFix != 0:
				if !fixForwardOrInPlace(s, e) {
					d.hit[customPat[cFixLookahead]] = true
				}
			case w.hooks&hookBetween != 0:
				betweenOnLine = true
			case w.hooks&hookAnd != 0:
				if betweenOnLine {
					d.hit[customPat[cBetweenAnd]] = true
				}
			case w.hooks&hookInto != 0:
				if intoTheLoop(s, e) {
					d.hit[customPat[cIntoTheLoop]] = true
				}
			case w.hooks&hookTeam != 0:
				if teamOfDigit(s, e) {
					d.hit[customPat[cTeamOfDigit]] = true
				}
			}
			if w.hooks&hookNewComponent != 0 && newComponentTail(s, e) {
				d.hit[customPat[cNewComponent]] = true
			}
		}
		if origFold && w.hooks&origFoldHooks != 0 {
			switch {
			case w.hooks&hookLine != 0:
				// \bline\s+\d+\b
				j := spacesEnd(s, e)
				if end, n := digitsEnd(s, j); j > e && n > 0 && !wordAt(s, end) {
					d.lineRef = true
				}
			case w.hooks&hookNew != 0:
				// \bnew\s+(\w+), each group lowercased with str.lower()
				if p >= nounsFrom {
					q := spacesEnd(s, e)
					if end := wordEnd(s, q); q > e && end > q {
						if d.nouns == nil {
							d.nouns = map[string]struct{}{}
						}
						d.nouns[pyLower(d.v.original(d.text, q, end))] = struct{}{}
						nounsFrom = end
					}
				}
			case w.hooks&hookLDD != 0:
				d.overrideAt(s, p)
			}
		}
	}
}

// overrideAt records the first explicit, alias and max override starting at the whole word "ldd" at p.
func (d *detector) overrideAt(s string, p int) {
	rest := s[p:]
	if d.explicit[0] < 0 && len(rest) >= len("ldd[level=l0]:") && strings.HasPrefix(rest, "ldd[level=l") &&
		rest[11] >= '0' && rest[11] <= '4' && rest[12:14] == "]:" {
		d.explicit = [2]int{p, p + 14}
		d.explicitLevel = weights.Level(rest[11] - '0')
	}
	if d.alias[0] < 0 {
		for _, a := range [...]struct {
			lit   string
			level weights.Level
		}{{"ldd[mode=architect]:", weights.L3}, {"ldd[mode=reactive]:", weights.L2}} {
			if strings.HasPrefix(rest, a.lit) {
				d.alias = [2]int{p, p + len(a.lit)}
				d.aliasLevel = a.level
			}
		}
	}
	if d.max[0] < 0 && strings.HasPrefix(rest, "ldd=max:") {
		d.max = [2]int{p, p + len("ldd=max:")}
	}
}

// caseSensitiveOverride reports whether lit (LDD++: or LDD+:) occurs in text after a word boundary.
func caseSensitiveOverride(text, lit string) bool {
	for i := 0; ; {
		k := strings.Index(text[i:], lit)
		if k < 0 {
			return false
		}
		k += i
		if !wordBefore(text, k) { // the literal starts with a word character
			return true
		}
		i = k + 1
	}
}

// override applies the reference precedence: explicit > alias > max > ++ > + > natural max > natural +2 >
// natural +1 (all +1 phrases that occur, in list order).
func (d *detector) override() *Override {
	orig := func(m [2]int) string { return d.v.original(d.text, m[0], m[1]) }
	switch {
	case d.explicit[0] >= 0:
		return &Override{Kind: OverrideExplicit, Level: d.explicitLevel, Fragment: orig(d.explicit)}
	case d.alias[0] >= 0:
		return &Override{Kind: OverrideModeAlias, Level: d.aliasLevel, Fragment: orig(d.alias)}
	case d.max[0] >= 0:
		return &Override{Kind: OverrideMax, Level: weights.L4, Fragment: "LDD=max"}
	case caseSensitiveOverride(d.text, "LDD++:"):
		return &Override{Kind: OverridePlusPlus, Delta: 2, Fragment: "LDD++"}
	case caseSensitiveOverride(d.text, "LDD+:"):
		return &Override{Kind: OverridePlus, Delta: 1, Fragment: "LDD+"}
	}
	for _, i := range patternsOf[grpBumpMax] {
		if d.hit[i] {
			return &Override{Kind: OverrideNaturalMax, Level: weights.L4, Fragment: orig(d.first[i])}
		}
	}
	for _, i := range patternsOf[grpBump2] {
		if d.hit[i] {
			return &Override{Kind: OverrideNatural2, Delta: 2, Fragment: orig(d.first[i])}
		}
	}
	var frags []string
	for _, i := range patternsOf[grpBump1] {
		if d.hit[i] {
			frags = append(frags, `"`+orig(d.first[i])+`"`)
		}
	}
	if frags != nil {
		return &Override{Kind: OverrideNatural1, Delta: 1, Fragment: strings.Join(frags, " + ")}
	}
	return nil
}
