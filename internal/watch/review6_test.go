package watch

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/evolve"
	"github.com/ldd-tools/tune/internal/tools/genquiet"
	"github.com/ldd-tools/tune/internal/traceparse"
)

// settledRows are the labelled tasks of a log whose horizon is complete at now, by meta line: Horizon
// labelled tasks after them, a quiet week before a later task (evolve.Quiet against the latest earlier
// meta time), or the log quiet for a week by the clock — what the detection counts as settled.
func settledRows(tasks []traceparse.Task, now time.Time) map[int]bool {
	var labelled []*traceparse.Task
	for i := range tasks {
		if tasks[i].Level != "" {
			labelled = append(labelled, &tasks[i])
		}
	}
	out := map[int]bool{}
	var last time.Time
	open := 0 // labelled[open:] are not settled
	for j, t := range labelled {
		if evolve.Quiet(last, t.MetaTime) {
			open = j
		}
		for ; open < j && j-open >= evolve.Horizon; open++ {
		}
		if t.MetaTime.After(last) {
			last = t.MetaTime
		}
	}
	n := len(labelled)
	for j, t := range labelled {
		if j < open || n-1-j >= evolve.Horizon || evolve.Quiet(last, now) {
			out[t.Line] = true
		}
	}
	return out
}

// The sixth review's property (c): the watch never changes a settled kept row's regressed status on a
// later night, and it counts the regression_of= namings the detection counts (genquiet's calendar, a
// version applied a third of the way in).
func TestReview6WatchKeepsWhatSettled(t *testing.T) {
	n := 3 // REVIEW6_N=8 for the review's numbers
	if s := os.Getenv("REVIEW6_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	p, v := versions(t)
	changed, rowNights, agree, compared, named := 0, 0, 0, 0, 0
	for seed := 1; seed <= n; seed++ {
		h := genquiet.New(uint64(200+seed), p, genquiet.Options{Days: 120, Logs: 2})
		from := h.Start.AddDate(0, 0, 40)
		prev := map[string]string{}
		for k, now := range h.Nights {
			if now.Before(from) {
				continue
			}
			var tasks []traceparse.Task
			settled := map[string]bool{}
			var logs []string
			for i := range h.Logs {
				name := fmt.Sprintf("log%d", i)
				logs = append(logs, name)
				res, err := traceparse.Parse(strings.NewReader(string(h.Logs[i].Text(now))), name)
				if err != nil {
					t.Fatal(err)
				}
				for line := range settledRows(res.Tasks, now) {
					settled[fmt.Sprintf("%s:%d", name, line)] = true
				}
				tasks = append(tasks, res.Tasks...)
			}
			b := NewBuilder(Input{Version: Version{v, from}, Parent: Version{p, h.Start}, Logs: logs})
			for i := range tasks {
				b.Add(&tasks[i])
			}
			rows := map[string]string{}
			for _, r := range b.rows() {
				rows[fmt.Sprintf("%s:%d", r.row.Log, r.row.Line)] = r.regressed
			}
			for key, was := range prev {
				rowNights++
				if rows[key] != was {
					changed++
					if changed <= 3 {
						t.Errorf("seed %d night %d (%s): the settled row %s was %q, now %q", seed, k, now.Format(time.RFC3339), key, was, rows[key])
					}
				}
			}
			for key, how := range rows {
				if settled[key] {
					prev[key] = how
				}
			}
			// The namings the detection counts for the same tasks (eligible under the parent, settled).
			ofs := map[string]string{}
			evolve.Detect(evolve.DetectInput{Tasks: tasks, Now: now, Resolver: evolve.Resolver{Active: p},
				Followed: func(t *traceparse.Task, ev []evolve.Evidence) {
					key := fmt.Sprintf("%s:%d", t.Source, t.Line)
					for _, e := range ev {
						if e.Kind == evolve.KindRegressionFollowed {
							ofs[key] = "followed"
							return
						}
					}
					for _, e := range ev {
						if e.Kind == evolve.KindRegressionOf {
							ofs[key] = "regression_of by the task of " + e.By
							return
						}
					}
					ofs[key] = ""
				}})
			for key, det := range ofs {
				how, ok := rows[key]
				if !ok || det == "followed" {
					continue
				}
				compared++
				w := how
				if !strings.HasPrefix(how, "regression_of") {
					w = ""
				}
				if det != "" {
					named++
				}
				if w == det {
					agree++
				} else if compared-agree <= 3 {
					t.Errorf("seed %d night %d: task %s: the detection %q, the watch %q", seed, k, key, det, how)
				}
			}
		}
	}
	t.Logf("%d histories: settled kept rows whose status changed on a later night %s; detection-counted kept rows whose regression_of= the watch reads alike %s (%d named)",
		n, genquiet.Rate(changed, rowNights), genquiet.Rate(agree, compared), named)
}
