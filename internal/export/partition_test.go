package export_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ldd-tools/tune/internal/audit"
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
		p := export.NewPartitionedRequests(out)
		for _, d := range []string{days[1], days[0], days[2], days[1]} { // days in any order
			if err := p.Write(requestOn(d, 23), audit.Cost{}); err != nil {
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

// RequestDay is the audit's day of a request in UTC (the usage line's), whatever zone its times are in.
func TestRequestDay(t *testing.T) {
	r := requestOn("2026-02-10", 23)
	paris, _ := time.LoadLocation("Europe/Paris")
	r.UsageTime = r.UsageTime.In(paris) // 00:00 on the 11th in Paris: still the 10th in UTC
	r.First = r.First.Add(-24 * time.Hour)
	if got := export.RequestDay(r); got != "2026-02-10" || got != audit.Day(r, time.UTC) {
		t.Errorf("RequestDay %s, audit.Day %s", got, audit.Day(r, time.UTC))
	}
}

// TestPartitionInDayOrder: requests that come in order of day keep one day's file open at a time (a
// day is finished when the next starts), are still committed only once all are finished, and a
// request of a finished day is an error, not a second file.
func TestPartitionInDayOrder(t *testing.T) {
	out := &memDays{files: map[string]*bytes.Buffer{}}
	p := export.NewPartitionedRequests(out)
	p.InDayOrder = true
	var days []string
	for d := range 40 {
		day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d).Format(time.DateOnly)
		days = append(days, day)
		for h := range 3 {
			if err := p.Write(requestOn(day, 8*h), audit.Cost{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	open := 0
	for _, e := range out.log {
		switch e[:5] {
		case "open ":
			open++
		case "ready":
			open--
		}
		if open > 1 {
			t.Fatalf("two days open at once: %v", out.log)
		}
	}
	if slices.ContainsFunc(out.log, func(s string) bool { return strings.HasPrefix(s, "commit") }) {
		t.Fatalf("a day committed before Close: %v", out.log)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if got := len(slices.DeleteFunc(slices.Clone(out.log), func(s string) bool { return !strings.HasPrefix(s, "commit") })); got != 40 || p.Rows != 120 {
		t.Errorf("%d days committed, %d rows", got, p.Rows)
	}
	for _, d := range days {
		rows, err := parquet.Read[export.RequestRow](bytes.NewReader(out.files[d].Bytes()), int64(out.files[d].Len()))
		if err != nil || len(rows) != 3 {
			t.Fatalf("%s: %d rows, %v", d, len(rows), err)
		}
	}

	p = export.NewPartitionedRequests(&memDays{files: map[string]*bytes.Buffer{}})
	p.InDayOrder = true
	p.Write(requestOn(days[1], 1), audit.Cost{})
	p.Write(requestOn(days[2], 1), audit.Cost{})
	if err := p.Write(requestOn(days[1], 2), audit.Cost{}); err == nil || !strings.Contains(err.Error(), "not in order of day") {
		t.Errorf("a request of a finished day: %v", err)
	}
}

// DayKey orders as RequestDay: equal within a UTC day, increasing from one day to the next.
func TestDayKey(t *testing.T) {
	a, b, c := requestOn("2026-02-10", 0), requestOn("2026-02-10", 23), requestOn("2026-02-11", 0)
	if export.DayKey(a) != export.DayKey(b) || export.DayKey(b) >= export.DayKey(c) {
		t.Errorf("keys %d %d %d", export.DayKey(a), export.DayKey(b), export.DayKey(c))
	}
}
