package export

import (
	"io"
	"slices"
	"time"

	"github.com/ldd-tools/tune/internal/pricing"
	"github.com/ldd-tools/tune/internal/transcript"
)

// PartitionDir is the Hive-style directory of one day's requests under an export root: DuckDB
// (hive_partitioning), Spark and Trino read `day` from it as a column.
func PartitionDir(day string) string { return "day=" + day }

// PartitionFile is the file name inside a partition directory.
const PartitionFile = "requests.parquet"

// RequestDay is the UTC day a request belongs to in a partitioned export: the day of the usage line
// the audit keeps (the one that decides its day in ccusage), else of its first line.
func RequestDay(r *transcript.Request) string {
	t := r.UsageTime
	if t.IsZero() {
		t = r.First
	}
	return t.UTC().Format(time.DateOnly)
}

// Output is where a partition's rows go: Open gives the writer for a day (called once per day, when
// its first request arrives); Ready makes a day's written file durable without putting it in place,
// Commit puts it in place (final), Abort drops it (and anything Open made for it).
type Output interface {
	Open(day string) (io.Writer, error)
	Ready(day string) error
	Commit(day string) error
	Abort(day string)
}

// PartitionedRequests writes requests into one Parquet file per UTC day (RequestDay), as they come, in
// any order of days. Each open day buffers at most one row group.
type PartitionedRequests struct {
	out    Output
	prices *pricing.Table
	days   map[string]*RequestParquet
	Rows   int64
}

// NewPartitionedRequests returns a writer into out, pricing requests with prices.
func NewPartitionedRequests(out Output, prices *pricing.Table) *PartitionedRequests {
	return &PartitionedRequests{out: out, prices: prices, days: map[string]*RequestParquet{}}
}

// Write writes one request into its day's file.
func (p *PartitionedRequests) Write(r *transcript.Request) error {
	day := RequestDay(r)
	w, ok := p.days[day]
	if !ok {
		f, err := p.out.Open(day)
		if err != nil {
			return err
		}
		w = NewRequestParquet(f, p.prices)
		p.days[day] = w
	}
	p.Rows++
	return w.Write(r)
}

// Days lists the days written so far, in order.
func (p *PartitionedRequests) Days() []string {
	days := make([]string, 0, len(p.days))
	for d := range p.days {
		days = append(days, d)
	}
	slices.Sort(days)
	return days
}

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
	for _, d := range days {
		err := p.days[d].Close()
		if err == nil {
			err = p.out.Ready(d)
		}
		if err != nil {
			return abort(days, err)
		}
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
