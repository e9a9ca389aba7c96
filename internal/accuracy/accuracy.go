package accuracy

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/traceparse"
)

// Levels are the dispatch levels in report order.
var Levels = [...]string{"L0", "L1", "L2", "L3", "L4"}

// Confidence is the two-sided confidence of every interval.
const Confidence = 0.95

// DefaultDays is the reference's default window.
const DefaultDays = 30

// maxDays is the longest window a time.Duration can express; longer windows keep every task.
const maxDays = int(math.MaxInt64 / int64(24*time.Hour))

// Thresholds of the reference's definitions (docs/decisions.md#accuracy-definitions).
const (
	overkillMaxK    = 1
	overkillMaxLoss = 0.01
	underkillMinK   = 5
)

// Options says which tasks a report covers and how to attribute them to weights versions.
type Options struct {
	// Days is the window: tasks whose meta time is at or after Now − Days.
	Days int
	Now  time.Time
	// Versions are the times at which weights versions became active (from the store's log), in any
	// order; a task without weights= on its meta line is attributed to the version active at its
	// meta time.
	Versions []VersionStart
}

// VersionStart is a version and the time it became active.
type VersionStart struct {
	Version string
	From    time.Time
}

// SignalCount is one entry of top_signals.
type SignalCount struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

// LevelSummary is one level of per_level, as the reference writes it.
type LevelSummary struct {
	N               int            `json:"n"`
	MedianK         PyFloat        `json:"median_k"`
	MedianFinalLoss PyFloat        `json:"median_final_loss"`
	CompleteRate    PyFloat        `json:"complete_rate"`
	OverkillRate    PyFloat        `json:"overkill_rate"`
	UnderkillRate   PyFloat        `json:"underkill_rate"`
	TopSignals      []SignalCount  `json:"top_signals"`
	Terminals       map[string]int `json:"terminals"`
}

// PerLevel holds the five levels in order.
type PerLevel struct {
	L0 LevelSummary `json:"L0"`
	L1 LevelSummary `json:"L1"`
	L2 LevelSummary `json:"L2"`
	L3 LevelSummary `json:"L3"`
	L4 LevelSummary `json:"L4"`
}

// At returns the summary of level i (0…4).
func (p *PerLevel) At(i int) *LevelSummary {
	return [...]*LevelSummary{&p.L0, &p.L1, &p.L2, &p.L3, &p.L4}[i]
}

// Overall holds the rates over all tasks with a level.
type Overall struct {
	OverkillRate  PyFloat `json:"overkill_rate"`
	UnderkillRate PyFloat `json:"underkill_rate"`
}

// Summary is the reference's dispatch_accuracy object, field for field.
type Summary struct {
	WindowDays      int      `json:"window_days"`
	NTasksTotal     int      `json:"n_tasks_total"`
	NTasksWithLevel int      `json:"n_tasks_with_level"`
	PerLevel        PerLevel `json:"per_level"`
	Overall         Overall  `json:"overall"`
}

// Rate is a proportion k/n with its Wilson interval (rounded to 4 places, as the rates are).
type Rate struct {
	K    int     `json:"k"`
	N    int     `json:"n"`
	Rate float64 `json:"rate"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
}

// LevelIntervals are the intervals of one level's three rates.
type LevelIntervals struct {
	Complete  Rate `json:"complete_rate"`
	Overkill  Rate `json:"overkill_rate"`
	Underkill Rate `json:"underkill_rate"`
}

// Intervals are the intervals of every rate of a Summary.
type Intervals struct {
	Confidence float64 `json:"confidence"`
	Method     string  `json:"method"`
	PerLevel   struct {
		L0 LevelIntervals `json:"L0"`
		L1 LevelIntervals `json:"L1"`
		L2 LevelIntervals `json:"L2"`
		L3 LevelIntervals `json:"L3"`
		L4 LevelIntervals `json:"L4"`
	} `json:"per_level"`
	Overall struct {
		Overkill  Rate `json:"overkill_rate"`
		Underkill Rate `json:"underkill_rate"`
	} `json:"overall"`
}

// At returns the intervals of level i (0…4).
func (iv *Intervals) At(i int) *LevelIntervals {
	p := &iv.PerLevel
	return [...]*LevelIntervals{&p.L0, &p.L1, &p.L2, &p.L3, &p.L4}[i]
}

// BeyondTask is a counted task that tune reads differently from the reference.
type BeyondTask struct {
	Log     string   `json:"log"`
	Line    int      `json:"line"`
	Task    string   `json:"task"`
	Level   string   `json:"level"`
	Reasons []string `json:"reasons"`
}

// Beyond accounts for the tasks read beyond (or otherwise than) the reference.
type Beyond struct {
	NTasks int          `json:"n_tasks"`
	Tasks  []BeyondTask `json:"tasks"`
}

// Group is the summary of one part of a split.
type Group struct {
	Key string `json:"key"`
	// NFromMeta and NFromLog (by weights version only) say how many tasks were attributed by the
	// meta line's weights= and how many by the store log's apply times.
	NFromMeta *int      `json:"n_from_meta,omitempty"`
	NFromLog  *int      `json:"n_from_log,omitempty"`
	Summary   Summary   `json:"summary"`
	Intervals Intervals `json:"intervals"`
}

// Report is the whole `tune accuracy` result: the reference's fields, then tune's.
type Report struct {
	Summary
	Beyond           Beyond    `json:"read_beyond_reference"`
	Intervals        Intervals `json:"intervals"`
	ByWeightsVersion []Group   `json:"by_weights_version"`
	ByDispatch       []Group   `json:"by_dispatch"`
	ByLog            []Group   `json:"by_log"`
	// Undated counts the closed tasks left out because their meta timestamp is not RFC 3339 (or is before
	// year 1, which Go reads and the reference does not).
	Undated int `json:"n_tasks_undated"`
}

// UnknownKey names a split part whose key is unknown (no version, no dispatch).
const UnknownKey = "(unknown)"

// Builder computes a report from tasks given one at a time (from traceparse.Stream), keeping of
// each counted task only what the report needs, so memory follows the number of closed tasks in the
// window, not the size of the logs.
type Builder struct {
	opt    Options
	cutoff time.Time
	in     []*fact
	rep    *Report
	names  map[string]string // interned copies of the few distinct strings facts hold
}

func (b *Builder) intern(s string) string {
	if v, ok := b.names[s]; ok {
		return v
	}
	if b.names == nil {
		b.names = map[string]string{}
	}
	c := strings.Clone(s)
	b.names[c] = c
	return c
}

// fact is what the report needs of a counted task.
type fact struct {
	source, level, dispatch, weightsVersion string
	metaTime                                time.Time
	outcome                                 Outcome
	finalLoss                               float64 // *outcome.FinalLoss, kept by value
	signals                                 []string
}

// NewBuilder starts a report.
func NewBuilder(opt Options) *Builder {
	b := &Builder{opt: opt, rep: &Report{Beyond: Beyond{Tasks: []BeyondTask{}}}}
	// A window beyond what a time.Duration holds (about 292 years) keeps everything.
	if opt.Days < maxDays {
		b.cutoff = opt.Now.Add(-time.Duration(opt.Days) * 24 * time.Hour)
	}
	return b
}

// Add counts one task (it keeps no reference to it).
func (b *Builder) Add(t *traceparse.Task) {
	rep := b.rep
	if !t.Closed {
		// A task left open here because a line the reference reads was skipped (an incomplete last
		// line, say, that holds its close) is one the reference may count: it is listed, so that the
		// difference stays accounted for (the trace review found it silently missing).
		if t.CloseSkipped && (t.MetaTime.IsZero() || !t.MetaTime.Before(b.cutoff)) {
			rep.Beyond.Tasks = append(rep.Beyond.Tasks, beyondTask(t, append(departures(t), "not counted here: open, its close being the skipped incomplete line")))
		}
		return
	}
	if t.MetaTime.IsZero() {
		rep.Undated++
		rep.Beyond.Tasks = append(rep.Beyond.Tasks, beyondTask(t, []string{
			"meta timestamp " + strconv.Quote(t.MetaTimestamp) + " is not an RFC 3339 time from year 1 on: left out of every window here; the reference's ISO reader may keep it"}))
		return
	}
	if t.MetaTime.Before(b.cutoff) {
		return
	}
	// The task's strings are slices of the reader's large buffers: the fact keeps copies (through the
	// interning map), so the buffers can go.
	f := &fact{source: b.intern(t.Source), level: b.intern(t.Level), dispatch: b.intern(t.Dispatch),
		weightsVersion: b.intern(t.WeightsVersion), metaTime: t.MetaTime, outcome: Classify(t)}
	f.outcome.Level, f.outcome.Terminal = f.level, b.intern(f.outcome.Terminal)
	if f.outcome.FinalLoss != nil {
		f.finalLoss = *f.outcome.FinalLoss
		f.outcome.FinalLoss = &f.finalLoss
	}
	for _, s := range t.Signals {
		f.signals = append(f.signals, b.intern(s.Name))
	}
	b.in = append(b.in, f)
	if r := departures(t); len(r) > 0 {
		rep.Beyond.Tasks = append(rep.Beyond.Tasks, beyondTask(t, r))
	}
}

// Report finishes the report.
func (b *Builder) Report() *Report {
	rep, in, opt := b.rep, b.in, b.opt
	rep.Beyond.NTasks = len(rep.Beyond.Tasks)
	rep.Summary, rep.Intervals = summarise(in, opt.Days)
	versions := sortedVersions(opt.Versions)
	rep.ByWeightsVersion = split(in, opt.Days, func(t *fact) (string, origin) {
		if t.weightsVersion != "" {
			return t.weightsVersion, fromMeta
		}
		if v := activeAt(versions, t.metaTime); v != UnknownKey {
			return v, fromLog
		}
		return UnknownKey, fromNothing
	}, true)
	rep.ByDispatch = split(in, opt.Days, func(t *fact) (string, origin) { return cmp.Or(t.dispatch, UnknownKey), fromMeta }, false)
	rep.ByLog = split(in, opt.Days, func(t *fact) (string, origin) { return t.source, fromMeta }, false)
	return rep
}

func beyondTask(t *traceparse.Task, reasons []string) BeyondTask {
	return BeyondTask{Log: t.Source, Line: t.Line, Task: t.Title, Level: t.Level, Reasons: reasons}
}

// Outcome is what the definitions make of one task.
type Outcome struct {
	Level     string // "" when the task has none
	K         int    // non-baseline iterations
	FinalLoss *float64
	Terminal  string // "(unknown)" for a close without terminal=
	Complete  bool
	Overkill  bool
	Underkill bool
}

// Classify applies the reference's definitions to one closed task.
func Classify(t *traceparse.Task) Outcome {
	o := Outcome{Level: t.Level, FinalLoss: t.LossFinal, Terminal: cmp.Or(t.Terminal, UnknownKey)}
	_, o.K = t.Iterations()
	o.Complete = t.Terminal == "complete"
	switch o.Level {
	case "L3", "L4":
		o.Overkill = o.Complete && o.K <= overkillMaxK && (o.FinalLoss == nil || *o.FinalLoss <= overkillMaxLoss)
	case "L0", "L1":
		o.Underkill = t.Terminal == "failed" || t.Terminal == "aborted" || o.K >= underkillMinK
	}
	return o
}

type bucket struct {
	n, complete, over, under int
	ks, losses               []float64
	terminals                map[string]int
	signals                  []SignalCount // in order of first appearance
}

// summarise computes the reference's summary and its intervals over tasks (all closed, in window).
func summarise(tasks []*fact, days int) (Summary, Intervals) {
	s := Summary{WindowDays: days, NTasksTotal: len(tasks)}
	var bs [len(Levels)]bucket
	over, under := 0, 0
	for _, t := range tasks {
		li := slices.Index(Levels[:], t.level)
		if li < 0 {
			continue
		}
		s.NTasksWithLevel++
		o := t.outcome
		b := &bs[li]
		b.n++
		b.ks = append(b.ks, float64(o.K))
		if o.FinalLoss != nil {
			b.losses = append(b.losses, *o.FinalLoss)
		}
		if b.terminals == nil {
			b.terminals = map[string]int{}
		}
		b.terminals[o.Terminal]++
		if o.Complete {
			b.complete++
		}
		for _, name := range t.signals {
			if j := slices.IndexFunc(b.signals, func(c SignalCount) bool { return c.Name == name }); j >= 0 {
				b.signals[j].N++
			} else {
				b.signals = append(b.signals, SignalCount{Name: name, N: 1})
			}
		}
		if o.Overkill {
			b.over++
			over++
		}
		if o.Underkill {
			b.under++
			under++
		}
	}
	var iv Intervals
	iv.Confidence, iv.Method = Confidence, "wilson"
	for i := range Levels {
		b := &bs[i]
		ls := s.PerLevel.At(i)
		ls.N = b.n
		ls.TopSignals = []SignalCount{}
		ls.Terminals = map[string]int{}
		if b.n > 0 {
			ls.MedianK = PyFloat(PyRound(median(b.ks), 2))
			ls.CompleteRate = PyFloat(PyRound(float64(b.complete)/float64(b.n), 4))
			ls.OverkillRate = PyFloat(PyRound(float64(b.over)/float64(b.n), 4))
			ls.UnderkillRate = PyFloat(PyRound(float64(b.under)/float64(b.n), 4))
			ls.Terminals = b.terminals
		}
		if len(b.losses) > 0 {
			ls.MedianFinalLoss = PyFloat(PyRound(median(b.losses), 3))
		}
		top := slices.Clone(b.signals)
		slices.SortStableFunc(top, func(x, y SignalCount) int { return y.N - x.N })
		ls.TopSignals = append(ls.TopSignals, top[:min(3, len(top))]...)
		li := iv.At(i)
		li.Complete, li.Overkill, li.Underkill = NewRate(b.complete, b.n), NewRate(b.over, b.n), NewRate(b.under, b.n)
	}
	if s.NTasksWithLevel > 0 {
		s.Overall.OverkillRate = PyFloat(PyRound(float64(over)/float64(s.NTasksWithLevel), 4))
		s.Overall.UnderkillRate = PyFloat(PyRound(float64(under)/float64(s.NTasksWithLevel), 4))
	}
	iv.Overall.Overkill, iv.Overall.Underkill = NewRate(over, s.NTasksWithLevel), NewRate(under, s.NTasksWithLevel)
	return s, iv
}

// NewRate is k/n with its Wilson interval at Confidence, rounded to 4 places (0 and [0, 1] for n = 0).
func NewRate(k, n int) Rate {
	r := Rate{K: k, N: n}
	lo, hi := stats.Wilson(k, n, Confidence)
	r.Lo, r.Hi = PyRound(lo, 4), PyRound(hi, 4)
	if n > 0 {
		r.Rate = PyRound(float64(k)/float64(n), 4)
	}
	return r
}

// median is the reference's: the middle value, or the mean of the two middle values.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return 0.5 * (s[n/2-1] + s[n/2])
}

// PyRound rounds x to places decimals as Python's round does: to the nearest decimal of the exact
// binary value, ties to even. strconv's fixed formatting rounds the exact value the same way.
func PyRound(x float64, places int) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', places, 64), 64)
	return f
}

// PyFloat is a value of the reference's JSON, which Python writes as a float: its marshalled form is
// Python's repr, so a whole value keeps its ".0" (1.0, not Go's 1) and scripts that compare the text of
// the reference's output see the same bytes.
type PyFloat float64

// MarshalJSON writes f as Python's json.dumps does: the shortest decimal that reads back as f, in
// positional notation with at least one decimal for exponents −4 to 15, else as 1e-05 / 1.5e+16.
func (f PyFloat) MarshalJSON() ([]byte, error) {
	x := float64(f)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil, fmt.Errorf("accuracy: %v is not a JSON number", x)
	}
	if x == 0 {
		if math.Signbit(x) {
			return []byte("-0.0"), nil
		}
		return []byte("0.0"), nil
	}
	// strconv's shortest exponent form is Python's (two exponent digits at least, with a sign); Python
	// switches to it where the decimal exponent is below −4 or above 15
	e := strconv.FormatFloat(x, 'e', -1, 64)
	_, exp, _ := strings.Cut(e, "e")
	if n, _ := strconv.Atoi(exp); n < -4 || n >= 16 {
		return []byte(e), nil
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return []byte(s), nil
}

// origin says where a task's key in a split came from.
type origin int

const (
	fromNothing origin = iota
	fromMeta           // the task's own meta line
	fromLog            // the store log (the version active at the task's meta time)
)

// split groups tasks by key (keys sorted; UnknownKey last) and summarises each group; withOrigin
// adds how many tasks of each group got their key from their meta line and how many from the log.
func split(tasks []*fact, days int, key func(*fact) (string, origin), withOrigin bool) []Group {
	parts := map[string][]*fact{}
	counts := map[string]*[3]int{}
	for _, t := range tasks {
		k, o := key(t)
		parts[k] = append(parts[k], t)
		if counts[k] == nil {
			counts[k] = new([3]int)
		}
		counts[k][o]++
	}
	keys := make([]string, 0, len(parts))
	for k := range parts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if (a == UnknownKey) != (b == UnknownKey) {
			if a == UnknownKey {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	out := make([]Group, 0, len(keys))
	for _, k := range keys {
		g := Group{Key: k}
		g.Summary, g.Intervals = summarise(parts[k], days)
		if withOrigin {
			m, l := counts[k][fromMeta], counts[k][fromLog]
			g.NFromMeta, g.NFromLog = &m, &l
		}
		out = append(out, g)
	}
	return out
}

func sortedVersions(vs []VersionStart) []VersionStart {
	s := slices.Clone(vs)
	slices.SortStableFunc(s, func(a, b VersionStart) int { return a.From.Compare(b.From) })
	return s
}

// activeAt is the version active at t: the last to start at or before it; UnknownKey before the first.
func activeAt(vs []VersionStart, t time.Time) string {
	v := UnknownKey
	for _, s := range vs {
		if s.From.After(t) {
			break
		}
		v = s.Version
	}
	return v
}

// departures are the ways the reference reads this task otherwise: the reader's (from traceparse),
// then the aggregator's (a final loss tune keeps unknown, signals= names it parses otherwise).
func departures(t *traceparse.Task) []string {
	out := make([]string, len(t.Departures))
	for i, d := range t.Departures {
		out[i] = fmt.Sprintf("line %d: %s", d.Line, d.Reason)
	}
	if t.Level == "" {
		return out
	}
	lastIter, lastClose := -1, -1
	for i := range t.Entries {
		switch t.Entries[i].Kind {
		case traceparse.KindIter:
			lastIter = i
		case traceparse.KindClose:
			lastClose = i
		}
	}
	if lastClose >= 0 {
		if v, ok := t.Entries[lastClose].Fields.Get("loss_final"); ok && t.LossFinalFrom != "close" {
			out = append(out, "loss_final="+strconv.Quote(v)+" is not a finite number: not used here; the reference's float() may read it")
		}
	}
	if t.LossFinal == nil && lastIter >= 0 {
		out = append(out, "final loss unknown (its last iteration has no loss): left out of the median here; the reference reads it as 0.0")
	}
	if raw, ok := t.Meta.Fields.Get("signals"); ok {
		ref := referenceSignalNames(raw)
		names := make([]string, len(t.Signals))
		for i, s := range t.Signals {
			names[i] = s.Name
		}
		if !slices.Equal(ref, names) {
			out = append(out, "signals= read as ["+strings.Join(names, ", ")+"]; the reference reads ["+strings.Join(ref, ", ")+"]")
		}
	}
	return out
}

// referenceSignalNames are the names the reference aggregator counts for a signals= field: pairs
// split on "," and on the last ":", kept when the weight is a Python int, a later duplicate keeping
// the first one's place. It is used only to detect where tune's reading (traceparse.ParseSignals,
// which also takes halves and the docs' spellings) differs, never to count.
func referenceSignalNames(raw string) []string {
	out := []string{}
	for pair := range strings.SplitSeq(raw, ",") {
		pair = pyStrip(pair)
		i := strings.LastIndexByte(pair, ':')
		if i < 0 || !pyInt(pyStrip(pair[i+1:])) {
			continue
		}
		if name := pyStrip(pair[:i]); !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// pyStrip is Python's str.strip(): Unicode white space and the separators \x1c…\x1f.
func pyStrip(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) })
}

// pyInt reports whether Python's int() accepts s (already stripped): a sign, then decimal digits
// with single underscores between them.
func pyInt(s string) bool {
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	prevDigit := false
	for _, r := range s {
		switch {
		case unicode.IsDigit(r):
			prevDigit = true
		case r == '_' && prevDigit:
			prevDigit = false
		default:
			return false
		}
	}
	return prevDigit
}
