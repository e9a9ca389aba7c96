package evolve

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/weights"
)

// reviewTasks is a log of eligible tasks, one an hour from start, each a carrier of ambiguous or not and
// flagged (regression_followed=true on its close) or not.
func reviewTasks(start time.Time, carrier, flagged []bool) string {
	var b strings.Builder
	for i := range carrier {
		at := start.Add(time.Duration(i) * time.Hour)
		sigs, title, close := "explicit-bugfix:-5", fmt.Sprintf("fix bug %d", i), ""
		if carrier[i] {
			sigs, title = "explicit-bugfix:-5,ambiguous:+2", fmt.Sprintf("quick patch %d", i)
		}
		if flagged[i] {
			close = "  regression_followed=true"
		}
		fmt.Fprintf(&b, "%s  meta  L0/reflexive  dispatch=auto  signals=%s  task=%q  loops=inner\n", at.Format(time.RFC3339), sigs, title)
		fmt.Fprintf(&b, "%s  inner  close  terminal=complete  loss_final=0.100%s\n", at.Add(2*time.Second).Format(time.RFC3339), close)
	}
	return b.String()
}

// kinds lays out n tasks: the first carriers are carriers, of them the first carriersFlagged flagged;
// of the others the first othersFlagged flagged.
func kinds(n, carriers, carriersFlagged, othersFlagged int) (carrier, flagged []bool) {
	carrier, flagged = make([]bool, n), make([]bool, n)
	for i := 0; i < n; i++ {
		carrier[i] = i < carriers
		flagged[i] = i < carriersFlagged || (i >= carriers && i < carriers+othersFlagged)
	}
	return carrier, flagged
}

// Two projects' logs, in each of which carriers of ambiguous regress exactly as often as the other
// eligible tasks (half of them in the first, none in the second); the first regresses more and carries
// ambiguous more often. Pooled, the carriers regress 12 of 27 times and the others 3 of 63: the pooled
// test passes (Simpson). The per-log null must not.
func TestReviewPooledLogsSimpson(t *testing.T) {
	w := refWeights(t)
	start := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	c1, f1 := kinds(30, 24, 12, 3)
	c2, f2 := kinds(60, 3, 0, 0)
	tasks := parseLog(t, "a/trace.log", []byte(reviewTasks(start, c1, f1))).Tasks
	tasks = append(tasks, parseLog(t, "b/trace.log", []byte(reviewTasks(start, c2, f2))).Tasks...)
	det := Detect(DetectInput{Tasks: tasks, Resolver: Resolver{Active: &w}})
	r := det.Screen[weights.Ambiguous]
	pooled := EValue(r.A, r.B, r.C, r.D)
	t.Logf("pooled table %d/%d/%d/%d: pooled-null e = %.3g; per-log null e = %.3g (%s), %d more needed", r.A, r.B, r.C, r.D, pooled, float64(r.EValue), r.Verdict, r.MoreNeeded)
	if pooled < Threshold {
		t.Fatalf("the reproduction no longer shows the pooled e-value passing: %.1f", pooled)
	}
	if r.Verdict == VerdictCandidate || float64(r.EValue) >= Threshold {
		t.Errorf("ambiguous is a candidate on two logs where it changes nothing: e %.1f, %s", float64(r.EValue), r.Verdict)
	}
}

// reviewLog is a log of eligible tasks, one an hour from start: benign explicit bug fixes and, at the
// given positions, flagged carriers of ambiguous (regression_followed=true on the close). Both score L0
// under the reference weights (-5, -3).
func reviewLog(start time.Time, n int, flagged map[int]bool) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		at := start.Add(time.Duration(i) * time.Hour)
		sigs, title, close := "explicit-bugfix:-5", fmt.Sprintf("fix bug %d", i), ""
		if flagged[i] {
			sigs, title, close = "explicit-bugfix:-5,ambiguous:+2", fmt.Sprintf("quick patch %d", i), "  regression_followed=true"
		}
		fmt.Fprintf(&b, "%s  meta  L0/reflexive  dispatch=auto  signals=%s  task=%q  loops=inner\n", at.Format(time.RFC3339), sigs, title)
		fmt.Fprintf(&b, "%s  inner  close  terminal=complete  loss_final=0.100%s\n", at.Add(2*time.Second).Format(time.RFC3339), close)
	}
	return b.String()
}

// The same log read twice (a relative and an absolute path: ReadTraceLogs dedupes by filepath.Clean
// only, and both are relabelled to the same project-relative name) must not count its tasks twice: the
// e-value of a doubled table is far above the single one's, and noise would pass.
func TestReviewLogReadTwiceCountsOnce(t *testing.T) {
	w := refWeights(t)
	start := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	// 3 flagged carriers among 15 eligible tasks: e ≈ 125 < 450 once.
	tasks := parseLog(t, ".ldd/trace.log", []byte(reviewLog(start, 15, map[int]bool{2: true, 6: true, 9: true}))).Tasks
	once := Detect(DetectInput{Tasks: tasks, Resolver: Resolver{Active: &w}})
	twice := Detect(DetectInput{Tasks: append(append(tasks[:0:0], tasks...), tasks...), Resolver: Resolver{Active: &w}})
	r1, r2 := once.Screen[weights.Ambiguous], twice.Screen[weights.Ambiguous]
	t.Logf("once: %d/%d/%d/%d e=%.1f %s; twice: %d/%d/%d/%d e=%.1f %s", r1.A, r1.B, r1.C, r1.D, float64(r1.EValue), r1.Verdict,
		r2.A, r2.B, r2.C, r2.D, float64(r2.EValue), r2.Verdict)
	if r1.A != r2.A || r1.B != r2.B || r1.C != r2.C || r1.D != r2.D || once.Accumulated != twice.Accumulated {
		t.Errorf("reading the log twice changed the evidence: %+v vs %+v", r1, r2)
	}
}

// MoreNeededOnsets must give the smallest count a linear search written apart gives, on one log, on two,
// and on one log's two blocks, where only the latest takes the regressions still to come.
func TestReviewMoreNeededIsTheSmallest(t *testing.T) {
	linear := func(tables []Table, blocks []int, latest []bool) int {
		for k := 0; k <= MaxMoreNeeded; k++ {
			for i := range tables {
				if latest != nil && !latest[i] {
					continue
				}
				with := append([]Table(nil), tables...)
				with[i][0] += k
				if PassesOnsets(with, blocks) {
					return k
				}
			}
		}
		return -1
	}
	for a := 0; a <= 6; a += 2 {
		for b := 0; b <= 9; b += 3 {
			for c := 0; c <= 4; c += 2 {
				for d := 0; d <= 40; d += 8 {
					for _, x := range []struct {
						tables []Table
						blocks []int
						latest []bool
					}{
						{[]Table{{a, b, c, d}}, nil, nil},
						{[]Table{{a, b, c, d}, {1, b, c + 1, d / 2}}, nil, nil},
						{[]Table{{a, b, c, d}, {1, b, c + 1, d / 2}}, []int{0, 1}, []bool{false, true}},
					} {
						if got, want := MoreNeededOnsets(x.tables, x.blocks, x.latest), linear(x.tables, x.blocks, x.latest); got != want {
							t.Errorf("%v blocks %v: MoreNeededOnsets %d, linear search %d", x.tables, x.blocks, got, want)
						}
					}
				}
			}
		}
	}
}

// The same Simpson layout within ONE log, its two periods 60 days apart: the first period regresses more
// and carries ambiguous more often, and within each period carriers regress as often as the others. Fitted
// over the whole log the null is rejected; fitted per 30-day block (StratumSpan) it must not be.
func TestDriftWithinOneLogIsNotASignal(t *testing.T) {
	w := refWeights(t)
	start := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	c1, f1 := kinds(30, 24, 12, 3)
	c2, f2 := kinds(60, 3, 0, 0)
	log := reviewTasks(start, c1, f1) + reviewTasks(start.Add(60*24*time.Hour), c2, f2)
	tasks := parseLog(t, "a/trace.log", []byte(log)).Tasks
	det := Detect(DetectInput{Tasks: tasks, Resolver: Resolver{Active: &w}})
	r := det.Screen[weights.Ambiguous]
	if pooled := EValue(r.A, r.B, r.C, r.D); pooled < Threshold {
		t.Fatalf("the reproduction no longer shows the whole-log null passing: %.1f", pooled)
	}
	if r.Verdict == VerdictCandidate || float64(r.EValue) >= Threshold {
		t.Errorf("ambiguous passes on a drift it has nothing to do with: e %.1f, %s", float64(r.EValue), r.Verdict)
	}
}

// One failure in a busy module speaks for one earlier task: three eligible tasks in pay.go that failed
// themselves, followed by two failed tasks in pay.go, used to be three same-area regressions (each task's
// next two failed). Each later task now speaks for one earlier task, the nearest first: task 2 takes tasks
// 3 and 4, task 1 finds task 3 taken, task 0 takes tasks 1 and 2.
func TestSameAreaWitnessSpeaksOnce(t *testing.T) {
	w := refWeights(t)
	start := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var b strings.Builder
	task := func(i int, level, sigs, terminal string) {
		at := start.Add(time.Duration(i) * time.Hour)
		fmt.Fprintf(&b, "%s  meta  %s  dispatch=auto  signals=%s  task=\"task %d\"  loops=inner\n", at.Format(time.RFC3339), level, sigs, i)
		fmt.Fprintf(&b, "%s  inner  k=1  action=\"edit\"  loss=0.1  files=src/pay.go\n", at.Add(time.Second).Format(time.RFC3339))
		fmt.Fprintf(&b, "%s  inner  close  terminal=%s  loss_final=0.100\n", at.Add(2*time.Second).Format(time.RFC3339), terminal)
	}
	for i := 0; i < 3; i++ {
		task(i, "L0/reflexive", "explicit-bugfix:-5", "failed")
	}
	task(3, "L2/deliberate", "cross-layer:+2", "failed")
	task(4, "L2/deliberate", "cross-layer:+2", "failed")
	tasks := parseLog(t, "a/trace.log", []byte(b.String())).Tasks
	det := Detect(DetectInput{Tasks: tasks, Resolver: Resolver{Active: &w}})
	var flagged []string
	for _, f := range det.Flagged {
		flagged = append(flagged, f.Title)
	}
	if strings.Join(flagged, ",") != "task 0,task 2" {
		t.Errorf("flagged %q; want task 0 and task 2 (each witness speaking once)", flagged)
	}
}

// A single same-area witness never flags a task (the tests do not count it) but enters the excess a
// change is credited with (docs/decisions.md#weak-witness): here every carrier's regression is recorded
// only as one failing later task in its file, which the second same-area task then contradicts.
func TestWeakWitnessEntersOnlyTheExcess(t *testing.T) {
	w := refWeights(t)
	var lg fileTrace
	for i := 0; i < 12; i++ {
		file := fmt.Sprintf("src/m%d.go", i)
		if i%2 == 0 { // a carrier (−3, L1; cross-layer +2 lifts it), then a failing and a passing follower
			lg.task("L1/methodical", "explicit-bugfix:-5,cross-layer:+2", file, "success")
			lg.task("L2/deliberate", "layer-crossings:+2", file, "failed")
		} else { // a task without the signal, then two passing followers
			lg.task("L1/methodical", "explicit-bugfix:-5", file, "success")
			lg.task("L2/deliberate", "layer-crossings:+2", file, "success")
		}
		lg.task("L2/deliberate", "layer-crossings:+2", file, "success")
	}
	det := Detect(DetectInput{Tasks: parseLog(t, "a/trace.log", []byte(lg.b.String())).Tasks, Resolver: Resolver{Active: &w}})
	if len(det.Flagged) != 0 {
		t.Fatalf("flagged %d task(s); a single same-area witness must flag none", len(det.Flagged))
	}
	row := det.Screen[weights.CrossLayer]
	if row.A != 0 || row.B != 6 || row.Verdict == VerdictCandidate {
		t.Fatalf("cross-layer's table %d/%d/%d/%d (%s); want 0/6/0/6, no candidate", row.A, row.B, row.C, row.D, row.Verdict)
	}
	up := Change{Kind: weights.ChangeSignal, Signal: weights.CrossLayer, Delta: weights.Whole(2)}
	// 6 of 6 lifted carriers with a witness against 0 of 6 others: (6+1)/8 − 1/8 = 0.75.
	for name, got := range map[string]float64{"row": float64(row.Excess), "lifted": liftedExcess(up, &w, det.screenTasks.cells).excess} {
		if math.Abs(got-0.75) > 1e-9 {
			t.Errorf("%s excess %.3f; want 0.75, the carriers' single witnesses counted", name, got)
		}
	}
}

// An effect after quiet months, read from a log as the nightly reads it: three months in which the
// carriers of ambiguous regress as often as the other eligible tasks, then a month in which most of them
// regress. The whole history's e-value, sunk by the quiet months, stays far below the threshold; the
// screen's, mixed over an onset at each 30-day block (docs/decisions.md#onsets-at-30-day-blocks), passes
// on the month since the onset, and more_needed counts in that latest block.
func TestDetectFindsAnEffectAfterQuietMonths(t *testing.T) {
	w := refWeights(t)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var log strings.Builder
	at := start
	add := func(n, carriers, carriersFlagged, othersFlagged int, every time.Duration) {
		c, f := kinds(n, carriers, carriersFlagged, othersFlagged)
		for i := range c {
			log.WriteString(reviewTasks(at, c[i:i+1], f[i:i+1]))
			at = at.Add(every)
		}
	}
	add(180, 54, 2, 7, 12*time.Hour) // 90 quiet days: carriers 2/54, others 7/126
	add(60, 20, 16, 2, 12*time.Hour) // 30 days of an effect: carriers 16/20, others 2/40
	tasks := parseLog(t, "a/trace.log", []byte(log.String())).Tasks
	det := Detect(DetectInput{Tasks: tasks, Resolver: Resolver{Active: &w}})
	r := det.Screen[weights.Ambiguous]
	whole := LogEValueStrata([]Table{{r.A, r.B, r.C, r.D}})
	t.Logf("ambiguous %d/%d/%d/%d: whole history e %.3g, screen (mixed over onsets) e %.3g, %s, %d more",
		r.A, r.B, r.C, r.D, math.Exp(whole), float64(r.EValue), r.Verdict, r.MoreNeeded)
	if math.Exp(whole) >= Threshold/10 {
		t.Fatalf("the reproduction no longer buries the effect in the whole history: e %.3g", math.Exp(whole))
	}
	if r.Verdict != VerdictCandidate {
		t.Errorf("ambiguous after quiet months: %s (e %.3g); want a candidate", r.Verdict, float64(r.EValue))
	}
	// The explanation names where the evidence comes from: the block the effect began in, 90 days on.
	if r.EvidenceSince != "2026-04-01" || !strings.Contains(det.Reason, "mostly on the tasks since 2026-04-01") {
		t.Errorf("evidence since %q, reason %q; want the block of 2026-04-01 named", r.EvidenceSince, det.Reason)
	}
	// Two of the effect's regressions fewer and the month alone no longer passes: more_needed says so
	// counting in the latest block, where they would arrive.
	var fewer strings.Builder
	at = start
	log.Reset()
	add(180, 54, 2, 7, 12*time.Hour)
	add(60, 20, 12, 2, 12*time.Hour)
	fewer.WriteString(log.String())
	det = Detect(DetectInput{Tasks: parseLog(t, "a/trace.log", []byte(fewer.String())).Tasks, Resolver: Resolver{Active: &w}})
	r = det.Screen[weights.Ambiguous]
	t.Logf("with 12 of 20: e %.3g, %s, %d more", float64(r.EValue), r.Verdict, r.MoreNeeded)
	if r.Verdict == VerdictCandidate || r.MoreNeeded < 1 || r.MoreNeeded > 8 {
		t.Errorf("with 12 of 20 carriers regressed: %s, %d more needed; want not yet, a handful more", r.Verdict, r.MoreNeeded)
	}
	// One task misdated two centuries ahead (a clock gone wrong) is a block of its own, far past the
	// others: it is one onset, not a window of twelve empty blocks ahead of the months that hold the
	// effect. Before, the onsets were the last twelve calendar blocks, here all of them past 2225: only
	// the whole history's term was left, e 8·10⁻⁶, and the effect was not found.
	log.Reset()
	at = start
	add(180, 54, 2, 7, 12*time.Hour)
	add(60, 20, 16, 2, 12*time.Hour)
	at = time.Date(2226, 1, 1, 0, 0, 0, 0, time.UTC)
	add(1, 0, 0, 0, time.Hour)
	det = Detect(DetectInput{Tasks: parseLog(t, "a/trace.log", []byte(log.String())).Tasks, Resolver: Resolver{Active: &w}})
	r = det.Screen[weights.Ambiguous]
	if r.Verdict != VerdictCandidate || r.EvidenceSince != "2026-04-01" {
		t.Errorf("beside a misdated task: %s (e %.3g), evidence since %q; want a candidate on the month of the effect", r.Verdict, float64(r.EValue), r.EvidenceSince)
	}
}

// The counts of new flagged carriers that make a signal pass need not be every count from some k on:
// in a stratum with few other tasks each one also raises the null's fitted rate there. The independent
// review of the onset mixture found this table, where one more regression in the latest block passes
// (e 564), ten peak near 1058 and fifty fall back to 296: a bisection that first asks whether 50
// pass answered "more than 50".
func TestMoreNeededIsNotBisected(t *testing.T) {
	tables, blocks, latest := []Table{{7, 1, 0, 12}, {1, 2, 0, 0}}, []int{0, 1}, []bool{false, true}
	at := func(k int) float64 {
		with := slices.Clone(tables)
		with[1][0] += k
		return math.Exp(LogEValueOnsets(with, blocks))
	}
	if at(0) >= Threshold || at(1) < Threshold || at(MaxMoreNeeded) >= Threshold {
		t.Fatalf("the reproduction changed: e %.0f, %.0f with one more, %.0f with %d more", at(0), at(1), at(MaxMoreNeeded), MaxMoreNeeded)
	}
	if got := MoreNeededOnsets(tables, blocks, latest); got != 1 {
		t.Errorf("more needed %d; want 1", got)
	}
}

// LogEValueOnsets sums the onsets' tables from the last block back; it must equal the mixture written
// out (each onset's LogEValueStrata over its strata), over the whole history and the last OnsetWindow
// blocks, for histories shorter and longer than the window, several logs, and tasks without a time.
func TestOnsetMixtureAsWrittenOut(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 13))
	for rep := 0; rep < 200; rep++ {
		logs, last := 1+r.IntN(3), r.IntN(20)
		var tables []Table
		var blocks []int
		for lg := 0; lg < logs; lg++ {
			for b := -1; b <= last; b++ {
				if r.IntN(4) == 0 {
					continue
				}
				tables = append(tables, Table{r.IntN(6), r.IntN(15), r.IntN(6), r.IntN(40)})
				block := b
				if b == -1 && r.IntN(2) == 0 {
					block = NoBlock // tasks without a time; -1 otherwise: the block before the origin
				}
				blocks = append(blocks, block)
			}
		}
		if r.IntN(3) == 0 {
			// A block far ahead of the others: one task misdated years on.
			tables = append(tables, Table{0, 0, 0, 1})
			blocks = append(blocks, last+50+r.IntN(3000))
		}
		top := 0
		held := map[int]bool{}
		for _, b := range blocks {
			top = max(top, b)
			held[b] = true
		}
		// The onsets weighed: every k ≥ 1 whose first block held (the first block ≥ k with a stratum)
		// is one of the last OnsetWindow blocks held from 1 on.
		var heldBlocks []int
		for b := range held {
			if b >= 1 {
				heldBlocks = append(heldBlocks, b)
			}
		}
		slices.Sort(heldBlocks)
		window := heldBlocks[max(0, len(heldBlocks)-OnsetWindow):]
		e := OnsetWeight * math.Exp(LogEValueStrata(tables))
		for k := 1; k <= top; k++ {
			firstHeld := k
			for !held[firstHeld] {
				firstHeld++
			}
			if !slices.Contains(window, firstHeld) {
				continue
			}
			var from []Table
			for i, tb := range tables {
				if blocks[i] >= k {
					from = append(from, tb)
				}
			}
			e += (1 - OnsetWeight) / float64(k*(k+1)) * math.Exp(LogEValueStrata(from))
		}
		e += (1 - OnsetWeight) / float64(top+1)
		if got := math.Exp(LogEValueOnsets(tables, blocks)); math.Abs(got-e) > 1e-9*math.Max(1, e) {
			t.Fatalf("%v blocks %v: e %.12g, written out %.12g", tables, blocks, got, e)
		}
	}
}

// A task's block is floored from its log's origin: a line whose time is before the origin (a log out of
// time order) gets a block before the first, and a task without a time NoBlock, a stratum of its own
// (the review of the onset mixture: truncated towards zero, 30–60 days before the origin was block -1,
// the untimed tasks' stratum).
func TestBlocksAreFlooredAndUntimedApart(t *testing.T) {
	origin := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	d := &detector{strata: map[[2]int]int{}}
	ls := &logStream{origin: origin}
	day := 24 * time.Hour
	for _, c := range []struct {
		at    time.Time
		block int
	}{
		{origin, 0}, {origin.Add(30*day - time.Nanosecond), 0}, {origin.Add(30 * day), 1},
		{origin.Add(-time.Nanosecond), -1}, {origin.Add(-30 * day), -1}, {origin.Add(-40 * day), -2},
		{time.Time{}, NoBlock},
	} {
		if got := d.keys[d.stratumOf(ls, c.at)][1]; got != c.block {
			t.Errorf("%v: block %d, want %d", c.at, got, c.block)
		}
	}
	if st := d.strataInTime(); st.since(1) != "2026-03-31" {
		t.Errorf("block 1 began %q; want 2026-03-31", st.since(1))
	}
}

// A strong effect over months takes the log e-value past 709, where exp overflows: the screen shows and
// a proposal stores it capped at 1e300 (MaxLogE), a number JSON carries, never +Inf (a proposal's id is
// the hash of its JSON, and hashing +Inf panicked: the review of this session).
func TestAHugeEValueIsCappedNotInfinite(t *testing.T) {
	carrier, other := []weights.Signal{weights.Ambiguous, weights.ExplicitBugfix}, []weights.Signal{weights.ExplicitBugfix}
	cells := []screenCell{
		{newScreenTask(carrier, 0, true, true), 300}, {newScreenTask(carrier, 0, true, false), 30},
		{newScreenTask(other, 0, true, true), 50}, {newScreenTask(other, 0, true, false), 3000},
	}
	if logE := LogEValueOnsets([]Table{{300, 30, 50, 3000}}, nil); logE < 710 {
		t.Fatalf("the reproduction no longer overflows: log e %.0f", logE)
	}
	r := Screen(cells, 350, Strata{})[weights.Ambiguous]
	if e := float64(r.EValue); math.IsInf(e, 0) || e != math.Exp(MaxLogE) || r.Verdict != VerdictCandidate {
		t.Errorf("e %v (%s); want the cap 1e300 and a candidate", e, r.Verdict)
	}
	js, err := json.Marshal(r)
	var back struct {
		E *float64 `json:"e_value"`
	}
	if err == nil {
		err = json.Unmarshal(js, &back)
	}
	if err != nil || back.E == nil || *back.E != math.Exp(MaxLogE) {
		t.Errorf("the row's JSON carries e_value %v (%v); want 1e300", back.E, err)
	}
}

// Onsets are times, and every log counts its blocks from its own origin: the mixture places them on
// one calendar. A second log that began two years after the first, quiet for a month and then with an
// effect for two, is judged on those months. Numbered by its own blocks (0–2) beside the first log's
// 25, its onset fell outside every term of the last twelve blocks (the review of this session: e 0.0008).
func TestOnsetsAreOnOneCalendarForEveryLog(t *testing.T) {
	a := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	b := a.Add(22 * StratumSpan)
	d := &detector{strata: map[[2]int]int{}}
	var tables []Table
	for k := range 25 {
		d.stratumOfLog(&logStream{index: 0, origin: a}, k)
		tables = append(tables, Table{1, 10, 10, 100})
	}
	for k, tb := range []Table{{2, 30, 20, 200}, {12, 3, 6, 60}, {12, 3, 6, 60}} {
		d.stratumOfLog(&logStream{index: 1, origin: b}, k)
		tables = append(tables, tb)
	}
	st := d.strataInTime()
	if got := st.Block[25:]; !slices.Equal(got, []int{22, 23, 24}) {
		t.Fatalf("the second log's blocks on the first's calendar: %v, want 22–24", got)
	}
	own := append(slices.Clone(st.Block[:25]), 0, 1, 2)
	calendar, numbered := math.Exp(LogEValueOnsets(tables, st.Block)), math.Exp(LogEValueOnsets(tables, own))
	t.Logf("e on one calendar %.3g, with each log's own block numbers %.3g", calendar, numbered)
	if calendar < 1 || numbered > 0.01 {
		t.Errorf("e on one calendar %.3g, numbered by each log's blocks %.3g: want the onset counted on one calendar", calendar, numbered)
	}
	if _, k := onsetMixture(tables, st.Block); k != 23 || st.since(k) != b.Add(StratumSpan).Format(time.DateOnly) {
		t.Errorf("evidence mostly from block %d since %q; want block 23, the second log's second month", k, st.since(k))
	}
}
