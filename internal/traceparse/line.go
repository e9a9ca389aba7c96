package traceparse

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ldd-tools/tune/internal/weights"
)

// MagicPrefix marks a trace entry inside free text (Tier-2 transcripts): 14 code points, 18 bytes.
const MagicPrefix = "⟪LDD-TRACE-v1⟫"

// LegacyTitle is the title the reference gives the synthetic task of the lines before the first meta.
const LegacyTitle = "(legacy-trace, no meta header)"

var (
	bom         = []byte("\ufeff")
	magicPrefix = []byte(MagicPrefix)
)

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
	taskKeys  bool     // it has files=, regression_followed= or regression_of=
	head      metaHead // what a meta line says about its task
	notes     []string // caveats on a kept line
}

// classifier holds scratch space reused from line to line, and slabs for the small values entries
// point to (one allocation per 1024 values instead of one each; the parser is allocation-bound).
type classifier struct {
	buf    []byte
	spans  []span
	toks   []string
	ints   slab[int]
	floats slab[float64]
}

type slab[T any] struct{ free []T }

func (s *slab[T]) new(v T) *T {
	if len(s.free) == 0 {
		s.free = make([]T, 1024)
	}
	p := &s.free[0]
	*p, s.free = v, s.free[1:]
	return p
}

// classify fills lc with the verdict on the line raw.
func (c *classifier) classify(raw []byte, lc *lineClass) {
	*lc = lineClass{}
	b := trimPy(raw)
	if bytes.HasPrefix(b, bom) { // Decision: strip a BOM (start of file, or of a log joined with cat)
		b = trimPy(b[len(bom):])
	}
	if len(b) == 0 {
		lc.skip = skipBlank
		return
	}
	if b[0] == '#' {
		lc.skip = skipComment
		return
	}
	if !utf8.Valid(b) {
		lc.notes = append(lc.notes, "not valid UTF-8: invalid bytes read as U+FFFD")
		b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	if i := bytes.Index(b, magicPrefix); i >= 0 {
		b = trimPy(b[i+len(magicPrefix):])
		if len(b) == 0 {
			lc.skip = skipEmptyMagic
			return
		}
	}
	var toks []string
	var err error
	c.buf = append(c.buf[:0], b...)
	if c.buf, c.spans, err = tokenize(c.buf, len(b), c.spans[:0]); err == nil {
		// One string holds the line and its unquoted tokens; every token and field slices it.
		toks = appendTokens(c.toks[:0], string(c.buf), c.spans)
	} else {
		lc.openQuote = true
		toks = fallbackSplit(string(b), c.toks[:0])
		defer func() {
			if lc.skip == keep {
				lc.notes = append(lc.notes, fmt.Sprintf("quotes do not balance (%v): read by a whitespace split, quoted values may be cut", err))
			}
		}()
	}
	c.toks = toks
	if !timestampLike(toks[0]) {
		lc.skip = skipNoTimestamp
		return
	}
	if len(toks) < 2 {
		lc.skip = skipNoLoop
		return
	}
	c.build(lc, toks)
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
	// Size hint: one field per token after the timestamp and loop, two more for a meta label's
	// synthesised keys. Up to 8 fields fit Go's small map (one allocation); an overestimate past 8
	// would allocate a full table.
	hint := len(toks) - 2
	if isMetaLoop {
		hint += 2
	}
	fields := make(map[string]string, hint)
	// The keys the typed fields and the legacy aliases need are noted while the tokens go by, so
	// they cost no map lookups afterwards (the parser spends most of its time on the map).
	var k, loss, lossNorm, dloss, dlossNorm, legacyK, epoch, baseline optional
	var hasClose, hasBaseline, hasLevelChosen bool
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
			if !hasLevelChosen { // the first label stays in level_chosen
				fields["level_chosen"], hasLevelChosen = tok[:2], true
			}
		default:
			key, v, ok := strings.Cut(tok, "=")
			if !ok {
				ignored = append(ignored, tok)
				continue
			}
			fields[key] = v // a later duplicate key wins
			switch key {
			case "k":
				k.set(v)
			case "loss":
				loss.set(v)
			case "loss_norm":
				lossNorm.set(v)
			case "Δloss":
				dloss.set(v)
			case "Δloss_norm":
				dlossNorm.set(v)
			case "r", "o", "phase":
				legacyK.set(v)
			case "epoch":
				epoch.set(v)
			case "baseline":
				baseline.set(v)
			case "level_chosen":
				hasLevelChosen = true
			case "files", "regression_followed", "regression_of":
				lc.taskKeys = true
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
		k.alias(fields, "k", optional{"0", true})
		baseline.alias(fields, "baseline", optional{"true", true})
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
		lc.head.read(lc, e)
		return
	}
	loss.alias(fields, "loss", lossNorm)
	dloss.alias(fields, "Δloss", dlossNorm)
	k.alias(fields, "k", legacyK)
	if k.ok {
		if n, err := strconv.Atoi(k.v); err == nil {
			e.K = c.ints.new(n)
		} else if e.Kind == KindIter {
			lc.notes = append(lc.notes, fmt.Sprintf("k=%q is not an integer: iteration index unknown", k.v))
		}
	}
	e.Baseline = baseline.v == "true"
	if epoch.ok {
		if n, err := strconv.Atoi(epoch.v); err == nil {
			e.Epoch, lc.epochSet = n, true
		} else {
			lc.notes = append(lc.notes, fmt.Sprintf("epoch=%q is not an integer: the task's current epoch is used", epoch.v))
		}
	}
	if loss.ok {
		if f, ok := parseFinite(loss.v); ok {
			e.Loss = c.floats.new(f)
		} else {
			lc.notes = append(lc.notes, fmt.Sprintf("loss=%q is not a number: loss unknown", loss.v))
		}
	}
}

// optional is a field value noted while tokenising; ok says the key was present.
type optional struct {
	v  string
	ok bool
}

func (o *optional) set(v string) { *o = optional{v, true} }

// alias gives fields[key] the value of from when key is absent (a legacy spelling or a synthesised
// default), and notes it.
func (o *optional) alias(fields map[string]string, key string, from optional) {
	if !o.ok && from.ok {
		fields[key] = from.v
		*o = from
	}
}

// metaHead is what a meta line says about the task it opens. It is worked out while classifying
// (in parallel) so that the in-order segmentation only copies it.
type metaHead struct {
	time                                               time.Time // zero unless RFC 3339
	level, dispatch, creativity, title, weightsVersion string
	loops                                              []string
	signals                                            []SignalWeight
	hasSignals                                         bool
}

func (h *metaHead) read(lc *lineClass, e *Entry) {
	f := e.Fields
	h.time = parseMetaTime(lc, e.Timestamp)
	if lvl := f["level"]; validLevel(lvl) {
		h.level = lvl
	}
	h.dispatch = ShortDispatch(f["dispatch"])
	h.creativity = f["creativity"]
	h.title = f["task"]
	for l := range strings.SplitSeq(f["loops"], ",") {
		if l = trimPy(l); l != "" {
			h.loops = append(h.loops, l)
		}
	}
	if raw, ok := f["signals"]; ok {
		var problems []string
		h.hasSignals = true
		h.signals, problems = ParseSignals(raw)
		lc.notes = append(lc.notes, problems...)
	}
	if v, ok := f["weights"]; ok {
		h.weightsVersion = v
		if _, err := weights.ParseVersionName(v); err != nil {
			lc.notes = append(lc.notes, "weights="+err.Error())
		}
	}
}

// parseMetaTime reads the timestamp of a line that opens a task; one that is not RFC 3339 is kept
// and noted, and the task stays out of time windows (Decision 1.10.6).
func parseMetaTime(lc *lineClass, ts string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		lc.notes = append(lc.notes, fmt.Sprintf("timestamp %q is not RFC 3339: the task is left out of time windows", ts))
	}
	return t
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
