// Package clock is tune's clock: the wall clock in UTC, or a fixed time from TUNE_NOW, which keeps
// reports, stored versions and trace lines reproducible. A leaf, shared by the full command tree and
// the light `tune score` front end.
package clock

import (
	"fmt"
	"time"
)

// FromEnv returns the clock the environment asks for: TUNE_NOW (RFC 3339) fixes it; without it, the
// wall clock in UTC.
func FromEnv(getenv func(string) string) (func() time.Time, error) {
	v := getenv("TUNE_NOW")
	if v == "" {
		return func() time.Time { return time.Now().UTC() }, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, fmt.Errorf("TUNE_NOW=%q: want an RFC 3339 time such as 2026-12-01T03:00:00Z", v)
	}
	return func() time.Time { return t.UTC() }, nil
}
