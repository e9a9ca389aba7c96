package audit

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/pricing"
	"github.com/ldd-tools/tune/internal/transcript"
)

// ccusageRow is one row of a ccusage 20.0.24 report as testdata/ccusage/make.sh keeps it.
type ccusageRow struct {
	Key                 string  `json:"key"`
	End                 string  `json:"end"`
	TotalCost           float64 `json:"totalCost"`
	InputTokens         uint64  `json:"inputTokens"`
	OutputTokens        uint64  `json:"outputTokens"`
	CacheCreationTokens uint64  `json:"cacheCreationTokens"`
	CacheReadTokens     uint64  `json:"cacheReadTokens"`
	Models              json.RawMessage
}

type ccusageModel struct {
	ModelName           string  `json:"modelName"`
	Cost                float64 `json:"cost"`
	InputTokens         uint64  `json:"inputTokens"`
	OutputTokens        uint64  `json:"outputTokens"`
	CacheCreationTokens uint64  `json:"cacheCreationTokens"`
	CacheReadTokens     uint64  `json:"cacheReadTokens"`
}

type ccusageReport struct {
	Rows   []ccusageRow `json:"rows"`
	Totals *ccusageRow  `json:"totals"`
}

func readCCUsage(t *testing.T, name string) ccusageReport {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "ccusage", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r ccusageReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// sameCents: two costs agree to the cent (rounded alike, or within half a cent of each other).
func sameCents(a, b float64) bool {
	return math.Round(a*100) == math.Round(b*100) || math.Abs(a-b) < 0.005
}

var (
	sampleRoot    = filepath.Join("..", "..", "testdata", "transcripts")
	syntheticRoot = filepath.Join("testdata", "costcorpus")
	recordedRoot  = filepath.Join("testdata", "recordedcost")
	aliasRoot     = filepath.Join("testdata", "aliascorpus")
	btwRoot       = filepath.Join("testdata", "btwcorpus")
	tieRoot       = filepath.Join("testdata", "tiecorpus")
	// aliasSpec is the CCUSAGE_MODEL_ALIASES of testdata/ccusage/make.sh's alias reports.
	aliasSpec = "claude-mystery-9=claude-sonnet-4-5; claude-haiku-4-5=claude-opus-4-6,my-opus=claude-opus-4-6 , private-x-fast=claude-sonnet-4-6"
	// The scan rules of ccusage's daily (and monthly, weekly, blocks) report, and of its session report.
	ccusageDaily   = transcript.Options{CCUsage: true, MaxTotal: true}
	ccusageSession = transcript.Options{CCUsage: true, MaxTotal: true, NoProgress: true, ReplaySameTime: true, TieSpeed: true}
)

func checkTotals(t *testing.T, what string, got *Totals, want *ccusageRow) {
	t.Helper()
	if got.InputTokens != want.InputTokens || got.OutputTokens != want.OutputTokens ||
		got.CacheCreationInputTokens != want.CacheCreationTokens || got.CacheReadInputTokens != want.CacheReadTokens {
		t.Errorf("%s: tokens %d/%d/%d/%d, ccusage %d/%d/%d/%d", what, got.InputTokens, got.OutputTokens,
			got.CacheCreationInputTokens, got.CacheReadInputTokens, want.InputTokens, want.OutputTokens, want.CacheCreationTokens, want.CacheReadTokens)
	}
	// ccusage counts a request whose model has no price as 0: the priced cost is its total.
	if !sameCents(got.PricedCostUSD, want.TotalCost) {
		t.Errorf("%s: cost %v (priced %.6f), ccusage %.6f", what, got.CostUSD, got.PricedCostUSD, want.TotalCost)
	}
}

// TestCostEqualsCCUsage: on the real sample and on the synthetic corpus (five models, long-context
// tiers, 1-hour cache writes, fast mode, month ends and midnights), the totals, every row and every
// model's cost of --by day, week and month in four time zones, and of --by session and block, equal
// ccusage 20.0.24's reports to the cent, tokens exactly; --since/--until select the same requests.
func TestCostEqualsCCUsage(t *testing.T) {
	zones := map[string]string{"utc": "UTC", "america-new_york": "America/New_York", "asia-tokyo": "Asia/Tokyo", "asia-kolkata": "Asia/Kolkata"}
	type check struct {
		file   string
		root   string
		by     GroupBy
		zone   string
		since  string
		until  string
		models bool         // rows carry model breakdowns
		mode   pricing.Mode // cost mode ("": auto, on corpora without recorded costs)
	}
	checks := []check{
		{"sample-daily-utc", sampleRoot, ByDay, "UTC", "", "", true, ""},
		{"sample-monthly-utc", sampleRoot, ByMonth, "UTC", "", "", true, ""},
		{"sample-weekly-utc", sampleRoot, ByWeek, "UTC", "", "", true, ""},
		{"sample-session-utc", sampleRoot, BySession, "UTC", "", "", false, ""},
		{"sample-blocks-utc", sampleRoot, ByBlock, "UTC", "", "", false, ""},
		{"sample-daily-utc-0211-0212", sampleRoot, ByDay, "UTC", "2026-02-11", "2026-02-12", true, ""},
		{"synthetic-session-utc", syntheticRoot, BySession, "UTC", "", "", false, ""},
		{"synthetic-daily-america-new_york-0201-0228", syntheticRoot, ByDay, "America/New_York", "2026-02-01", "2026-02-28", true, ""},
	}
	// --since/--until with the session report (requests selected by day, then grouped) and the
	// blocks report (blocks cut from every request, then selected whole by their start day).
	checks = append(checks,
		check{"synthetic-session-asia-tokyo-0201-0201", syntheticRoot, BySession, "Asia/Tokyo", "2026-02-01", "2026-02-01", false, ""},
		check{"synthetic-session-america-new_york-0131-0201", syntheticRoot, BySession, "America/New_York", "2026-01-31", "2026-02-01", false, ""},
		check{"synthetic-blocks-asia-tokyo-0201-0201", syntheticRoot, ByBlock, "Asia/Tokyo", "2026-02-01", "2026-02-01", false, ""},
		check{"synthetic-blocks-america-new_york-0201-0201", syntheticRoot, ByBlock, "America/New_York", "2026-02-01", "2026-02-01", false, ""},
		check{"synthetic-blocks-utc-until-0201", syntheticRoot, ByBlock, "UTC", "", "2026-02-01", false, ""},
		check{"synthetic-blocks-asia-kolkata-since-0301", syntheticRoot, ByBlock, "Asia/Kolkata", "2026-03-01", "", false, ""})
	// /btw replays: daily collapses both; the other reports only the one at the parent line's time.
	checks = append(checks,
		check{"btw-daily", btwRoot, ByDay, "UTC", "", "", true, ""},
		check{"btw-weekly", btwRoot, ByWeek, "UTC", "", "", true, ""},
		check{"btw-monthly", btwRoot, ByMonth, "UTC", "", "", true, ""},
		check{"btw-session", btwRoot, BySession, "UTC", "", "", false, ""},
		check{"btw-blocks", btwRoot, ByBlock, "UTC", "", "", false, ""})
	// Equal usage totals with and without a speed (the session loader's tie rule, TieSpeed).
	checks = append(checks,
		check{"tie-weekly", tieRoot, ByWeek, "UTC", "", "", true, ""},
		check{"tie-monthly", tieRoot, ByMonth, "UTC", "", "", true, ""},
		check{"tie-session", tieRoot, BySession, "UTC", "", "", false, ""},
		check{"tie-blocks", tieRoot, ByBlock, "UTC", "", "", false, ""})
	// Weeks that start on another day (--start-of-week; weekStarts).
	checks = append(checks,
		check{"synthetic-weekly-america-new_york-monday", syntheticRoot, ByWeek, "America/New_York", "", "", true, ""},
		check{"synthetic-weekly-asia-tokyo-wednesday", syntheticRoot, ByWeek, "Asia/Tokyo", "", "", true, ""})
	weekStarts := map[string]time.Weekday{"synthetic-weekly-america-new_york-monday": time.Monday, "synthetic-weekly-asia-tokyo-wednesday": time.Wednesday}
	// CCUSAGE_MODEL_ALIASES (aliasSpec): the model rows take the aliases' names, a model without a
	// price takes its alias's, one with a price keeps it; and the same corpus without aliases.
	checks = append(checks,
		check{"alias-daily", aliasRoot, ByDay, "UTC", "", "", true, ""},
		check{"alias-session", aliasRoot, BySession, "UTC", "", "", false, ""},
		check{"alias-daily-none", aliasRoot, ByDay, "UTC", "", "", true, ""})
	// Recorded costUSD lines (Claude Code 1.0.x) in each of ccusage's cost modes.
	for _, m := range pricing.Modes {
		checks = append(checks,
			check{"recorded-daily-" + string(m), recordedRoot, ByDay, "UTC", "", "", true, m},
			check{"recorded-session-" + string(m), recordedRoot, BySession, "UTC", "", "", false, m},
			check{"recorded-blocks-" + string(m), recordedRoot, ByBlock, "UTC", "", "", false, m})
	}
	for n, zone := range zones {
		for _, v := range []struct {
			name string
			by   GroupBy
		}{{"daily", ByDay}, {"weekly", ByWeek}, {"monthly", ByMonth}, {"blocks", ByBlock}} {
			checks = append(checks, check{"synthetic-" + v.name + "-" + n, syntheticRoot, v.by, zone, "", "", v.by != ByBlock, ""})
		}
	}
	sort.Slice(checks, func(i, j int) bool { return checks[i].file < checks[j].file })
	scans := map[string]*transcript.Result{}
	for _, c := range checks {
		t.Run(c.file, func(t *testing.T) {
			want := readCCUsage(t, c.file)
			loc, err := time.LoadLocation(c.zone)
			if err != nil {
				t.Fatal(err)
			}
			// Only ccusage's daily report counts agent_progress copies; its session, weekly, monthly
			// and blocks reports read lines as the session report does.
			opt, session := ccusageDaily, c.by != ByDay
			if session {
				opt = ccusageSession
			}
			key := fmt.Sprint(c.root, session)
			res := scans[key]
			if res == nil {
				res = scan(t, opt, c.root)
				scans[key] = res
			}
			prices := pricing.Embedded()
			if c.mode != "" {
				prices = prices.WithMode(c.mode)
			}
			if c.file == "alias-daily" || c.file == "alias-session" {
				prices = prices.WithAliases(pricing.ParseAliases(aliasSpec))
			}
			dates := DateRange{Since: c.since, Until: c.until, Location: loc}
			aopt := Options{By: c.by, Location: loc, Breakdown: c.models, Prices: prices, WeekStart: weekStarts[c.file]}
			if c.by == ByBlock {
				aopt.Blocks = dates // whole blocks by their start day, as ccusage's blocks report
			}
			a := New(aopt)
			var f transcript.Sink = Filter{Range: dates, Next: a}
			if c.by == ByBlock {
				f = a
			}
			for i := range res.Requests {
				f.Add(&res.Requests[i])
			}
			rep := a.Report()
			if c.root != recordedRoot && c.root != aliasRoot && rep.Totals.CostUSD == nil {
				t.Errorf("a model without a price: %v", rep.Totals.UnpricedModels)
			}
			if want.Totals != nil {
				checkTotals(t, "totals", &rep.Totals, want.Totals)
			}
			got := map[string]*Group{}
			for i := range rep.Groups {
				g := &rep.Groups[i]
				k := g.Key
				if c.by == ByBlock {
					k = g.Start.UTC().Format("2006-01-02T15:04:05.000Z")
					if e := g.End.UTC().Format("2006-01-02T15:04:05.000Z"); e != "" {
						g.Key = k + " " + e
					}
				}
				got[k] = g
			}
			if len(got) != len(want.Rows) {
				t.Errorf("%d rows, ccusage %d", len(got), len(want.Rows))
			}
			var sum float64
			for _, w := range want.Rows {
				sum += w.TotalCost
				g := got[w.Key]
				if g == nil {
					t.Errorf("row %s: missing", w.Key)
					continue
				}
				if c.by == ByBlock && !strings.HasSuffix(g.Key, " "+w.End) {
					t.Errorf("block %s: %s, ccusage ends %s", w.Key, g.Key, w.End)
				}
				checkTotals(t, w.Key, &g.Totals, &w)
				if !c.models {
					continue
				}
				var models []ccusageModel
				if err := json.Unmarshal(w.Models, &models); err != nil {
					t.Fatal(err)
				}
				byModel := map[string]*Group{}
				for i := range g.Models {
					byModel[g.Models[i].Key] = &g.Models[i]
				}
				if len(byModel) != len(models) {
					t.Errorf("row %s: %d models, ccusage %d", w.Key, len(byModel), len(models))
				}
				for _, m := range models {
					gm := byModel[m.ModelName]
					if gm == nil {
						t.Errorf("row %s: model %s missing", w.Key, m.ModelName)
						continue
					}
					checkTotals(t, w.Key+" "+m.ModelName, &gm.Totals, &ccusageRow{TotalCost: m.Cost, InputTokens: m.InputTokens,
						OutputTokens: m.OutputTokens, CacheCreationTokens: m.CacheCreationTokens, CacheReadTokens: m.CacheReadTokens})
				}
			}
			if want.Totals == nil && !sameCents(rep.Totals.PricedCostUSD, sum) {
				t.Errorf("total %.6f, ccusage rows sum to %.6f", rep.Totals.PricedCostUSD, sum)
			}
		})
	}
}
