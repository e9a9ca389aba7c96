package export

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/ldd-tools/tune/internal/audit"
	"github.com/ldd-tools/tune/internal/transcript"
)

// PartitionDir is the Hive-style directory of one day's requests under an export root: DuckDB
// (hive_partitioning), Spark and Trino read `day` from it as a column.
func PartitionDir(day string) string { return "day=" + day }

// PartitionFile is the file name inside a partition directory.
const PartitionFile = "requests.parquet"

// RequestDay is the UTC day a request belongs to in a partitioned export: audit.Day in UTC, the day of
// the usage line the audit keeps (the one that decides its day in ccusage), so that the partitions and
// the --since/--until that choose them (UTC days with --partition-by day) agree.
func RequestDay(r *transcript.Request) string { return audit.Day(r, time.UTC) }

// DayKey orders requests by RequestDay (the Unix time of the day's midnight, UTC): the scan's OrderBy
// for a partitioned export written in day order (PartitionedRequests.InDayOrder).
func DayKey(r *transcript.Request) int64 { return r.UsageTime.UTC().Truncate(24 * time.Hour).Unix() }

// Output is where a partition's rows go: Open gives the writer for a day (called once per day, when
// its first request arrives); Ready makes a day's written file durable without putting it in place,
// Commit puts it in place (final), Abort drops it (and anything Open made for it).
type Output interface {
	Open(day string) (io.Writer, error)
	Ready(day string) error
	Commit(day string) error
	Abort(day string)
}

// PartitionedRequests writes requests into one Parquet file per UTC day (RequestDay). In any order of
// days each day's file stays open, with its row group buffer, until Close; with InDayOrder (the
// requests come sorted by DayKey: the scan's OrderBy) a day's file is finished when the next day
// starts, so one file is open at a time and memory does not grow with the number of days. Either
// way no day is committed before every day is finished (Close).
type PartitionedRequests struct {
	// InDayOrder says the requests come in order of day; a request of a day already finished is
	// then an error.
	InDayOrder bool
	out        Output
	open       map[string]*RequestParquet // days being written
	days       map[string]bool            // every day opened (finished or not)
	Rows       int64
}

// NewPartitionedRequests returns a writer into out.
func NewPartitionedRequests(out Output) *PartitionedRequests {
	return &PartitionedRequests{out: out, open: map[string]*RequestParquet{}, days: map[string]bool{}}
}

// Write writes one request, with its cost (audit.Price's), into its day's file.
func (p *PartitionedRequests) Write(r *transcript.Request, cost audit.Cost) error {
	day := RequestDay(r)
	w, ok := p.open[day]
	if !ok {
		if p.days[day] {
			return fmt.Errorf("export: a request of %s after later days (the requests are not in order of day)", day)
		}
		if p.InDayOrder {
			if err := p.finishOpen(); err != nil {
				return err
			}
		}
		f, err := p.out.Open(day)
		if err != nil {
			return err
		}
		w = NewRequestParquet(f)
		p.open[day], p.days[day] = w, true
	}
	p.Rows++
	return w.Write(r, cost)
}

// finishOpen finishes the open days' files (rows, footer, Ready) and drops their writers.
func (p *PartitionedRequests) finishOpen() error {
	for _, d := range sortedKeys(p.open) {
		err := p.open[d].Close()
		if err == nil {
			err = p.out.Ready(d)
		}
		delete(p.open, d)
		if err != nil {
			return err
		}
	}
	return nil
}

// Days lists the days written so far, in order.
func (p *PartitionedRequests) Days() []string { return sortedKeys(p.days) }

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// Close finishes every day's file (the rows still buffered, the footer, fsync: where a full disk
// shows) and only then commits them, in order of day: a failure while finishing commits no day. On
// the first error it aborts the days not yet committed and returns it; a commit can still fail
// after earlier days were committed (a day's file that appeared meanwhile without --force), and
// those days are whole.
func (p *PartitionedRequests) Close() error {
	days := p.Days()
	abort := func(rest []string, err error) error {
		for _, d := range rest {
			p.out.Abort(d)
		}
		return err
	}
	if err := p.finishOpen(); err != nil {
		return abort(days, err)
	}
	for i, d := range days {
		if err := p.out.Commit(d); err != nil {
			return abort(days[i:], err)
		}
	}
	return nil
}

// Abort drops every day's file.
func (p *PartitionedRequests) Abort() {
	for d := range p.days {
		p.out.Abort(d)
	}
}
