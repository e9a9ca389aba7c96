package accuracy

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"
)

// writeHistory writes a synthetic v0.13-format log of n tasks that the reference reader reads
// exactly as traceparse does: labels, canonical signal names with integer weights, a loss on every
// iteration. It covers what the real logs do not: overkill and underkill, failed and aborted tasks,
// a close without terminal=, loss_final on some closes only, open tasks, ties among top signals,
// even counts (medians of two), and a spread of meta times for the window. Deterministic in seed.
func writeHistory(w io.Writer, seed uint64, n int) {
	r := rand.New(rand.NewPCG(seed, 12))
	names := []string{"reflex", "diagnostic", "deliberate", "structural", "method"}
	dispatch := []string{"auto", "auto", "auto", "bump", "explicit", "override-down"}
	sigs := []string{"greenfield:+3", "components>=3:+2", "cross-layer:+2", "ambiguous:+2", "explicit-bugfix:-5", "single-file:-3", "layer-crossings:+2", "contract-rule-hit:+2", "unknown-file-territory:+1"}
	terminals := []string{"complete", "complete", "complete", "partial", "failed", "aborted", "handoff", ""}
	at := time.Date(2026, 9, 1, 8, 0, 0, 0, time.UTC)
	ts := func() string {
		at = at.Add(time.Duration(1+r.IntN(90)) * time.Second)
		return at.Format("2006-01-02T15:04:05.000000Z")
	}
	for i := range n {
		at = at.Add(time.Duration(r.IntN(30)) * time.Hour)
		lvl := r.IntN(5)
		var meta []string
		meta = append(meta, ts(), "meta", fmt.Sprintf("L%d/%s", lvl, names[lvl]))
		if lvl >= 3 {
			meta = append(meta, "creativity=standard")
		}
		meta = append(meta, "dispatch="+dispatch[r.IntN(len(dispatch))])
		if k := r.IntN(4); k > 0 {
			perm := r.Perm(len(sigs))[:k]
			var s []string
			for _, j := range perm {
				s = append(s, sigs[j])
			}
			meta = append(meta, "signals="+strings.Join(s, ","))
		}
		if i%3 == 0 {
			meta = append(meta, fmt.Sprintf("weights=v%04d", 1+i/20))
		}
		meta = append(meta, fmt.Sprintf("task=\"synthetic task %d\"", i), "loops=inner")
		fmt.Fprintln(w, strings.Join(meta, "  "))
		loss := float64(r.IntN(1001)) / 1000
		if r.IntN(3) > 0 {
			fmt.Fprintf(w, "%s  inner  baseline  skill=baseline  action=baseline  loss=%.3f  raw=3/5\n", ts(), loss)
		}
		// k: mostly small, sometimes 5 or more (underkill at L0/L1).
		k := []int{0, 1, 1, 1, 2, 2, 3, 4, 5, 6, 7}[r.IntN(11)]
		for j := 1; j <= k; j++ {
			if r.IntN(2) == 0 {
				loss = float64(r.IntN(1001)) / 1000
			} else if r.IntN(2) == 0 {
				loss = float64(r.IntN(11)) / 1000 // at or under the overkill bound
			}
			fmt.Fprintf(w, "%s  inner  k=%d  skill=root-cause-by-layer  action=\"step %d\"  loss=%.3f  raw=1/5\n", ts(), j, j, loss)
		}
		if r.IntN(9) == 0 {
			continue // still open
		}
		close := []string{ts(), "inner", "close"}
		if t := terminals[r.IntN(len(terminals))]; t != "" {
			close = append(close, "terminal="+t)
		}
		if r.IntN(2) == 0 {
			close = append(close, fmt.Sprintf("loss_final=%.3f", []float64{0, 0.005, 0.01, 0.011, 0.125, 0.5, loss}[r.IntN(7)]))
		}
		fmt.Fprintln(w, strings.Join(close, "  "))
	}
}
