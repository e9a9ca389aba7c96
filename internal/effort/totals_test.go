package effort

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/transcript"
)

// TestTotalsMatchAudit: the requests and tokens tune effort spreads over levels and phases are the
// ones tune audit counts (transcript.Scan, its default rules: agent_progress copies attributed to
// their subagent and deduplicated against the subagent's own file), on every bundled corpus.
// Synthetic error replies (no API call, no tokens) are requests for both, at level unknown.
// Main-loop requests are the phases' (docs/decisions.md#effort-conformance-issue-14).
func TestTotalsMatchAudit(t *testing.T) {
	design := designCorpus(t)
	for name, root := range map[string]string{
		"sample":     sampleRoot,
		"audit":      filepath.Join("..", "audit", "testdata", "effort"),
		"costcorpus": filepath.Join("..", "audit", "testdata", "costcorpus"),
		"recorded":   filepath.Join("..", "audit", "testdata", "recordedcost"),
		"demo":       filepath.Join(demoDir, "transcripts"),
		"design":     design.root,
	} {
		t.Run(name, func(t *testing.T) {
			files, err := transcript.Discover([]string{root})
			if err != nil || len(files) == 0 {
				t.Fatalf("%s: %d files, %v", root, len(files), err)
			}
			res, err := transcript.Scan(files, transcript.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var want audit.Totals
			for i := range res.Requests {
				want.Add(&res.Requests[i], audit.Price(nil, &res.Requests[i]))
			}
			o, err := Observe(files, Options{Open: osOpen})
			if err != nil {
				t.Fatal(err)
			}
			w := countsOf(&want)
			var got, phases counts
			for _, b := range o.ByLevel {
				got.add(countsOf(&b.totals))
			}
			for _, b := range o.ByPhase {
				phases.add(countsOf(&b.totals))
			}
			if got != w {
				t.Errorf("effort per level %+v\naudit           %+v", got, w)
			}
			if o.Input.Requests != w.Requests {
				t.Errorf("effort read %d requests, the audit %d", o.Input.Requests, w.Requests)
			}
			if phases.Requests != w.Main || phases.Sub != 0 || phases.MainThinking != w.MainThinking {
				t.Errorf("phases %+v; audit main loop: %d requests, %d thinking", phases, w.Main, w.MainThinking)
			}
			if w.Requests == 0 {
				t.Fatal("an empty corpus proves nothing")
			}
		})
	}
}

type counts struct {
	Requests, Main, Sub, ThinkingBlocks                          int
	Input, Output, CacheWrite, CacheRead, Thinking, MainThinking uint64
}

func countsOf(t *audit.Totals) counts {
	return counts{t.Requests, t.MainRequests, t.SubRequests, t.ThinkingBlocks, t.InputTokens, t.OutputTokens,
		t.CacheCreationInputTokens, t.CacheReadInputTokens, t.ThinkingTokens, t.MainThinkingTokens}
}

func (c *counts) add(d counts) {
	c.Requests += d.Requests
	c.Main += d.Main
	c.Sub += d.Sub
	c.ThinkingBlocks += d.ThinkingBlocks
	c.Input += d.Input
	c.Output += d.Output
	c.CacheWrite += d.CacheWrite
	c.CacheRead += d.CacheRead
	c.Thinking += d.Thinking
	c.MainThinking += d.MainThinking
}

// TestAttachIsObserve: the effort section tune audit --report reads in the audit's own pass (Attach on
// a scan with the audit's Sink, row callback and path check) is what a pass of its own observes, on
// every bundled corpus, and the audit's callbacks still run, before the effort's.
func TestAttachIsObserve(t *testing.T) {
	for name, root := range map[string]string{
		"sample":   sampleRoot,
		"audit":    filepath.Join("..", "audit", "testdata", "effort"),
		"recorded": filepath.Join("..", "audit", "testdata", "recordedcost"),
		"demo":     filepath.Join(demoDir, "transcripts"),
	} {
		t.Run(name, func(t *testing.T) {
			files, err := transcript.Discover([]string{root})
			if err != nil || len(files) == 0 {
				t.Fatalf("%s: %d files, %v", root, len(files), err)
			}
			census, err := TakeCensus(os.DirFS(filepath.Join(demoDir, "repo")))
			if err != nil {
				t.Fatal(err)
			}
			opt := Options{Census: census, Open: osOpen}
			want, err := Observe(files, opt)
			if err != nil {
				t.Fatal(err)
			}
			agg := audit.New(audit.Options{})
			rows, checked := 0, false
			scan := transcript.Options{Sink: agg,
				OnRequest: func(*transcript.Request) { rows++ },
				Check:     func(*transcript.Result) error { checked = true; return nil }}
			observed := Attach(&scan, opt)
			res, err := transcript.Scan(files, scan)
			if err != nil {
				t.Fatal(err)
			}
			got := observed(res)
			wj, _ := json.Marshal(want)
			gj, _ := json.Marshal(got)
			if !bytes.Equal(wj, gj) {
				t.Errorf("attached to the audit's scan:\n%s\nits own pass:\n%s", gj, wj)
			}
			if !checked || rows != want.Input.Requests || agg.Report().Totals.Requests != rows {
				t.Errorf("audit callbacks: checked %v, %d rows, %d aggregated, want %d", checked, rows, agg.Report().Totals.Requests, want.Input.Requests)
			}
		})
	}
}
