package audit

import (
	"io"

	"github.com/ldd-tools/tune/internal/transcript"
)

// RunsOf makes one run per session that has requests (see RunBuilder).
func RunsOf(res *transcript.Result, arm string, roots []string) []Run {
	rb := NewRunBuilder(arm, roots)
	for i := range res.Requests {
		rb.Add(&res.Requests[i])
	}
	return rb.Runs(res)
}

// WriteRows writes the rows of reqs, priced with the embedded table (see RowWriter).
func WriteRows(w io.Writer, reqs []transcript.Request, format string) error {
	rw, err := NewRowWriter(w, format)
	if err != nil {
		return err
	}
	for i := range reqs {
		if err := rw.Write(&reqs[i], Price(nil, &reqs[i])); err != nil {
			return err
		}
	}
	return rw.Close()
}

// Aggregate builds the report of reqs; by may be "" for no breakdown (see Aggregator).
func Aggregate(reqs []transcript.Request, by GroupBy) *Report {
	return AggregateWith(reqs, Options{By: by})
}

// AggregateWith builds the report of reqs with opt.
func AggregateWith(reqs []transcript.Request, opt Options) *Report {
	a := New(opt)
	for i := range reqs {
		a.Add(&reqs[i])
	}
	return a.Report()
}
