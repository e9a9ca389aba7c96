package accuracy

import "testing"

// TestRateFormat: the tables' and the nightly report's forms of one rate, and "—" without tasks.
func TestRateFormat(t *testing.T) {
	r := NewRate(1, 3)
	for style, want := range map[RateStyle]string{RatePlain: "1/3 33% [6–79%]", RateParens: "1/3 (33%) [6–79%]"} {
		if got := r.Format(style); got != want {
			t.Errorf("Format(%d) = %q, want %q", style, got, want)
		}
	}
	if got := NewRate(0, 0).Format(RateParens); got != "—" {
		t.Errorf("no task: %q", got)
	}
}
