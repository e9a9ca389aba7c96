package transcript

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// TestParseTimestampMatchesTime: the arithmetic fast path gives time.Parse's answer (RFC 3339) on
// valid dates across leap years and centuries, and refuses what it refuses (day 0, 29 February of a
// common year, day 31 of a 30-day month, hour 24).
func TestParseTimestampMatchesTime(t *testing.T) {
	n := 0
	for _, y := range []int{0, 1, 4, 100, 1600, 1899, 1900, 1969, 1970, 1999, 2000, 2024, 2025, 2026, 2100, 2400, 9999} {
		for m := 0; m <= 13; m++ {
			for _, d := range []int{0, 1, 15, 28, 29, 30, 31, 32} {
				for _, hms := range []string{"00:00:00.000", "23:59:59.999", "12:34:56.789", "24:00:00.000", "10:60:00.000"} {
					s := fmt.Sprintf("%04d-%02d-%02dT%sZ", y, m, d, hms)
					got, ok := parseTimestamp(s)
					want, err := time.Parse(time.RFC3339Nano, s)
					if ok != (err == nil) || ok && got != want.UnixMilli() {
						t.Errorf("%s: %d %v, time.Parse %d %v", s, got, ok, want.UnixMilli(), err)
					}
					if ok {
						n++
					}
				}
			}
		}
	}
	if n < 1000 {
		t.Errorf("only %d valid timestamps checked", n)
	}
	// The arithmetic itself (the fast path falls back to time.Parse on what it refuses).
	for y := 0; y <= 2500; y++ {
		for m := 1; m <= 12; m++ {
			if got, want := daysIn(m, y), time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day(); got != want {
				t.Fatalf("%04d-%02d: %d days, want %d", y, m, got, want)
			}
			for _, d := range []int{1, daysIn(m, y)} {
				if got, want := unixDays(y, m, d), time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix()/86400; got != want {
					t.Fatalf("%04d-%02d-%02d: day %d, want %d", y, m, d, got, want)
				}
			}
		}
	}
}

// TestContainsAnchored: the anchored search equals bytes.Contains, with the pattern at the start, at
// the end, cut off by the end, and with near misses around the anchor.
func TestContainsAnchored(t *testing.T) {
	pat := []byte(`"input_tokens"`)
	for _, rec := range []string{
		`"input_tokens"`, `x"input_tokens"`, `"input_tokens":1`, `"input_token`, `"input_tokenss"`,
		`k"input_tokens`, `kkkk"input_tokex"`, `"input_toke"input_tokens"`, `ke ken token_tokens "input_tokens" k`,
		``, `k`, `_tokens"`,
	} {
		for _, anchor := range []int{0, 9, 13} {
			if got, want := containsAnchored([]byte(rec), pat, anchor), bytes.Contains([]byte(rec), pat); got != want {
				t.Errorf("%q anchor %d: %v, want %v", rec, anchor, got, want)
			}
		}
	}
}
