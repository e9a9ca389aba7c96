package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/testutil"
	"github.com/ldd-tools/tune/internal/tools/genquiet"
	"github.com/ldd-tools/tune/internal/weights"
)

// The sixth review's property (b): a project that keeps its nightly states and one whose states are
// deleted every night decide the same, night after night, on a team's calendar (genquiet: weekends,
// holidays, bursts, meta times out of order, nights at random clock times, some days none, some two)
// with a log truncated in the middle of a line and written on, twice.
func TestReview6StateDecidesAsAFullRead(t *testing.T) {
	n := 1 // REVIEW6_N=6 for the review's numbers
	if s := os.Getenv("REVIEW6_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	w := testutil.ReferenceWeights()
	nights, bad, resumed, logNights, applies := 0, 0, 0, 0, 0
	watchNights, watchBad, watchResumed := 0, 0, 0
	for seed := 1; seed <= n; seed++ {
		h := genquiet.New(uint64(100+seed), &w, genquiet.Options{Days: 100, Logs: 2})
		var now time.Time
		cached, full := newStateProject(t, &now, 2), newStateProject(t, &now, 2)
		for _, p := range []*stateProject{cached, full} {
			for _, l := range p.logs {
				appendFile(t, l, nil)
			}
		}
		prev := make([][]byte, 2)
		cuts := map[int]bool{len(h.Nights) / 3: true, 2 * len(h.Nights) / 3: true}
		applyAt := -1 // the first night from a quarter in with tasks in both logs
		for k, night := range h.Nights {
			for i := range h.Logs {
				text := h.Logs[i].Text(night)
				for _, p := range []*stateProject{cached, full} {
					appendFile(t, p.logs[i], text[len(prev[i]):])
					if cuts[k] && i == k%2 { // truncated in the middle of a line, then written on
						rewriteLog(t, p.logs[i], func(b []byte) []byte { return b[:len(b)*3/5] })
					}
				}
				prev[i] = text
			}
			if err := os.RemoveAll(filepath.Join(full.env.WeightsDir, store.CacheDir)); err != nil {
				t.Fatal(err)
			}
			if applyAt < 0 && k >= len(h.Nights)/4 && len(prev[0]) > 0 && len(prev[1]) > 0 {
				applyAt = k // a version to watch: contract-rule-hit +1 lifts genquiet.Lifted
				for _, p := range []*stateProject{cached, full} {
					applyStepByHand(t, p.env, night.Add(-time.Minute), weights.ContractRuleHit, 1)
				}
			}
			if applyAt >= 0 && k > applyAt {
				if cached.resumesWatch(t) {
					watchResumed++
				}
				now = night
				_, outs := watchBoth(t, k, cached, full)
				watchNights++
				if !bytes.Equal(outs[0], outs[1]) {
					watchBad++
					if watchBad <= 3 {
						t.Errorf("seed %d night %d: the watch from its state judged otherwise than the full read:\n%s\n%s", seed, k, outs[0], outs[1])
					}
				}
			}
			resumed += cached.resumes(t)
			logNights += 2
			now = night
			var outs [2][]byte
			for i, p := range []*stateProject{cached, full} {
				var out *NightlyResult
				if out, outs[i] = p.night(t); out.Review != "" && i == 0 {
					applies++
				}
			}
			nights++
			if !bytes.Equal(outs[0], outs[1]) {
				bad++
				if bad <= 3 {
					t.Errorf("seed %d night %d (%s): the night from the state decided otherwise than the full read:\n%s\n%s",
						seed, k, night.Format(time.RFC3339), outs[0], outs[1])
				}
			}
		}
	}
	t.Logf("watch: nights judged otherwise than a full read %s; taken up from its state %s", genquiet.Rate(watchBad, watchNights), genquiet.Rate(watchResumed, watchNights))
	t.Logf("%d histories, %d nights: nights that decided otherwise than a full read %s; log-nights taken up from the state %s; %d applies",
		n, nights, genquiet.Rate(bad, nights), genquiet.Rate(resumed, logNights), applies)
}
