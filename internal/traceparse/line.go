package traceparse

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MagicPrefix marks a trace entry inside free text (Tier-2 transcripts): 14 code points, 18 bytes.
const MagicPrefix = "⟪LDD-TRACE-v1⟫"

// LegacyTitle is the title the reference gives the synthetic task of the lines before the first meta.
const LegacyTitle = "(legacy-trace, no meta header)"

var bom = []byte("\ufeff")

// skipCode says why a line is not an entry.
type skipCode int

const (
	keep skipCode = iota
	skipBlank
	skipComment
	skipNoTimestamp
	skipNoLoop
	skipEmptyMagic
	skipIncomplete
)

// lineClass is the verdict on one physical line; it depends on the line's bytes alone, so reading
// forwards and backwards classify a line identically.
type lineClass struct {
	skip      skipCode
	openQuote bool // its quotes do not balance (a value may continue on the next line)
	entry     Entry
	epochSet  bool     // entry.Epoch came from an epoch= field
	notes     []string // caveats on a kept line
}

// classifier holds scratch space reused from line to line.
type classifier struct {
	toks []string
}

func (c *classifier) classify(raw []byte) (lc lineClass) {
	b := trimPy(raw)
	if bytes.HasPrefix(b, bom) { // Decision: strip a BOM (start of file, or of a log joined with cat)
		b = trimPy(b[len(bom):])
	}
	if len(b) == 0 {
		lc.skip = skipBlank
		return lc
	}
	if b[0] == '#' {
		lc.skip = skipComment
		return lc
	}
	if !utf8.Valid(b) {
		lc.notes = append(lc.notes, "not valid UTF-8: invalid bytes read as U+FFFD")
		b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	line := string(b)
	if i := strings.Index(line, MagicPrefix); i >= 0 {
		line = trimPy(line[i+len(MagicPrefix):])
		if line == "" {
			lc.skip = skipEmptyMagic
			return lc
		}
	}
	toks, err := splitPOSIX(line, c.toks[:0])
	if err != nil {
		lc.openQuote = true
		toks = fallbackSplit(line, c.toks[:0])
		defer func() {
			if lc.skip == keep {
				lc.notes = append(lc.notes, fmt.Sprintf("quotes do not balance (%v): read by a whitespace split, quoted values may be cut", err))
			}
		}()
	}
	c.toks = toks
	if !timestampLike(toks[0]) {
		lc.skip = skipNoTimestamp
		return lc
	}
	if len(toks) < 2 {
		lc.skip = skipNoLoop
		return lc
	}
	c.build(&lc, toks)
	return lc
}

// timestampLike accepts a token that starts with a date, YYYY-MM-DD. Anything else in first place is
// not an entry (most often the continuation of a value that held a newline).
func timestampLike(t string) bool {
	if len(t) < 10 || t[4] != '-' || t[7] != '-' {
		return false
	}
	for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9} {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}

// levelLabel matches the reference's ^L([0-4])/([a-z]+)$.
func levelLabel(t string) bool {
	if len(t) < 4 || t[0] != 'L' || t[1] < '0' || t[1] > '4' || t[2] != '/' {
		return false
	}
	for i := 3; i < len(t); i++ {
		if t[i] < 'a' || t[i] > 'z' {
			return false
		}
	}
	return true
}

var dispatchShort = map[string]string{
	"auto-level":         "auto",
	"user-explicit":      "explicit",
	"user-bump":          "bump",
	"user-override-down": "override-down",
}

// ShortDispatch translates the v0.10.1 long dispatch source to the short form; other values pass
// through unchanged, as in the reference.
func ShortDispatch(s string) string {
	if short, ok := dispatchShort[s]; ok {
		return short
	}
	return s
}

func validLevel(s string) bool { return len(s) == 2 && s[0] == 'L' && s[1] >= '0' && s[1] <= '4' }

// build turns the tokens of a line into an entry, following the reference _parse_line.
func (c *classifier) build(lc *lineClass, toks []string) {
	e := &lc.entry
	e.Timestamp = toks[0]
	e.Loop = toks[1]
	switch e.Loop {
	case "architect": // as the reference
		e.Loop = "design"
	case "refinement": // Decision 1.6: the reference keeps the v0.3.1 name
		e.Loop = "refine"
	}
	isMetaLoop := e.Loop == "meta"
	fields := make(map[string]string, len(toks))
	var hasClose, hasBaseline bool
	var ignored []string
	for _, tok := range toks[2:] {
		switch {
		case tok == "close":
			hasClose = true
		case tok == "baseline":
			hasBaseline = true
		case isMetaLoop && levelLabel(tok):
			fields["level"] = tok[:2]
			fields["level_name"] = tok[3:]
			if _, ok := fields["level_chosen"]; !ok { // the first label stays in level_chosen
				fields["level_chosen"] = tok[:2]
			}
		default:
			if k, v, ok := strings.Cut(tok, "="); ok {
				fields[k] = v // a later duplicate key wins
			} else {
				ignored = append(ignored, tok)
			}
		}
	}
	if len(ignored) > 0 {
		lc.notes = append(lc.notes, fmt.Sprintf("bare words ignored (no key=): %s", quoteList(ignored)))
	}
	switch {
	case hasClose:
		e.Kind = KindClose
	case hasBaseline:
		e.Kind = KindIter
		if _, ok := fields["k"]; !ok {
			fields["k"] = "0"
		}
		if _, ok := fields["baseline"]; !ok {
			fields["baseline"] = "true"
		}
	case isMetaLoop:
		e.Kind = KindMeta
	case e.Loop == "epoch":
		e.Kind = KindEpoch
	default:
		e.Kind = KindIter
	}
	e.Fields = fields
	if e.Kind == KindMeta {
		normaliseMeta(lc, fields)
		return
	}
	aliasField(fields, "loss", "loss_norm")
	aliasField(fields, "Δloss", "Δloss_norm")
	aliasField(fields, "k", "r", "o", "phase")
	if v, ok := fields["k"]; ok {
		if k, err := strconv.Atoi(v); err == nil {
			e.K = &k
		} else if e.Kind == KindIter {
			lc.notes = append(lc.notes, fmt.Sprintf("k=%q is not an integer: iteration index unknown", v))
		}
	}
	e.Baseline = fields["baseline"] == "true"
	if v, ok := fields["epoch"]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			e.Epoch, lc.epochSet = n, true
		} else {
			lc.notes = append(lc.notes, fmt.Sprintf("epoch=%q is not an integer: the task's current epoch is used", v))
		}
	}
	if v, ok := fields["loss"]; ok {
		if f, ok := parseFinite(v); ok {
			e.Loss = &f
		} else {
			lc.notes = append(lc.notes, fmt.Sprintf("loss=%q is not a number: loss unknown", v))
		}
	}
}

// normaliseMeta applies the meta-line Decisions: level_chosen → level, long dispatch_source → short
// dispatch, both only when the current key is absent.
func normaliseMeta(lc *lineClass, fields map[string]string) {
	if _, ok := fields["level"]; !ok {
		if lvl, ok := fields["level_chosen"]; ok && validLevel(lvl) {
			fields["level"] = lvl
		}
	}
	if lvl, ok := fields["level"]; ok && !validLevel(lvl) {
		lc.notes = append(lc.notes, fmt.Sprintf("level=%q is not L0..L4: level unknown", lvl))
	}
	if _, ok := fields["dispatch"]; !ok {
		if src, ok := fields["dispatch_source"]; ok {
			fields["dispatch"] = ShortDispatch(src)
		}
	}
}

// aliasField sets fields[key] from the first legacy key present, when key itself is absent.
func aliasField(fields map[string]string, key string, legacy ...string) {
	if _, ok := fields[key]; ok {
		return
	}
	for _, l := range legacy {
		if v, ok := fields[l]; ok {
			fields[key] = v
			return
		}
	}
}

// parseFinite reads a float the way the trace writes them; NaN and infinities are not losses.
func parseFinite(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func quoteList(ws []string) string {
	const max = 5
	parts := make([]string, 0, max+1)
	for i, w := range ws {
		if i == max {
			parts = append(parts, fmt.Sprintf("… (%d more)", len(ws)-max))
			break
		}
		parts = append(parts, strconv.Quote(w))
	}
	return strings.Join(parts, ", ")
}
