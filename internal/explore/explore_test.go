package explore

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ldd-tools/tune/internal/scorer"
	"github.com/ldd-tools/tune/internal/stats"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/traceparse"
	"github.com/ldd-tools/tune/internal/weights"
)

// auto is an auto dispatch of raw score raw (in points) under w, as the scorer makes it.
func auto(w *weights.Weights, raw float64, creativity string) scorer.Result {
	h := weights.Half(raw * 2)
	lv := w.Level(h)
	r := scorer.Result{RawScore: h, AutoLevel: lv, FinalLevel: lv, Creativity: creativity, DispatchSource: scorer.SourceAuto}
	if lv == weights.L4 && creativity == scorer.Standard {
		reason := scorer.ClampedFromL4
		r.AutoLevel, r.FinalLevel, r.ClampReason = weights.L3, weights.L3, &reason
	}
	return r
}

// TestNear pins the near-edge rule on the reference buckets (L0 ≤ −7, L1 ≤ −2, L2 ≤ 3, L3 ≤ 7): a
// task is near when a raise of margin points lifts it, below L4, never against the clamp.
func TestNear(t *testing.T) {
	w := testutil.ReferenceWeights()
	for _, c := range []struct {
		raw        float64
		creativity string
		margin     float64
		want       bool
	}{
		{-7, scorer.Standard, 1, true},    // L0 on its edge: +1 makes −6, L1
		{-7.5, scorer.Standard, 1, true},  // half a point below
		{-8, scorer.Standard, 1, false},   // +1 makes −7, still L0
		{-8, scorer.Standard, 1.5, true},  // a wider margin takes it
		{-9, scorer.Standard, 2, false},   // +2 makes −7
		{-2, scorer.Standard, 1, true},    // L1 on its edge
		{-3, scorer.Standard, 1, false},   // L1, a point below
		{3, scorer.Standard, 1, true},     // L2 on its edge
		{7, scorer.Inventive, 1, true},    // L3 on its edge, L4 allowed
		{7, scorer.Standard, 1, false},    // L4 at standard creativity runs at L3 (the clamp)
		{8, scorer.Inventive, 5, false},   // L4: no level above
		{8, scorer.Standard, 5, false},    // clamped to L3: its score is past the edge
		{0, scorer.Standard, 5, true},     // L2, 3 points below its edge
		{0, scorer.Standard, 3, false},    // +3 makes 3, still L2
		{-12, scorer.Standard, 5, false},  // +5 makes −7
		{-11.5, scorer.Standard, 5, true}, // +5 makes −6.5, L1
	} {
		r := auto(&w, c.raw, c.creativity)
		if got := Near(&r, &w, c.margin); got != c.want {
			t.Errorf("raw %v (%s, %s) margin %v: near %v, want %v", c.raw, r.AutoLevel, c.creativity, c.margin, got, c.want)
		}
	}
	// A user's override is never explored, even on an edge.
	r := auto(&w, -2, scorer.Standard)
	r.DispatchSource = scorer.SourceBump
	if Near(&r, &w, 1) {
		t.Error("a bump is near")
	}
	// The real scorer: "fix the bug in the new greenfield module from scratch" is −2 (L1 on its edge).
	sr := scorer.Score("fix the bug in the new greenfield module from scratch", nil, &w)
	if sr.RawScore != weights.Whole(-2) || !Near(&sr, &w, DefaultMargin) {
		t.Errorf("scored %s at %v: not near", sr.AutoLevel, sr.RawScore)
	}
}

// TestUnitIsFixed pins the draw's bytes: a change to Unit would silently re-draw every project's arms.
// sha256("2026-11-01T10:00:00.000000Z\x00greenfield fix 2") begins c612c957: its first 53 bits over
// 2^53 are 0.773724159040.
func TestUnitIsFixed(t *testing.T) {
	if got := fmt.Sprintf("%.12f", Unit("2026-11-01T10:00:00.000000Z", "greenfield fix 2")); got != "0.773724159040" {
		t.Errorf("Unit = %s, want 0.773724159040", got)
	}
	if Unit("ab", "c") == Unit("a", "bc") {
		t.Error("the stamp and the title are not kept apart")
	}
}

// TestDrawShare: over many titles the raised share stays within the binomial's 99.9 % bounds, for each
// share, and only near-edge tasks are drawn at all.
func TestDrawShare(t *testing.T) {
	w := testutil.ReferenceWeights()
	near, far := auto(&w, -2, scorer.Standard), auto(&w, -4, scorer.Standard)
	const n = 20000
	for _, share := range []float64{0.01, 0.05, 0.1, 0.2} {
		c := Config{Share: share}
		raised, control := 0, 0
		for i := range n {
			stamp := fmt.Sprintf("2026-11-%02dT%02d:%02d:00.000000Z", 1+i%28, i/60%24, i%60)
			title := fmt.Sprintf("task %d", i)
			switch arm, ok := c.Draw(&near, &w, stamp, title); {
			case !ok:
				t.Fatalf("share %v: a near task was not drawn", share)
			case arm == Raised:
				raised++
			default:
				control++
			}
			if _, ok := c.Draw(&far, &w, stamp, title); ok {
				t.Fatalf("share %v: a task 2 points below its edge was drawn", share)
			}
		}
		mean, sd := n*share, math.Sqrt(n*share*(1-share))
		if d := math.Abs(float64(raised) - mean); d > 3.29*sd {
			t.Errorf("share %v: %d raised of %d, %.1f sd from %.0f", share, raised, n, d/sd, mean)
		}
		lo, hi := stats.Wilson(raised, n, 0.95)
		t.Logf("share %v: raised %d/%d = %.4f [%.4f, %.4f]", share, raised, n, float64(raised)/n, lo, hi)
	}
	if _, ok := (Config{}).Draw(&near, &w, "x", "y"); ok {
		t.Error("share 0 drew a task")
	}
}

func TestApply(t *testing.T) {
	w := testutil.ReferenceWeights()
	r := scorer.Score("fix the bug in the new greenfield module from scratch", nil, &w)
	c := Config{Share: 0.05}
	got, extra := c.Apply(r, Raised, map[string]string{"regression_of": "x"})
	if got.FinalLevel != weights.L2 || got.AutoLevel != weights.L1 || got.DispatchSource != scorer.SourceExplore {
		t.Errorf("raised: %+v", got)
	}
	if want := "Dispatched: L2/deliberate (explore from L1; signals: explicit-bugfix=-5, greenfield=+3)"; got.DispatchHeader != want {
		t.Errorf("header %q, want %q", got.DispatchHeader, want)
	}
	if extra[FieldArm] != "raised" || extra[FieldLevel] != "L1" || extra[FieldShare] != "0.05" || extra["regression_of"] != "x" {
		t.Errorf("extra %v", extra)
	}
	same, extra := c.Apply(r, Control, nil)
	if same.DispatchHeader != r.DispatchHeader || same.FinalLevel != r.FinalLevel || extra[FieldArm] != "control" {
		t.Errorf("control changed the dispatch: %+v %v", same, extra)
	}
}

func TestParseConfig(t *testing.T) {
	for _, c := range []struct {
		doc, want, err string
	}{
		{"", "{0 0}", ""},
		{"[watch]\nmin_tasks = 3\n", "{0 0}", ""},
		{"[explore]\nshare = 0.1\n", "{0.1 0}", ""},
		{"[explore]\nshare = 0\nmargin = 2.5\n", "{0 2.5}", ""},
		{"[explore]\nshare = 0.25\n", "", "config tune.toml:2: explore.share = 0.25: want a probability between 0 (off) and 0.2"},
		{"[explore]\nshare = -0.1\n", "", "explore.share = -0.1"},
		{"[explore]\nshare = nan\n", "", "explore.share = NaN"},
		{"[explore]\nmargin = 0\n", "", "explore.margin = 0 would be read as the default"},
		{"[explore]\nmargin = 0.3\n", "", "explore.margin = 0.3: want a multiple of 0.5"},
		{"[explore]\nmargin = 6\n", "", "explore.margin = 6: want score points between 0.5 and 5"},
		{"[explore]\nshares = 0.1\n", "", "config tune.toml: unknown key explore.shares ([explore] takes share"},
		{"explore = 3\n", "", "config tune.toml:"},
		{"[explore]\nshare = \"0.1\"\n", "", "config tune.toml:"},
	} {
		got, err := ParseConfig("tune.toml", []byte(c.doc))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one containing %q", c.doc, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.doc, err)
		case c.err == "" && fmt.Sprint(got) != c.want:
			t.Errorf("%q: %v, want %s", c.doc, got, c.want)
		}
	}
}

func TestReadConfig(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// Outside a project: off.
	if c, err := ReadConfig(sub, ""); err != nil || c.On() {
		t.Fatalf("no project: %+v %v", c, err)
	}
	if err := os.WriteFile(filepath.Join(root, "tune.toml"), []byte("[explore]\nshare = 0.05\nmargin = 1.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := ReadConfig(sub, ""); err != nil || c != (Config{Share: 0.05, Margin: 1.5}) {
		t.Fatalf("from a subdirectory: %+v %v", c, err)
	}
	// TUNE_CONFIG wins, and must exist.
	other := filepath.Join(root, "other.toml")
	if err := os.WriteFile(other, []byte("[explore]\nshare = 0.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := ReadConfig(sub, other); err != nil || c.Share != 0.2 {
		t.Fatalf("TUNE_CONFIG: %+v %v", c, err)
	}
	if _, err := ReadConfig(sub, filepath.Join(root, "missing.toml")); err == nil {
		t.Fatal("a missing TUNE_CONFIG file was read as off")
	}
}

func TestRecordOf(t *testing.T) {
	const ts = "2026-11-01T10:00:00.000000Z"
	for _, c := range []struct {
		meta string
		want Recorded
		ok   bool
		err  string
	}{
		{"L1/diagnostic  dispatch=auto  task=x  loops=inner", Recorded{}, false, ""},
		{"L1/diagnostic  dispatch=auto  task=x  loops=inner  explore=control  explore_level=L1", Recorded{Control, weights.L1, ""}, true, ""},
		{"L2/deliberate  dispatch=explore  task=x  loops=inner  explore=raised  explore_level=L1", Recorded{Raised, weights.L1, ""}, true, ""},
		{"L2/deliberate  dispatch=auto  task=x  loops=inner  explore=raised  explore_level=L1", Recorded{}, true, "want dispatch=explore"},
		{"L3/structural  creativity=standard  dispatch=explore  task=x  loops=inner  explore=raised  explore_level=L1", Recorded{}, true, "one level above"},
		{"L1/diagnostic  dispatch=bump  task=x  loops=inner  explore=control  explore_level=L1", Recorded{}, true, "want dispatch=auto"},
		{"L1/diagnostic  dispatch=auto  task=x  loops=inner  explore=both  explore_level=L1", Recorded{}, true, "neither"},
		{"L4/method  creativity=inventive  dispatch=explore  task=x  loops=inner  explore=raised  explore_level=L4", Recorded{}, true, "not a level L0..L3"},
		{"L1/diagnostic  dispatch=auto  task=x  loops=inner  explore=control", Recorded{}, true, "not a level"},
		{"L2/deliberate  dispatch=explore  task=x  loops=inner  explore=raised  explore_level=L1  explore_share=0.05", Recorded{Raised, weights.L1, "0.05"}, true, ""},
		{"L1/diagnostic  dispatch=auto  task=x  loops=inner  explore=control  explore_level=L1  explore_share=0.5", Recorded{}, true, "not a share"},
		{"L1/diagnostic  dispatch=auto  task=x  loops=inner  explore=control  explore_level=L1  explore_share=NaN", Recorded{}, true, "not a share"},
		{"L1/diagnostic  dispatch=auto  task=x  loops=inner  explore=control  explore_level=L1  explore_share=0", Recorded{}, true, "not a share"},
	} {
		res, err := traceparse.Parse(strings.NewReader(ts+"  meta  "+c.meta+"\n"), "t.log")
		if err != nil || len(res.Tasks) != 1 {
			t.Fatalf("%s: %v", c.meta, err)
		}
		got, ok, err := RecordOf(&res.Tasks[0])
		switch {
		case ok != c.ok:
			t.Errorf("%s: ok %v", c.meta, ok)
		case c.err != "" && (err == nil || !errors.Is(err, ErrInconsistent) || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.meta, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s: %+v %v, want %+v", c.meta, got, err, c.want)
		}
	}
}

// FuzzParseConfig: whatever the bytes, ParseConfig returns an error or a config inside its bounds,
// which a draw can use.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{"", "[explore]\nshare = 0.1\nmargin = 1.5\n", "[explore]\nshare = 1e309\n", "[explore]\nmargin = -0.5\n",
		"[explore]\nshare = inf\n", "[explore.x]\ny = 1\n", "explore = { share = 0.2 }\n", "[explore]\nshare = 0.2\n[watch]\nalpha = 0.5\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig("tune.toml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "config tune.toml") {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		m := c.WithDefaults().Margin
		if !(c.Share >= 0 && c.Share <= MaxShare) || !(m >= 0.5 && m <= MaxMargin) || m*2 != math.Trunc(m*2) {
			t.Fatalf("accepted %+v from %q", c, data)
		}
	})
}
