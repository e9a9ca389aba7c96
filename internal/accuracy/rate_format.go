package accuracy

import "fmt"

// RateStyle is how Format shows a rate.
type RateStyle int

const (
	// RatePlain is the terminal tables' form: "1/3 33% [6–79%]".
	RatePlain RateStyle = iota
	// RateParens is the nightly report's form, whose cells read as prose: "1/3 (33%) [6–79%]".
	RateParens
)

// Format shows the rate as k/n, the rate and its interval in percent, in style; "—" when n is 0
// (no task, no rate).
func (r Rate) Format(style RateStyle) string {
	if r.N == 0 {
		return "—"
	}
	pct := fmt.Sprintf("%.0f%%", 100*r.Rate)
	if style == RateParens {
		pct = "(" + pct + ")"
	}
	return fmt.Sprintf("%d/%d %s [%.0f–%.0f%%]", r.K, r.N, pct, 100*r.Lo, 100*r.Hi)
}
