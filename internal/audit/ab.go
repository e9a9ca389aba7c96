package audit

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/transcript"
)

// Metrics are the per-run quantities an A/B compares, in report order.
var Metrics = []string{"requests", "output_tokens", "thinking_tokens", "wall_seconds", "active_seconds"}

// MetricUnit is the Go benchmark-format unit of each metric (tune audit ab --format benchfmt).
var MetricUnit = map[string]string{
	"requests": "requests", "output_tokens": "output-tokens", "thinking_tokens": "thinking-tokens",
	"wall_seconds": "wall-sec", "active_seconds": "active-sec",
}

// Run is one session of an A/B arm.
type Run struct {
	Arm               string    `json:"arm"`
	Session           string    `json:"session"`
	Task              string    `json:"task,omitempty"` // pairing label: the first directory under the arm's path
	First             time.Time `json:"first"`
	Requests          int       `json:"requests"`
	OutputTokens      uint64    `json:"output_tokens"`
	ThinkingTokens    uint64    `json:"thinking_tokens"`
	ThinkingEstimated bool      `json:"thinking_estimated"` // some of it estimated from text, or unknown
	WallSeconds       float64   `json:"wall_seconds"`       // first to last timestamp over all its files
	ActiveSeconds     float64   `json:"active_seconds"`     // Σ turn durations
	HasActive         bool      `json:"has_active"`         // turn durations were recorded
	Versions          []string  `json:"versions"`
	Effort            string    `json:"effort"`        // the main loop's most frequent effort
	EffortSource      string    `json:"effort_source"` // transcript, label, mixed or none
}

// Value returns a metric of the run and whether the run records it.
func (r *Run) Value(metric string) (float64, bool) {
	switch metric {
	case "requests":
		return float64(r.Requests), true
	case "output_tokens":
		return float64(r.OutputTokens), true
	case "thinking_tokens":
		return float64(r.ThinkingTokens), true
	case "wall_seconds":
		return r.WallSeconds, true
	case "active_seconds":
		return r.ActiveSeconds, r.HasActive
	}
	return 0, false
}

// RunBuilder gathers runs one request at a time; it is a transcript.Sink, so that a scan can stream
// its requests (and retract the few a later copy changes). arm names the runs ("" when arms come from
// the effort field); roots are the paths the runs were found under, from which the pairing label
// (Task) is taken.
type RunBuilder struct {
	arm       string
	roots     []string
	bySession map[string]*runAcc
}

var _ transcript.Sink = (*RunBuilder)(nil)

type runAcc struct {
	run          Run
	notExact     int            // requests whose thinking is estimated or unknown
	efforts      map[string]int // main-loop requests by effort
	effortSource map[transcript.EffortSource]int
}

// NewRunBuilder starts gathering runs.
func NewRunBuilder(arm string, roots []string) *RunBuilder {
	return &RunBuilder{arm: arm, roots: roots, bySession: map[string]*runAcc{}}
}

// Add counts one request in its session's run.
func (rb *RunBuilder) Add(q *transcript.Request) { rb.count(q, 1) }

// Remove takes out a request added before.
func (rb *RunBuilder) Remove(q *transcript.Request) { rb.count(q, -1) }

func (rb *RunBuilder) count(q *transcript.Request, sign int) {
	a := rb.bySession[q.Session]
	if a == nil {
		a = &runAcc{run: Run{Arm: rb.arm, Session: q.Session}, efforts: map[string]int{}, effortSource: map[transcript.EffortSource]int{}}
		rb.bySession[q.Session] = a
	}
	n := uint64(sign) // subtracts by two's complement
	a.run.Requests += sign
	a.run.OutputTokens += n * q.OutputTokens
	a.run.ThinkingTokens += n * q.ThinkingTokens
	if q.ThinkingSrc != transcript.ThinkingExact {
		a.notExact += sign
	}
	if q.Class == transcript.ClassMain {
		addCount(a.efforts, q.Effort, sign)
	}
	addCount(a.effortSource, q.EffortSrc, sign)
}

// addCount adds to a count and forgets keys that fall to zero, so that a retracted request leaves
// no trace.
func addCount[K comparable](m map[K]int, k K, n int) {
	if m[k] += n; m[k] == 0 {
		delete(m, k)
	}
}

// Runs completes the runs with what the scan says about their sessions (span, turn durations,
// versions), in session order.
func (rb *RunBuilder) Runs(res *transcript.Result) []Run {
	var runs []Run
	for _, s := range res.Sessions {
		a := rb.bySession[s.ID]
		if a == nil || a.run.Requests == 0 {
			continue
		}
		r := a.run
		r.ThinkingEstimated = a.notExact > 0
		r.First = s.First
		r.WallSeconds = s.Last.Sub(s.First).Seconds()
		r.ActiveSeconds = float64(s.ActiveMs) / 1000
		r.HasActive = s.Turns > 0
		r.Versions = s.Versions
		r.Task = taskOf(rb.roots, s.Directory)
		r.Effort = modeOf(a.efforts)
		switch {
		case len(a.effortSource) > 1:
			r.EffortSource = "mixed"
		default:
			for src := range a.effortSource {
				r.EffortSource = src.String()
			}
		}
		runs = append(runs, r)
	}
	return runs
}

// taskOf is the first directory of dir under the first root that contains it, skipping a projects/
// level: the task a run belongs to when runs are laid out as ARM/TASK/….
func taskOf(roots []string, dir string) string {
	for _, root := range roots {
		rel, err := filepath.Rel(root, dir)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		if rel == "." {
			return ""
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if parts[0] == "projects" {
			parts = parts[1:]
		}
		if len(parts) == 0 {
			return ""
		}
		return parts[0]
	}
	return ""
}

// modeOf returns the most frequent key (ties: the higher effort rank, then the name).
func modeOf(counts map[string]int) string {
	best, bestN := "", 0
	for k, n := range counts {
		if n > bestN || n == bestN && EffortLess(best, k) {
			best, bestN = k, n
		}
	}
	return best
}

// EffortLevels are Claude Code's effort levels, lowest first: the only values an effort: pin, a
// settings effortLevel or a transcript's effort field can take.
var EffortLevels = []string{"low", "medium", "high", "xhigh", "max"}

// effortRank orders Claude Code's effort levels (1 = low).
var effortRank = func() map[string]int {
	m := make(map[string]int, len(EffortLevels))
	for i, l := range EffortLevels {
		m[l] = i + 1
	}
	return m
}()

// IsEffortLevel reports whether s is one of EffortLevels.
func IsEffortLevel(s string) bool { return effortRank[s] > 0 }

// EffortLess orders effort levels low < medium < high < xhigh < max, other names after them
// alphabetically.
func EffortLess(a, b string) bool {
	ra, rb := effortRank[a], effortRank[b]
	if ra == 0 {
		ra = 100
	}
	if rb == 0 {
		rb = 100
	}
	if ra != rb {
		return ra < rb
	}
	return a < b
}

// Arm is a named set of runs.
type Arm struct {
	Name string
	Runs []Run
}

// ArmsByEffort groups runs by their main-loop effort, lowest level first. Runs without an effort are
// returned apart.
func ArmsByEffort(runs []Run) (arms []Arm, noEffort []Run) {
	index := map[string]int{}
	for _, r := range runs {
		if r.Effort == "" {
			noEffort = append(noEffort, r)
			continue
		}
		r.Arm = r.Effort
		j, ok := index[r.Effort]
		if !ok {
			j = len(arms)
			index[r.Effort] = j
			arms = append(arms, Arm{Name: r.Effort})
		}
		arms[j].Runs = append(arms[j].Runs, r)
	}
	sort.SliceStable(arms, func(i, j int) bool { return EffortLess(arms[i].Name, arms[j].Name) })
	return arms, noEffort
}

// ArmInfo describes an arm in a report.
type ArmInfo struct {
	Name          string   `json:"name"`
	Runs          int      `json:"runs"`
	Versions      []string `json:"versions"`
	Families      []Family `json:"families"`
	EffortSources []string `json:"effort_sources"`
	Sessions      []string `json:"sessions"`
}

func infoOf(a *Arm) ArmInfo {
	info := ArmInfo{Name: a.Name, Runs: len(a.Runs), Versions: []string{}, Families: []Family{}, EffortSources: []string{}, Sessions: []string{}}
	versions, families, sources := map[string]bool{}, map[Family]bool{}, map[string]bool{}
	for _, r := range a.Runs {
		for _, v := range r.Versions {
			versions[v] = true
			if f := VersionFamily(v); f != FamilyUnknown {
				families[f] = true
			}
		}
		sources[r.EffortSource] = true
		info.Sessions = append(info.Sessions, r.Session)
	}
	for v := range versions {
		info.Versions = append(info.Versions, v)
	}
	sort.Slice(info.Versions, func(i, j int) bool { return versionLess(info.Versions[i], info.Versions[j]) })
	for f := range families {
		info.Families = append(info.Families, f)
	}
	sort.Slice(info.Families, func(i, j int) bool { return info.Families[i] < info.Families[j] })
	for s := range sources {
		info.EffortSources = append(info.EffortSources, s)
	}
	sort.Strings(info.EffortSources)
	sort.Strings(info.Sessions)
	return info
}

// versionLess orders versions numerically part by part ("2.1.9" < "2.1.39").
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] == pb[i] {
			continue
		}
		var na, nb int
		_, ea := fmt.Sscanf(pa[i], "%d", &na)
		_, eb := fmt.Sscanf(pb[i], "%d", &nb)
		if ea == nil && eb == nil && na != nb {
			return na < nb
		}
		return pa[i] < pb[i]
	}
	return len(pa) < len(pb)
}

// ErrMixedVersions is returned (wrapped in a *MixedVersionsError) when arms mix Claude Code versions
// whose output_tokens mean different things.
var ErrMixedVersions = errors.New("arms mix Claude Code versions with different output-token semantics")

// MixedVersionsError lists the versions of each arm.
type MixedVersionsError struct{ Arms []ArmInfo }

func (e *MixedVersionsError) Error() string {
	var b strings.Builder
	b.WriteString(ErrMixedVersions.Error() + ":\n")
	for _, a := range e.Arms {
		fmt.Fprintf(&b, "  %s: Claude Code %s (%s)\n", a.Name, strings.Join(a.Versions, ", "), JoinFamilies(a.Families))
	}
	b.WriteString("Output and thinking counts are then not comparable between the arms:\n")
	for _, f := range []Family{FamilyPartial, FamilyLastLine, FamilyFinal} {
		fmt.Fprintf(&b, "  %s: %s\n", f, FamilyDescription(f))
	}
	b.WriteString("Rerun the arms on one Claude Code version, or pass --allow-mixed to compare anyway.")
	return b.String()
}

func (e *MixedVersionsError) Unwrap() error { return ErrMixedVersions }

// JoinFamilies lists output-token families for humans ("unknown" for none).
func JoinFamilies(fs []Family) string {
	if len(fs) == 0 {
		return "unknown"
	}
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = string(f)
	}
	return strings.Join(parts, ", ")
}

// ABOptions configure a comparison.
type ABOptions struct {
	Paired     bool    // compare paired runs (x[i], y[i]) with the signed-rank test
	PairBy     string  // "order" (the i-th run of each arm by start time) or "task" (same Task label)
	Alpha      float64 // significance level (0: 0.05)
	Confidence float64 // CI level (0: 0.95)
	AllowMixed bool    // compare arms whose versions have different output-token semantics
}

// ArmStat is an arm's summary of one metric. Lo and Hi are nil when n is too small for a CI.
type ArmStat struct {
	N      int      `json:"n"`
	Median *float64 `json:"median"`
	Lo     *float64 `json:"lo"`
	Hi     *float64 `json:"hi"`
}

// MetricResult compares one metric between the baseline and one other arm.
type MetricResult struct {
	Name        string             `json:"name"`
	Baseline    string             `json:"baseline"`
	Arm         string             `json:"arm"`
	Arms        map[string]ArmStat `json:"arms"`
	Test        string             `json:"test"`
	Exact       bool               `json:"exact"`
	N1          int                `json:"n1"`
	N2          int                `json:"n2"`
	P           *float64           `json:"p"`
	PHolm       *float64           `json:"p_holm"`
	Significant bool               `json:"significant"`
	Ratio       *float64           `json:"ratio"`
	RatioLo     *float64           `json:"ratio_lo"`
	RatioHi     *float64           `json:"ratio_hi"`
	// RatioNote says why the ratio has no interval: "too few runs (n=3)" when an arm's median has no
	// distribution-free CI at this n (a bootstrap of three values gives intervals such as
	// [0.72, 1767.21], which estimate nothing).
	RatioNote string   `json:"ratio_note,omitempty"`
	Warnings  []string `json:"warnings"`

	minP float64 // the smallest p the test can give at these sizes (0: no test)
}

// ABReport is the outcome of CompareArms.
type ABReport struct {
	Arms          []ArmInfo      `json:"arms"`
	Metrics       []MetricResult `json:"metrics"`
	Paired        bool           `json:"paired"`
	PairBy        string         `json:"pair_by,omitempty"`
	Alpha         float64        `json:"alpha"`
	Confidence    float64        `json:"confidence"`
	Resamples     int            `json:"bootstrap_resamples"`
	MixedVersions bool           `json:"mixed_versions"`
	Notes         []string       `json:"notes"`
	Runs          []Run          `json:"runs"`
}

func ptr(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// CompareArms compares every arm with the first (the baseline) on every metric: per arm the median
// and its distribution-free CI; per comparison a two-sided Mann–Whitney U test (exact for small
// samples), or with Paired the exact Wilcoxon signed-rank test on paired differences; Holm's
// adjustment over all the comparisons; and a seeded bootstrap CI of the ratio of medians (arm over
// baseline). It refuses arms that mix version families unless AllowMixed.
func CompareArms(arms []Arm, opt ABOptions) (*ABReport, error) {
	if opt.Alpha == 0 {
		opt.Alpha = 0.05
	}
	if opt.Confidence == 0 {
		opt.Confidence = 0.95
	}
	if len(arms) < 2 {
		return nil, fmt.Errorf("need at least two arms, got %d", len(arms))
	}
	rep := &ABReport{Paired: opt.Paired, Alpha: opt.Alpha, Confidence: opt.Confidence, Resamples: stats.DefaultResamples, Notes: []string{}, Runs: []Run{}}
	families := map[Family]bool{}
	for i := range arms {
		if len(arms[i].Runs) == 0 {
			return nil, fmt.Errorf("arm %s has no run (no session with requests)", arms[i].Name)
		}
		info := infoOf(&arms[i])
		rep.Arms = append(rep.Arms, info)
		for _, f := range info.Families {
			families[f] = true
		}
	}
	if len(families) > 1 {
		if !opt.AllowMixed {
			return nil, &MixedVersionsError{Arms: rep.Arms}
		}
		rep.MixedVersions = true
		rep.Notes = append(rep.Notes, "MIXED VERSIONS (--allow-mixed): the arms' Claude Code versions record output_tokens differently; output and thinking are not comparable.")
	}
	if opt.Paired {
		if opt.PairBy == "" {
			opt.PairBy = "order"
		}
		rep.PairBy = opt.PairBy
		var err error
		if arms, err = pairRuns(arms, opt.PairBy); err != nil {
			return nil, err
		}
	}
	for i := range arms {
		rep.Runs = append(rep.Runs, arms[i].Runs...)
	}
	base := &arms[0]
	for i := 1; i < len(arms); i++ {
		arm := &arms[i]
		for _, m := range Metrics {
			rep.Metrics = append(rep.Metrics, compareMetric(base, arm, m, opt))
		}
	}
	var ps []float64
	for _, mr := range rep.Metrics {
		if mr.P != nil {
			ps = append(ps, *mr.P)
		} else {
			ps = append(ps, math.NaN())
		}
	}
	adj := stats.Holm(ps)
	for i := range rep.Metrics {
		rep.Metrics[i].PHolm = ptr(adj[i])
		rep.Metrics[i].Significant = rep.Metrics[i].PHolm != nil && *rep.Metrics[i].PHolm <= opt.Alpha
	}
	holmFootnotes(rep.Metrics, opt.Alpha)
	for i := range rep.Metrics {
		explainDisagreement(&rep.Metrics[i], rep.Tests())
	}
	return rep, nil
}

// Tests is how many tests Holm adjusts over: the metrics with a p (one without data has none). The
// header and the footnotes both say it (the audit review: a footnote counted the metric without data).
func (rep *ABReport) Tests() int {
	n := 0
	for _, m := range rep.Metrics {
		if m.P != nil && !math.IsNaN(*m.P) {
			n++
		}
	}
	return n
}

// explainDisagreement says why a ratio interval and the test disagree, when they do: they come from
// two procedures. The interval is a bootstrap of the ratio of medians for this comparison alone; the
// test compares the whole distributions by ranks, and its p is adjusted by Holm over every test of
// the report. An interval that excludes 1 next to a Holm p above α (or the reverse) is therefore not
// a contradiction, and the report says so instead of leaving the reader to guess.
func explainDisagreement(mr *MetricResult, tests int) {
	if mr.RatioLo == nil || mr.RatioHi == nil || mr.PHolm == nil {
		return
	}
	excludesOne := *mr.RatioLo > 1 || *mr.RatioHi < 1
	if excludesOne == mr.Significant {
		return
	}
	var why string
	if excludesOne {
		why = fmt.Sprintf("the ratio's CI excludes 1 but the test is not significant: the CI is a bootstrap of medians for this comparison alone, the test ranks every run and is Holm-adjusted over %d tests", tests)
	} else {
		why = "the test is significant but the ratio's CI includes 1: the test ranks every run, the CI is a bootstrap of the medians only"
	}
	mr.Warnings = appendUnique(mr.Warnings, why)
}

// values returns the recorded values of a metric, in run order, and whether every run records it.
func values(a *Arm, metric string) ([]float64, bool) {
	out := make([]float64, 0, len(a.Runs))
	all := true
	for i := range a.Runs {
		if v, ok := a.Runs[i].Value(metric); ok {
			out = append(out, v)
		} else {
			all = false
		}
	}
	return out, all
}

func armStat(xs []float64, confidence float64) (ArmStat, []string) {
	s := stats.Summarize(xs, confidence)
	st := ArmStat{N: s.N, Median: ptr(s.Center)}
	if s.CIOK {
		st.Lo, st.Hi = ptr(s.Lo), ptr(s.Hi)
	}
	return st, s.Warnings
}

func compareMetric(base, arm *Arm, metric string, opt ABOptions) MetricResult {
	mr := MetricResult{Name: metric, Baseline: base.Name, Arm: arm.Name, Arms: map[string]ArmStat{}, Warnings: []string{}}
	x, xAll := values(base, metric)
	y, yAll := values(arm, metric)
	var w []string
	mr.Arms[base.Name], w = armStat(x, opt.Confidence)
	mr.Warnings = appendUnique(mr.Warnings, w...)
	mr.Arms[arm.Name], w = armStat(y, opt.Confidence)
	mr.Warnings = appendUnique(mr.Warnings, w...)
	if !xAll || !yAll {
		mr.Warnings = appendUnique(mr.Warnings, "not recorded in every run (turn durations exist only in some Claude Code versions)")
	}
	if len(x) == 0 || len(y) == 0 {
		mr.Test = "none"
		return mr
	}
	var c stats.Comparison
	if opt.Paired && xAll && yAll {
		var err error
		c, err = stats.ComparePaired(x, y, opt.Alpha, opt.Confidence, stats.PairedSignedRank)
		if err != nil {
			mr.Warnings = appendUnique(mr.Warnings, err.Error())
			mr.Test = "none"
			return mr
		}
	} else {
		if opt.Paired {
			mr.Warnings = appendUnique(mr.Warnings, "compared unpaired: not recorded in every run")
		}
		c = stats.CompareUnpaired(x, y, opt.Alpha, opt.Confidence)
	}
	mr.Test, mr.Exact, mr.N1, mr.N2 = c.Test, c.Exact, c.N1, c.N2
	mr.P = ptr(c.P)
	mr.Ratio, mr.RatioLo, mr.RatioHi = ptr(c.Ratio), ptr(c.RatioLo), ptr(c.RatioHi)
	if bs, as := mr.Arms[base.Name], mr.Arms[arm.Name]; bs.Lo == nil || as.Lo == nil {
		mr.RatioLo, mr.RatioHi = nil, nil
		mr.RatioNote = fmt.Sprintf("too few runs (n=%d)", min(bs.N, as.N))
	}
	mr.Warnings = appendUnique(mr.Warnings, c.Warnings...)
	mr.minP = c.MinP
	return mr
}

// holmFootnotes flags what the per-test footnote misses: when no test can pass Holm's first
// threshold α/m, no result can be significant at these sizes, even where a test alone could reach
// p ≤ α (4 runs per arm: smallest Mann–Whitney p 0.029, above 0.05/5). It names the runs per arm (or
// pairs) that would do.
func holmFootnotes(ms []MetricResult, alpha float64) {
	m, best := 0, math.Inf(1)
	paired := false
	for _, mr := range ms {
		if mr.P != nil && !math.IsNaN(*mr.P) {
			m++
			if mr.minP > 0 {
				best = math.Min(best, mr.minP)
			}
			paired = paired || mr.Test != stats.KindMannWhitney
		}
	}
	if m < 2 || math.IsInf(best, 1) || best <= alpha/float64(m) {
		return
	}
	need := 1
	for ; need < 1<<10; need++ {
		p := stats.MannWhitneyMinP(need, need)
		if paired {
			p = stats.SignTestMinP(need)
		}
		if p <= alpha/float64(m) {
			break
		}
	}
	unit := "runs per arm"
	if paired {
		unit = "pairs"
	}
	note := fmt.Sprintf("need ≥ %d %s for any significant result at alpha level %v after Holm over %d tests", need, unit, alpha, m)
	for i := range ms {
		if ms[i].P != nil && !math.IsNaN(*ms[i].P) {
			ms[i].Warnings = appendUnique(ms[i].Warnings, note)
		}
	}
}

func appendUnique(xs []string, add ...string) []string {
	for _, a := range add {
		dup := false
		for _, x := range xs {
			if x == a {
				dup = true
				break
			}
		}
		if !dup {
			xs = append(xs, a)
		}
	}
	return xs
}

// ErrPairing is returned when runs cannot be paired.
var ErrPairing = errors.New("cannot pair runs")

// pairRuns reorders each arm's runs so that run i of every arm belongs to pair i: by start time
// ("order"), or by task label ("task", one run per task and arm).
func pairRuns(arms []Arm, by string) ([]Arm, error) {
	out := make([]Arm, len(arms))
	switch by {
	case "order":
		for i, a := range arms {
			runs := append([]Run(nil), a.Runs...)
			sort.SliceStable(runs, func(p, q int) bool { return runs[p].First.Before(runs[q].First) })
			out[i] = Arm{Name: a.Name, Runs: runs}
			if len(runs) != len(arms[0].Runs) {
				return nil, fmt.Errorf("%w by order: arm %s has %d runs, arm %s has %d", ErrPairing, a.Name, len(runs), arms[0].Name, len(arms[0].Runs))
			}
		}
	case "task":
		var tasks []string
		for i, a := range arms {
			byTask := map[string]Run{}
			for _, r := range a.Runs {
				if r.Task == "" {
					return nil, fmt.Errorf("%w by task: run %s of arm %s is not in a task directory (ARM/TASK/…)", ErrPairing, r.Session, a.Name)
				}
				if _, dup := byTask[r.Task]; dup {
					return nil, fmt.Errorf("%w by task: arm %s has several runs of task %s", ErrPairing, a.Name, r.Task)
				}
				byTask[r.Task] = r
			}
			if i == 0 {
				for t := range byTask {
					tasks = append(tasks, t)
				}
				sort.Strings(tasks)
			}
			if len(byTask) != len(tasks) {
				return nil, fmt.Errorf("%w by task: arm %s has %d tasks, arm %s has %d", ErrPairing, a.Name, len(byTask), arms[0].Name, len(tasks))
			}
			out[i] = Arm{Name: a.Name}
			for _, t := range tasks {
				r, ok := byTask[t]
				if !ok {
					return nil, fmt.Errorf("%w by task: arm %s has no run of task %s", ErrPairing, a.Name, t)
				}
				out[i].Runs = append(out[i].Runs, r)
			}
		}
	default:
		return nil, fmt.Errorf("%w: unknown pairing %q (want order or task)", ErrPairing, by)
	}
	return out, nil
}
