package traceparse

import (
	"bytes"
	"encoding/binary"
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
	skipTooLong
)

// maxLineBytes bounds a line so that the offsets of its fields fit in 32 bits with room for its
// unquoted tokens; no writer produces lines anywhere near it.
const maxLineBytes = 1 << 30

// lineClass is the verdict on one physical line; it depends on the line's bytes alone, so reading
// forwards and backwards classify a line identically.
type lineClass struct {
	skip      skipCode
	openQuote bool // its quotes do not balance (a value may continue on the next line)
	bom       bool // a UTF-8 BOM was stripped from its start
	magic     bool // it was read from after the Tier-2 magic prefix
	entry     int  // index of its entry in the batch's entries (parallel reads)
	epochSet  bool // entry.Epoch came from an epoch= field
	// task holds its keys that describe its task (noTaskKeys when it has none) and head what a meta
	// line says about its task, from the entryMemory of its entry: most lines have neither, and a batch
	// holds a class per line (docs/decisions.md#streaming-reads).
	task  *taskKeys
	head  *metaHead
	notes []string // caveats on a kept line
	size  int      // the line's length in bytes
}

// noTaskKeys is the task of a line without task-level keys; never written.
var noTaskKeys taskKeys

// taskKeys are the task-level keys a line may hold. They are read while classifying, from cache-hot
// text, so that the in-order pass never goes back to the entry's fields.
type taskKeys struct {
	any                                     bool // it has files=, regression_followed= or regression_of=
	terminal, lossFinal                     string
	hasLossFinal                            bool
	files, regressionFollowed, regressionOf string
	hasFiles, hasRegressionFollowed         bool
}

// classifier holds scratch space reused from line to line and the entryMemory its lines' text and small
// values go to. The parser is allocation-bound: with these a line costs no allocation of its own, only a
// share of large blocks.
type classifier struct {
	entryMemory
	base  int    // offset in text of the current line's text
	line  string // the current line's text so far: its bytes, unquoted tokens, synthesised keys
	spans []span // its tokens
	pos   []fieldPos
	// index finds a key among pos once a line has more than manyFields fields, so that a line of
	// thousands of fields costs linear time, as a map would.
	index   map[string]int
	indexed bool
	keyMask uint64 // a bit per key of pos (keyBit): a key whose bit is clear is not there
	loops   []string
	sigs    []weights.SignalWeight
}

const manyFields = 32

// synthesisedRoom bounds the text build adds to a line: each synthesised key (level, level_name,
// level_chosen, k, baseline, loss, Δloss, dispatch) once, plus the values 0, true and a short
// dispatch.
const synthesisedRoom = 128

// classify fills lc with the verdict on the line raw and, when it is kept, e with its entry. e must
// be zero: entries are built in place, in the arrays that tasks then slice.
func (c *classifier) classify(raw []byte, lc *lineClass, e *Entry) {
	*lc = lineClass{size: len(raw)}
	b := trimPy(raw)
	if bytes.HasPrefix(b, bom) { // Decision: strip a BOM (start of file, or of a log joined with cat)
		b = trimPy(b[len(bom):])
		lc.bom = true
	}
	if len(b) == 0 {
		lc.skip = skipBlank
		return
	}
	if b[0] == '#' {
		lc.skip = skipComment
		return
	}
	if !validUTF8(b) {
		lc.notes = append(lc.notes, "not valid UTF-8: invalid bytes read as U+FFFD")
		b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	}
	if i := bytes.Index(b, magicPrefix); i >= 0 {
		b = trimPy(b[i+len(magicPrefix):])
		lc.magic = true
		if len(b) == 0 {
			lc.skip = skipEmptyMagic
			return
		}
	}
	if len(b) > maxLineBytes {
		lc.skip = skipTooLong
		return
	}
	// The line's text: its bytes, then the unquoted text of its quoted tokens (at most its length;
	// twice that when the quotes do not balance and it is split again), then synthesised keys.
	c.text.reserve(3*len(b) + synthesisedRoom)
	c.base = c.text.Len()
	c.text.Write(b)
	line := c.text.String()[c.base:]
	var err error
	if c.spans, err = tokenize(line, 0, &c.text, c.base, c.spans[:0]); err != nil {
		lc.openQuote = true
		c.spans = fallbackSplit(line, &c.text, c.base, c.spans[:0])
		defer func() {
			if lc.skip == keep {
				lc.notes = append(lc.notes, fmt.Sprintf("quotes do not balance (%v): read by a whitespace split, quoted values may be cut", err))
			}
		}()
	}
	c.line = c.text.String()[c.base:]
	if !timestampLike(c.token(0)) {
		lc.skip = skipNoTimestamp
		return
	}
	if len(c.spans) < 2 {
		lc.skip = skipNoLoop
		return
	}
	c.build(lc, e)
}

// validUTF8 is utf8.Valid, hand-written because utf8.Valid checks bytes one at a time from the first
// non-ASCII byte on, and trace lines carry a "→" or "Δ" early: this one returns to 8 bytes at a
// time after each multi-byte character.
func validUTF8(b []byte) bool {
	for {
		for len(b) >= 8 && binary.LittleEndian.Uint64(b)&0x8080808080808080 == 0 {
			b = b[8:]
		}
		i := 0
		for i < len(b) && b[i] < utf8.RuneSelf {
			i++
		}
		if i == len(b) {
			return true
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return false
		}
		b = b[i+size:]
	}
}

// token is the i-th token of the current line.
func (c *classifier) token(i int) string { return c.line[c.spans[i].start:c.spans[i].end] }

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
func (c *classifier) build(lc *lineClass, e *Entry) {
	e.Timestamp = c.token(0)
	e.Loop = c.token(1)
	switch e.Loop {
	case "architect": // as the reference
		e.Loop = "design"
	case "refinement": // the reference keeps the v0.3.1 name; tune maps it (docs/decisions.md#trace-logs)
		e.Loop = "refine"
	}
	isMetaLoop := e.Loop == "meta"
	// A token gives at most one field, the meta labels three in all, and the aliases five more.
	c.pos, c.indexed, c.keyMask = c.fieldPoss.open(len(c.spans)+8), false, 0
	// The keys the typed fields and the legacy aliases need are noted while the tokens go by, so
	// they cost no lookups afterwards.
	var k, loss, lossNorm, dloss, dlossNorm, legacyK, epoch, baseline optional
	var terminal, lossFinal, files, regressionFollowed, regressionOf optional
	var hasClose, hasBaseline, hasLevelChosen bool
	var ignored []string
	for _, sp := range c.spans[2:] {
		tok := c.line[sp.start:sp.end]
		switch {
		case tok == "close":
			hasClose = true
		case tok == "baseline":
			hasBaseline = true
		case isMetaLoop && levelLabel(tok):
			level := optional{sp.start, sp.start + 2, true}
			c.setNamed("level", level)
			c.setNamed("level_name", optional{sp.start + 3, sp.end, true})
			if !hasLevelChosen { // the first label stays in level_chosen
				c.setNamed("level_chosen", level)
				hasLevelChosen = true
			}
		default:
			eq := indexEq(tok)
			if eq < 0 {
				ignored = append(ignored, tok)
				continue
			}
			v := optional{sp.start + eq + 1, sp.end, true}
			c.set(sp.start, sp.start+eq, v) // a later duplicate key wins
			switch tok[:eq] {
			case "k":
				k = v
			case "loss":
				loss = v
			case "loss_norm":
				lossNorm = v
			case "Δloss":
				dloss = v
			case "Δloss_norm":
				dlossNorm = v
			case "r", "o", "phase":
				legacyK = v
			case "epoch":
				epoch = v
			case "baseline":
				baseline = v
			case "level_chosen":
				hasLevelChosen = true
			case "terminal":
				terminal = v
			case "loss_final":
				lossFinal = v
			case "files":
				files = v
			case "regression_followed":
				regressionFollowed = v
			case "regression_of":
				regressionOf = v
			}
		}
	}
	lc.task = &noTaskKeys
	if terminal.ok || lossFinal.ok || files.ok || regressionFollowed.ok || regressionOf.ok {
		lc.task = c.taskKeys.new(taskKeys{
			any:      files.ok || regressionFollowed.ok || regressionOf.ok,
			terminal: c.str(terminal), lossFinal: c.str(lossFinal), hasLossFinal: lossFinal.ok,
			files: c.str(files), hasFiles: files.ok,
			regressionFollowed: c.str(regressionFollowed), hasRegressionFollowed: regressionFollowed.ok,
			regressionOf: c.str(regressionOf),
		})
	}
	if len(ignored) > 0 {
		lc.notes = append(lc.notes, fmt.Sprintf("bare words ignored (no key=): %s", quoteList(ignored)))
	}
	switch {
	case hasClose:
		e.Kind = KindClose
	case hasBaseline:
		e.Kind = KindIter
		if !k.ok {
			c.alias(&k, "k", c.appendText("0"))
		}
		if !baseline.ok {
			c.alias(&baseline, "baseline", c.appendText("true"))
		}
	case isMetaLoop:
		e.Kind = KindMeta
	case e.Loop == "epoch":
		e.Kind = KindEpoch
	default:
		e.Kind = KindIter
	}
	if e.Kind == KindMeta {
		lc.head = c.heads.new(metaHead{})
		c.normaliseMeta(lc)
		e.Fields = c.fields()
		c.readHead(lc, e)
		return
	}
	c.alias(&loss, "loss", lossNorm)
	c.alias(&dloss, "Δloss", dlossNorm)
	c.alias(&k, "k", legacyK)
	e.Fields = c.fields()
	if k.ok {
		if n, err := strconv.Atoi(c.str(k)); err == nil {
			e.K = c.ints.new(n)
		} else if e.Kind == KindIter {
			lc.notes = append(lc.notes, fmt.Sprintf("k=%q is not an integer: iteration index unknown", c.str(k)))
		}
	}
	e.Baseline = baseline.ok && c.str(baseline) == "true"
	if epoch.ok {
		if n, err := strconv.Atoi(c.str(epoch)); err == nil {
			e.Epoch, lc.epochSet = n, true
		} else {
			lc.notes = append(lc.notes, fmt.Sprintf("epoch=%q is not an integer: the task's current epoch is used", c.str(epoch)))
		}
	}
	if loss.ok {
		if f, ok := parseFinite(c.str(loss)); ok {
			e.Loss = c.floats.new(f)
		} else {
			lc.notes = append(lc.notes, fmt.Sprintf("loss=%q is not a number: loss unknown", c.str(loss)))
		}
	}
}

// indexEq is strings.IndexByte(tok, '='), as a plain loop: the '=' of a key=value token comes after
// a short key, where a call to the vectorised search costs more than it saves.
func indexEq(tok string) int {
	for i := 0; i < len(tok); i++ {
		if tok[i] == '=' {
			return i
		}
	}
	return -1
}

// keyBit hashes a key to one of 64 bits, for keyMask.
func keyBit(key string) uint64 {
	h := uint(len(key)) * 7
	if len(key) > 0 {
		h += uint(key[0]) + 3*uint(key[len(key)-1])
	}
	return 1 << (h & 63)
}

// optional is a value in the current line's text, [start, end); ok says it is present.
type optional struct {
	start, end int
	ok         bool
}

func (c *classifier) str(o optional) string { return c.line[o.start:o.end] }

// appendText adds s to the current line's text and returns where it is.
func (c *classifier) appendText(s string) optional {
	start := c.text.Len() - c.base
	c.text.WriteString(s)
	c.line = c.text.String()[c.base:]
	return optional{start, start + len(s), true}
}

// find returns the position in c.pos of key, or -1.
func (c *classifier) find(key string) int {
	if c.keyMask&keyBit(key) == 0 { // the usual case: a key not seen on this line
		return -1
	}
	if c.indexed {
		if i, ok := c.index[key]; ok {
			return i
		}
		return -1
	}
	for i, p := range c.pos {
		if c.line[p.keyStart:p.keyEnd] == key {
			return i
		}
	}
	return -1
}

// get returns the value of key on the current line.
func (c *classifier) get(key string) optional {
	if i := c.find(key); i >= 0 {
		return optional{int(c.pos[i].valStart), int(c.pos[i].valEnd), true}
	}
	return optional{}
}

// set gives the key at [keyStart, keyEnd) of the line's text the value v: a new field, or a new
// value for a key seen before.
func (c *classifier) set(keyStart, keyEnd int, v optional) {
	key := c.line[keyStart:keyEnd]
	if i := c.find(key); i >= 0 {
		c.pos[i].valStart, c.pos[i].valEnd = uint32(v.start), uint32(v.end)
		return
	}
	c.pos = append(c.pos, fieldPos{uint32(keyStart), uint32(keyEnd), uint32(v.start), uint32(v.end)})
	c.keyMask |= keyBit(key)
	switch {
	case c.indexed:
		c.index[key] = len(c.pos) - 1
	case len(c.pos) > manyFields:
		if c.index == nil {
			c.index = make(map[string]int)
		}
		clear(c.index)
		for i, p := range c.pos {
			c.index[c.line[p.keyStart:p.keyEnd]] = i
		}
		c.indexed = true
	}
}

// setNamed sets a key that need not be in the line (a synthesised or aliased one); its name is
// added to the line's text only when the key is new.
func (c *classifier) setNamed(key string, v optional) {
	if i := c.find(key); i >= 0 {
		c.pos[i].valStart, c.pos[i].valEnd = uint32(v.start), uint32(v.end)
		return
	}
	k := c.appendText(key)
	c.set(k.start, k.end, v)
}

// alias gives key the value of from when key is absent (a legacy spelling or a synthesised
// default), and notes it.
func (c *classifier) alias(o *optional, key string, from optional) {
	if !o.ok && from.ok {
		c.setNamed(key, from)
		*o = from
	}
}

// fields returns the current line's fields, their positions copied out of the scratch space.
func (c *classifier) fields() Fields {
	return Fields{text: c.line, pos: c.fieldPoss.close(c.pos)}
}

// metaHead is what a meta line says about the task it opens. It is worked out while classifying
// (in parallel) so that the in-order segmentation only copies it.
type metaHead struct {
	time                                               time.Time // zero unless RFC 3339
	level, dispatch, creativity, title, weightsVersion string
	loops                                              []string
	signals                                            []weights.SignalWeight
	hasSignals                                         bool
	levelFromChosen                                    bool // level read from the v0.10.1 level_chosen=
}

func (c *classifier) readHead(lc *lineClass, e *Entry) {
	h := lc.head
	h.time = parseMetaTime(lc, e.Timestamp)
	// One pass over the fields rather than a lookup per key: keys are unique.
	var loops, signals, weightsVersion optional
	for _, p := range c.pos {
		v := optional{int(p.valStart), int(p.valEnd), true}
		switch c.line[p.keyStart:p.keyEnd] {
		case "level":
			if lvl := c.str(v); validLevel(lvl) {
				h.level = lvl
			}
		case "dispatch":
			h.dispatch = c.str(v)
		case "creativity":
			h.creativity = c.str(v)
		case "task":
			h.title = c.str(v)
		case "loops":
			loops = v
		case "signals":
			signals = v
		case "weights":
			weightsVersion = v
		}
	}
	h.dispatch = ShortDispatch(h.dispatch)
	clear(c.loops) // scratch: no string of an old line may outlive it here
	c.loops = c.loops[:0]
	for l := range strings.SplitSeq(c.str(loops), ",") {
		if l = trimPy(l); l != "" {
			c.loops = append(c.loops, l)
		}
	}
	h.loops = c.strs.clone(c.loops)
	if signals.ok {
		var problems []string
		h.hasSignals = true
		clear(c.sigs)
		c.sigs, problems = appendSignals(c.sigs[:0], c.str(signals))
		if h.signals = c.signals.clone(c.sigs); h.signals == nil {
			h.signals = []weights.SignalWeight{} // present but empty
		}
		lc.notes = append(lc.notes, problems...)
	}
	if weightsVersion.ok {
		h.weightsVersion = c.str(weightsVersion)
		if _, err := weights.ParseVersionName(h.weightsVersion); err != nil {
			lc.notes = append(lc.notes, "weights="+err.Error())
		}
	}
}

// parseMetaTime reads the timestamp of a line that opens a task; one that is not RFC 3339 is kept
// and noted, and the task stays out of time windows (`n_tasks_undated`, docs/decisions.md#trace-logs).
func parseMetaTime(lc *lineClass, ts string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, ts)
	switch {
	case err != nil:
		lc.notes = append(lc.notes, fmt.Sprintf("timestamp %q is not RFC 3339: the task is left out of time windows", ts))
	case t.Year() < 1:
		// Go reads year 0000; the reference's Python datetime does not (years 1–9999): undated, not a
		// task of two thousand years ago that every window leaves out without a word
		lc.notes = append(lc.notes, fmt.Sprintf("timestamp %q is before year 1: the task is left out of time windows", ts))
		return time.Time{}
	}
	return t
}

// normaliseMeta applies the meta-line Decisions: level_chosen → level, long dispatch_source → short
// dispatch, both only when the current key is absent.
func (c *classifier) normaliseMeta(lc *lineClass) {
	level := c.get("level")
	if !level.ok {
		if chosen := c.get("level_chosen"); chosen.ok && validLevel(c.str(chosen)) {
			c.alias(&level, "level", chosen)
			lc.head.levelFromChosen = true
		}
	}
	if level.ok && !validLevel(c.str(level)) {
		lc.notes = append(lc.notes, fmt.Sprintf("level=%q is not L0..L4: level unknown", c.str(level)))
	}
	if dispatch := c.get("dispatch"); !dispatch.ok {
		if src := c.get("dispatch_source"); src.ok {
			if short := ShortDispatch(c.str(src)); short != c.str(src) {
				src = c.appendText(short)
			}
			c.alias(&dispatch, "dispatch", src)
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
