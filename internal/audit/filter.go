package audit

import (
	"fmt"
	"slices"
	"time"

	"github.com/ldd-tools/tune/internal/transcript"
)

// DateRange selects requests by their day (Day) in Location, both ends inclusive, as ccusage's
// --since/--until select them; an empty end is open.
type DateRange struct {
	Since, Until string // YYYY-MM-DD
	Location     *time.Location
}

// compactDay is ccusage's form of a --since/--until date, YYYYMMDD.
const compactDay = "20060102"

// ParseDay reads a date as YYYY-MM-DD or as ccusage writes it, YYYYMMDD, and returns it as
// YYYY-MM-DD (the form days are compared in).
func ParseDay(s string) (string, error) {
	for _, layout := range []string{time.DateOnly, compactDay} {
		if d, err := time.Parse(layout, s); err == nil {
			return d.Format(time.DateOnly), nil
		}
	}
	return "", fmt.Errorf("%q is not a date (want YYYY-MM-DD or YYYYMMDD)", s)
}

// weekdays are the names a week may start on, as ccusage's --start-of-week spells them.
var weekdays = []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}

// ParseWeekday reads the day weeks start on (sunday, monday, … saturday).
func ParseWeekday(s string) (time.Weekday, error) {
	if i := slices.Index(weekdays, s); i >= 0 {
		return time.Weekday(i), nil
	}
	return 0, fmt.Errorf("%q: want sunday, monday, tuesday, wednesday, thursday, friday or saturday", s)
}

// String names the range as the flags gave it: "from 2026-02-11 to 2026-02-12", "from 2026-02-11
// on", "up to 2026-02-12" (days in the range's zone).
func (d DateRange) String() string {
	switch {
	case d.Since != "" && d.Until != "":
		return "from " + d.Since + " to " + d.Until
	case d.Since != "":
		return "from " + d.Since + " on"
	case d.Until != "":
		return "up to " + d.Until
	}
	return "on any day"
}

// Open reports whether the range selects every request.
func (d DateRange) Open() bool { return d.Since == "" && d.Until == "" }

// Contains reports whether r falls in the range.
func (d DateRange) Contains(r *transcript.Request) bool {
	if d.Open() {
		return true
	}
	return d.containsDay(Day(r, d.Location))
}

func (d DateRange) containsDay(day string) bool {
	return (d.Since == "" || day >= d.Since) && (d.Until == "" || day <= d.Until)
}

// Filter passes the requests of Range on to Next: a scan's Sink keeps only the dates asked for.
type Filter struct {
	Range DateRange
	Next  transcript.Sink
}

var _ transcript.Sink = Filter{}

// Add passes r on when it is in the range.
func (f Filter) Add(r *transcript.Request) {
	if f.Range.Contains(r) {
		f.Next.Add(r)
	}
}

// Remove passes the retraction of r on when it is in the range (as its Add was).
func (f Filter) Remove(r *transcript.Request) {
	if f.Range.Contains(r) {
		f.Next.Remove(r)
	}
}
