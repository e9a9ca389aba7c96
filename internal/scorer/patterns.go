package scorer

import (
	"strings"
	"unicode/utf8"
)

// The reference scorer's regular expressions, verbatim from scripts/level_scorer.py (v0.14.0). Each list
// runs on one view of the text, exactly as the reference runs it:
//
//	lowerFold  text.lower() with re.IGNORECASE     (_any_match / _count_matches)
//	lower      text.lower() without IGNORECASE     (_count_layer_crossings)
//	origFold   the original text with IGNORECASE   (natural-language bumps)
//
// A pattern of the form \b<finite language>\b is expanded into its literal strings (regexp/syntax does
// the parsing; a \s+ inside becomes a "one or more Python spaces" gap), and the literals are indexed by
// their first word in wordtable_gen.go, which a test generates (go test -update rewrites it) and checks
// against these patterns (see TestWordTable). The few patterns with unbounded parts,
// lookahead or state across the text are matched by hand in detect.go; they are listed here too so that
// every reference pattern has exactly one entry.

type group uint8

const (
	grpGreenfield group = iota
	grpComponents
	grpCrossLayer
	grpAmbiguous
	grpBugfix
	grpKnownVerb
	grpContract
	grpInventive
	grpConservative
	grpLayer
	grpBumpMax
	grpBump2
	grpBump1
	numGroups
)

type view uint8

const (
	viewLowerFold view = iota
	viewLower
	viewOrigFold
)

// pattern is one reference regular expression.
type pattern struct {
	group group
	src   string // the Python pattern, verbatim
	// custom marks the patterns matched by hand in detect.go; the value names the matcher.
	custom custom
}

type custom uint8

const (
	literal       custom = iota // expanded from src
	cFixLookahead               // \bfix\b(?!\s+(?:forward|in place))
	cWhenDoesnt                 // \bwhen.*?(?:doesn'?t|does not)\b
	cBetweenAnd                 // \bbetween\b.*?\band\b
	cIntoTheLoop                // \binto\s+the\s+\w+\s+loop\b
	cRuleRef                    // \bR\d{1,3}\b
	cNewComponent               // \b(?:a|an|the)?\s*(?:new|novel|experimental)\s+(?:\w+\s+){0,3}(?:gate|…)\b
	cTeamOfDigit                // \bteam of \d\b
	numCustom
)

var patterns = []pattern{
	// _GREENFIELD_PATTERNS
	{group: grpGreenfield, src: `\bfrom scratch\b`},
	{group: grpGreenfield, src: `\bnew service\b`},
	{group: grpGreenfield, src: `\bnew module\b`},
	{group: grpGreenfield, src: `\bgreenfield\b`},
	{group: grpGreenfield, src: `\bno existing code\b`},
	{group: grpGreenfield, src: `\bdesign a new\b`},
	{group: grpGreenfield, src: `\bbuild a new\b`},
	{group: grpGreenfield, src: `\bdesign a novel\b`},
	{group: grpGreenfield, src: `\bprototype a novel\b`},
	{group: grpGreenfield, src: `\bdesign (?:an? )?experimental\b`},
	{group: grpGreenfield, src: `\bprototype (?:an? )?experimental\b`},

	// _EXPLICIT_BUGFIX_PATTERNS
	{group: grpBugfix, src: `\bfix\b(?!\s+(?:forward|in place))`, custom: cFixLookahead},
	{group: grpBugfix, src: `\bfailing\b`},
	{group: grpBugfix, src: `\bbroken\b`},
	{group: grpBugfix, src: `\bdoesn'?t work\b`},
	{group: grpBugfix, src: `\bdoes not work\b`},
	{group: grpBugfix, src: `\boff-by-one\b`},
	{group: grpBugfix, src: `\btypo\b`},

	// _KNOWN_SOLUTION_VERBS (single-file boundedness only)
	{group: grpKnownVerb, src: `\brename\b`},
	{group: grpKnownVerb, src: `\bmove\b`},
	{group: grpKnownVerb, src: `\bdelete\b`},
	{group: grpKnownVerb, src: `\bremove\b`},

	// _AMBIGUOUS_PATTERNS
	{group: grpAmbiguous, src: `\bsomehow\b`},
	{group: grpAmbiguous, src: `\bsomewhere\b`},
	{group: grpAmbiguous, src: `\bmaybe\b`},
	{group: grpAmbiguous, src: `\bafter my last change\b`},
	{group: grpAmbiguous, src: `\bwhen.*?(?:doesn'?t|does not)\b`, custom: cWhenDoesnt},
	{group: grpAmbiguous, src: `\bI'?m not sure\b`},
	{group: grpAmbiguous, src: `\bI don'?t know\b`},
	{group: grpAmbiguous, src: `\bno known pattern\b`},
	{group: grpAmbiguous, src: `\bno known solution\b`},
	{group: grpAmbiguous, src: `\bno existing pattern\b`},

	// _CROSS_LAYER_PATTERNS
	{group: grpCrossLayer, src: `\bacross\b`},
	{group: grpCrossLayer, src: `\bbetween\b.*?\band\b`, custom: cBetweenAnd},
	{group: grpCrossLayer, src: `\bintegrate\b`},
	{group: grpCrossLayer, src: `\bwire\b`},
	{group: grpCrossLayer, src: `\bbridge\b`},
	{group: grpCrossLayer, src: `\bhook into\b`},
	{group: grpCrossLayer, src: `\binto\s+the\s+\w+\s+loop\b`, custom: cIntoTheLoop},

	// _CONTRACT_PATTERNS
	{group: grpContract, src: `\bR\d{1,3}\b`, custom: cRuleRef},
	{group: grpContract, src: `\bschema\b`},
	{group: grpContract, src: `\bcontract\b`},
	{group: grpContract, src: `\bAPI surface\b`},
	{group: grpContract, src: `\binvariant\b`},
	{group: grpContract, src: `\bmust always\b`},
	{group: grpContract, src: `\bconfidence (?:field|threshold)\b`},
	{group: grpContract, src: `\bcritique gate\b`},
	{group: grpContract, src: `\bdeliverable_presence\b`},
	{group: grpContract, src: `\bvalidator\b`},

	// _NEW_COMPONENTS_PATTERNS (counted: the signal needs both)
	{group: grpComponents, src: `\b(?:a|an|the)?\s*(?:new|novel|experimental)\s+(?:\w+\s+){0,3}(?:gate|service|module|component|components|mechanism|mechanisms|subsystem|layer|sublevel|protocol|protocols|store|stores|system|systems|pipeline|pipelines)\b`, custom: cNewComponent},
	{group: grpComponents, src: `\b(?:recursive\s+delegation|shared\s+memory|novel\s+mechanism|partial[- ]ordering|multi-master)\b`},

	// _INVENTIVE_CUES (counted for the implicit ack)
	{group: grpInventive, src: `\bnovel\b`},
	{group: grpInventive, src: `\bresearch\b`},
	{group: grpInventive, src: `\bprototype\b`},
	{group: grpInventive, src: `\bno known pattern\b`},
	{group: grpInventive, src: `\bno known solution\b`},
	{group: grpInventive, src: `\binvent\b`},
	{group: grpInventive, src: `\bexperimental\b`},
	{group: grpInventive, src: `\bparadigm\b`},

	// _CONSERVATIVE_CUES
	{group: grpConservative, src: `\bregulated\b`},
	{group: grpConservative, src: `\bcompliance\b`},
	{group: grpConservative, src: `\bHIPAA\b`},
	{group: grpConservative, src: `\bPCI\b`},
	{group: grpConservative, src: `\bSOC2\b`},
	{group: grpConservative, src: `\bmigration of production\b`},
	{group: grpConservative, src: `\bexisting stack only\b`},
	{group: grpConservative, src: `\bno new tech\b`},
	{group: grpConservative, src: `\bon-call\b`},
	{group: grpConservative, src: `\btight deadline\b`},
	{group: grpConservative, src: `\bteam of \d\b`, custom: cTeamOfDigit},

	// _count_layer_crossings layer_terms (on text.lower(), no IGNORECASE; counted)
	{group: grpLayer, src: `\bvalidator\b`},
	{group: grpLayer, src: `\bcritique\b`},
	{group: grpLayer, src: `\bdeliverable_presence\b`},
	{group: grpLayer, src: `\bdelegation loop\b`},
	{group: grpLayer, src: `\bmanager\b`},
	{group: grpLayer, src: `\brunner\b`},
	{group: grpLayer, src: `\bscorer\b`},
	{group: grpLayer, src: `\borchestration\b`},
	{group: grpLayer, src: `\bparser\b`},
	{group: grpLayer, src: `\bruntime\b`},
	{group: grpLayer, src: `\bcore\b`},
	{group: grpLayer, src: `\bagent\b`},
	{group: grpLayer, src: `\btool\b`},
	{group: grpLayer, src: `\bmemory\b`},
	{group: grpLayer, src: `\bobservability\b`},
	{group: grpLayer, src: `\bcommunication\b`},
	{group: grpLayer, src: `\bidentity\b`},
	{group: grpLayer, src: `\bcapabilities\b`},
	{group: grpLayer, src: `\bmanifest\b`},

	// _NATURAL_BUMP_MAX, _NATURAL_BUMP_2, _NATURAL_BUMP_1 (on the original text with IGNORECASE; the list
	// order is the precedence inside a tier)
	{group: grpBumpMax, src: `\bfull LDD\b`},
	{group: grpBumpMax, src: `\buse everything\b`},
	{group: grpBumpMax, src: `\bmaximum deliberation\b`},
	{group: grpBumpMax, src: `\bvolle Kanne\b`},
	{group: grpBump2, src: `\breally think\b`},
	{group: grpBump2, src: `\bvery careful\b`},
	{group: grpBump2, src: `\bultra-careful\b`},
	{group: grpBump2, src: `\bmaximum rigor\b`},
	{group: grpBump2, src: `\bthink really hard\b`},
	{group: grpBump2, src: `\bthink thoroughly\b`},
	{group: grpBump2, src: `\bsehr sorgfältig\b`},
	{group: grpBump1, src: `\btake your time\b`},
	{group: grpBump1, src: `\bthink hard\b`},
	{group: grpBump1, src: `\bthink carefully\b`},
	{group: grpBump1, src: `\bdenk gründlich\b`},
	{group: grpBump1, src: `\bdenke gründlich\b`},
	{group: grpBump1, src: `\bsorgfältig\b`},
	{group: grpBump1, src: `\bdurchdacht\b`},
	{group: grpBump1, src: `\bcareful\b`},
}

// Other reference patterns, matched by hand in detect.go and paths.go:
//
//	_SINGLE_FILE_PATH   \b[\w./\-]+\.(?:py|ts|tsx|js|jsx|md|yaml|yml|json|toml|sh|sql|go|rs|java|rb)\b
//	_LINE_REF           \bline\s+\d+\b                    (original text, IGNORECASE)
//	new-noun count      \bnew\s+(\w+)                     (original text, IGNORECASE, finditer)
//	_OVERRIDE_EXPLICIT  \bLDD\[level=L([0-4])\]:          (IGNORECASE)
//	mode aliases        \bLDD\[mode=(architect|reactive)\]: (IGNORECASE; deprecated v0.11, still honoured)
//	_OVERRIDE_MAX       \bLDD=max:                        (IGNORECASE)
//	_OVERRIDE_PLUSPLUS  \bLDD\+\+:                        (case-sensitive)
//	_OVERRIDE_PLUS      \bLDD\+:                          (case-sensitive)

// gap stands for \s+ (one or more Python whitespace characters) inside an expanded literal.
const gap = "\x00"

// litRule is one literal alternative of a pattern: it must start at a word start and end at a boundary.
type litRule struct {
	pat int
	lit string // folded when the pattern ignores case; may contain gap
}

// wordEntry is what one word of the text can start: literal rules per view, and hand-written matchers.
type wordEntry struct {
	rules [numViews][]litRule
	hooks hook
}

// hook marks the hand-written matchers (detect.go) that a whole word triggers.
type hook uint16

const (
	hookFix          hook = 1 << iota // lowerFold: fix + lookahead
	hookBetween                       // lowerFold: between … and
	hookAnd                           // lowerFold
	hookInto                          // lowerFold: into the X loop
	hookTeam                          // lowerFold: team of N
	hookNewComponent                  // lowerFold: (a|an|the)?(new|novel|experimental) + noun
	hookLine                          // origFold: line N
	hookNew                           // origFold: new <noun>
	hookLDD                           // origFold: LDD[level=…]: / LDD[mode=…]: / LDD=max:

	lowerFoldHooks = hookFix | hookBetween | hookAnd | hookInto | hookTeam | hookNewComponent
	origFoldHooks  = hookLine | hookNew | hookLDD
)

const numViews = 3

// The words a literal or a hand-written matcher can start, with what each starts, are generated into
// wordtable_gen.go (tableWords, wordEntries and lookupWord, a switch the compiler turns into a search
// over constant strings): a literal can only match where the text's word equals the literal's first
// word, so the scan looks up each word of the text once. Built at init (the patterns parsed, then a
// map), the table was 1,838 allocations and 0.5 ms of every `tune score` process
// (docs/decisions.md#score-start-up);
// TestWordTable rebuilds it from the patterns and fails when the file disagrees.

// wordFilter is a one-hash Bloom filter of the table words: most words of a prompt are not in the
// table, and one bit test is much cheaper than a lookup.
var wordFilter [1 << 16 / 64]uint64

// filterHash mixes a word's length and its first, middle and last bytes.
func filterHash(w string) uint32 {
	n := len(w)
	h := uint32(n)*0x9e3779b1 ^ uint32(w[0])<<8 ^ uint32(w[n-1]) ^ uint32(w[n/2])<<16
	h ^= h >> 15
	h *= 0x85ebca6b
	h ^= h >> 13
	return h & (1<<16 - 1)
}

// mayBeTableWord reports false only for words that are certainly not in the table.
func mayBeTableWord(w string) bool {
	h := filterHash(w)
	return wordFilter[h/64]&(1<<(h%64)) != 0
}

// patternsOf lists the pattern indexes of each group in reference order.
var patternsOf [numGroups][]int

// custom pattern indexes, for the hand-written matchers.
var customPat [numCustom]int

func init() {
	var counts [numGroups]int
	for _, p := range patterns {
		counts[p.group]++
	}
	backing := make([]int, len(patterns)) // one allocation for every group's list
	for g, n := range counts {
		patternsOf[g], backing = backing[:0:n], backing[n:]
	}
	for i, p := range patterns {
		patternsOf[p.group] = append(patternsOf[p.group], i)
		if p.custom != literal {
			customPat[p.custom] = i
		}
	}
	for _, w := range tableWords {
		h := filterHash(w)
		wordFilter[h/64] |= 1 << (h % 64)
	}
}

// matchLiteral reports whether lit matches s at the word start p and ends at a word boundary; it
// returns the end of the match.
func matchLiteral(s string, p int, lit string) (int, bool) {
	i := p
	for {
		piece, rest, hasGap := strings.Cut(lit, gap)
		if !strings.HasPrefix(s[i:], piece) {
			return 0, false
		}
		i += len(piece)
		if !hasGap {
			break
		}
		j := spacesEnd(s, i)
		if j == i {
			return 0, false
		}
		i, lit = j, rest
	}
	// \b at the end: the word-ness of the last matched rune differs from the next one.
	last, _ := utf8.DecodeLastRuneInString(s[p:i])
	return i, isWord(last) != wordAt(s, i)
}
