package export_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/ldd-tools/tune/internal/export"
	"github.com/ldd-tools/tune/internal/transcript"
)

// memDays is an export.Output in memory that records what happened to each day; failReady makes a
// day's Ready fail as a full disk does when its file is finished.
type memDays struct {
	files     map[string]*bytes.Buffer
	failReady string
	log       []string
}

func (m *memDays) Open(day string) (io.Writer, error) {
	m.files[day] = &bytes.Buffer{}
	m.log = append(m.log, "open "+day)
	return m.files[day], nil
}

func (m *memDays) Ready(day string) error {
	m.log = append(m.log, "ready "+day)
	if day == m.failReady {
		return syscall.ENOSPC
	}
	return nil
}

func (m *memDays) Commit(day string) error {
	m.log = append(m.log, "commit "+day)
	return nil
}

func (m *memDays) Abort(day string) { m.log = append(m.log, "abort "+day) }

func requestOn(day string, hour int) *transcript.Request {
	t, _ := time.Parse(time.DateOnly, day)
	t = t.Add(time.Duration(hour) * time.Hour)
	return &transcript.Request{Session: "s", Model: "claude-opus-4-6", First: t, Last: t, UsageTime: t, OutputTokens: 10}
}

// TestPartitionCloseCommitsAllOrNone: every day's file is finished and made durable before the first
// commit, so a full disk while finishing any day commits none (a partitioned export does not stop
// half way with some days in place and later ones missing).
func TestPartitionCloseCommitsAllOrNone(t *testing.T) {
	days := []string{"2026-02-10", "2026-02-11", "2026-02-12"}
	for _, fail := range append([]string{""}, days...) {
		out := &memDays{files: map[string]*bytes.Buffer{}, failReady: fail}
		p := export.NewPartitionedRequests(out, nil)
		for _, d := range []string{days[1], days[0], days[2], days[1]} { // days in any order
			if err := p.Write(requestOn(d, 23)); err != nil {
				t.Fatal(err)
			}
		}
		err := p.Close()
		commits := slices.DeleteFunc(slices.Clone(out.log), func(s string) bool { return len(s) < 7 || s[:7] != "commit " })
		if fail == "" {
			if err != nil || len(commits) != 3 || p.Rows != 4 {
				t.Errorf("no failure: %v, log %v, %d rows", err, out.log, p.Rows)
			}
			if !slices.Equal(commits, []string{"commit " + days[0], "commit " + days[1], "commit " + days[2]}) {
				t.Errorf("commits %v, want the days in order", commits)
			}
			last := slices.Index(out.log, "ready "+days[2])
			if first := slices.Index(out.log, "commit "+days[0]); first < last {
				t.Errorf("a day was committed before every day was ready: %v", out.log)
			}
			continue
		}
		if !errors.Is(err, syscall.ENOSPC) || len(commits) > 0 {
			t.Errorf("ready of %s fails: err %v, committed %v (log %v)", fail, err, commits, out.log)
		}
		for _, d := range days {
			if !slices.Contains(out.log, "abort "+d) {
				t.Errorf("ready of %s fails: %s not aborted (log %v)", fail, d, out.log)
			}
		}
	}
}

// RequestDay is the UTC day of the usage line the audit keeps, else of the first line.
func TestRequestDay(t *testing.T) {
	r := requestOn("2026-02-10", 23)
	paris, _ := time.LoadLocation("Europe/Paris")
	r.UsageTime = r.UsageTime.In(paris) // 00:00 on the 11th in Paris: still the 10th in UTC
	if got := export.RequestDay(r); got != "2026-02-10" {
		t.Errorf("RequestDay %s", got)
	}
	r.UsageTime = time.Time{}
	r.First = r.First.Add(2 * time.Hour)
	if got := export.RequestDay(r); got != "2026-02-11" {
		t.Errorf("without a usage time: %s", got)
	}
}
