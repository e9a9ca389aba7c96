package audit

import (
	"strconv"
	"strings"
)

// Family groups Claude Code versions by what usage.output_tokens means on their transcript lines
// (docs/decisions.md#transcripts-and-prices). Output counts are comparable only within a family.
type Family string

// Version families.
const (
	// FamilyPartial: ≤ 2.1.6x, every line is a streaming snapshot; output is a lower bound.
	FamilyPartial Family = "partial"
	// FamilyLastLine: 2.1.70–2.1.96, the last line of a response holds the final count.
	FamilyLastLine Family = "last-line"
	// FamilyFinal: ≥ 2.1.97, every line holds the final count.
	FamilyFinal Family = "final"
	// FamilyUnknown: no version recorded, or one that does not parse.
	FamilyUnknown Family = "unknown"
)

// FamilyDescription explains a family in one line.
func FamilyDescription(f Family) string {
	switch f {
	case FamilyPartial:
		return "≤ 2.1.6x: output_tokens are streaming snapshots (a lower bound)"
	case FamilyLastLine:
		return "2.1.70–2.1.96: the last line of a response holds the final output_tokens"
	case FamilyFinal:
		return "≥ 2.1.97: every line holds the final output_tokens"
	}
	return "version unknown"
}

// VersionFamily classifies a Claude Code version string such as "2.1.39".
func VersionFamily(v string) Family {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 3 {
		return FamilyUnknown
	}
	num := func(s string) (int, bool) {
		end := 0
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
		n, err := strconv.Atoi(s[:end])
		return n, err == nil
	}
	major, ok1 := num(parts[0])
	minor, ok2 := num(parts[1])
	patch, ok3 := num(parts[2])
	if !ok1 || !ok2 || !ok3 {
		return FamilyUnknown
	}
	switch {
	case major < 2, major == 2 && minor == 0:
		return FamilyPartial
	case major == 2 && minor == 1 && patch < 70:
		return FamilyPartial
	case major == 2 && minor == 1 && patch < 97:
		return FamilyLastLine
	}
	return FamilyFinal
}
