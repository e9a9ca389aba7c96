package view

import (
	"regexp"
	"strings"
)

// modelDate is the snapshot date Anthropic appends to a model id ("-20251001").
var modelDate = regexp.MustCompile(`-\d{8}$`)

// oldModelName is the naming before Claude 4, version first ("3-5-haiku").
var oldModelName = regexp.MustCompile(`^(\d+(?:-\d+)?)-([a-z]+)$`)

// ShortModel writes a Claude model id the way people write it, for the text tables: without the
// "claude-" prefix and the snapshot date, family first ("claude-haiku-4-5-20251001" → "haiku-4-5",
// "claude-3-5-haiku-20241022" → "haiku-3-5"). Ids of other vendors are kept as they are; JSON, CSV
// and the reports keep every id whole.
func ShortModel(id string) string {
	rest, ok := strings.CutPrefix(id, "claude-")
	if !ok {
		return id
	}
	rest = modelDate.ReplaceAllString(rest, "")
	if m := oldModelName.FindStringSubmatch(rest); m != nil {
		rest = m[2] + "-" + m[1]
	}
	if rest == "" {
		return id
	}
	return rest
}
