package testutil

import (
	"fmt"
	"strings"
	"testing"
)

// A golden mismatch shows a unified diff, not the two files whole.
func TestGoldenMismatchPrintsAUnifiedDiff(t *testing.T) {
	rec := &recorder{TB: t}
	Golden(rec, "golden_sample.txt", []byte("one\ntwo changed\nthree\n"))
	for _, want := range []string{"--- testdata/golden_sample.txt", "+++ got", "-two\n", "+two changed\n"} {
		if !strings.Contains(rec.msg, want) {
			t.Errorf("message lacks %q:\n%s", want, rec.msg)
		}
	}
}

type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.msg += fmt.Sprintf(format, args...)
}
func (r *recorder) Helper() {}
