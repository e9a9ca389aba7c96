package pricing

import (
	"encoding/json"
	"strings"
)

// AliasesEnv is the environment variable ccusage 20.0.24 reads model aliases from.
const AliasesEnv = "CCUSAGE_MODEL_ALIASES"

// ParseAliases reads model aliases as ccusage 20.0.24 reads CCUSAGE_MODEL_ALIASES
// (docs/decisions.md#cost-and-date-views-in-the-audit-issue-13): a JSON object of strings, or pairs
// MODEL=ALIAS separated by ',' or ';' (spaces around each trimmed; the first '=' splits, so an alias
// may hold one; a pair with an empty side is ignored; a later pair for the same model wins). A value
// that starts with '{' but is not an object of strings names no alias, as in ccusage. Names are
// case-sensitive.
func ParseAliases(s string) map[string]string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	out := map[string]string{}
	if strings.HasPrefix(s, "{") {
		var m map[string]string
		if json.Unmarshal([]byte(s), &m) != nil {
			return nil
		}
		for k, v := range m {
			if k, v = strings.TrimSpace(k), strings.TrimSpace(v); k != "" && v != "" {
				out[k] = v
			}
		}
	} else {
		for _, pair := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' }) {
			k, v, ok := strings.Cut(pair, "=")
			if k, v = strings.TrimSpace(k), strings.TrimSpace(v); ok && k != "" && v != "" {
				out[k] = v
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// WithAliases returns t with model aliases (ParseAliases; t itself is unchanged). An alias renames
// a model in every breakdown (Name) and prices a model the table lacks (Lookup).
func (t *Table) WithAliases(aliases map[string]string) *Table {
	out := t.clone()
	out.aliases = aliases
	return out
}

// Aliases is the number of model aliases of t.
func (t *Table) Aliases() int { return len(t.aliases) }

// Name is the name a model label (a model, "-fast" for fast mode) is shown under: its alias, else
// the alias of the label without "-fast" followed by "-fast", else the label.
func (t *Table) Name(label string) string {
	if len(t.aliases) == 0 {
		return label
	}
	if a, ok := t.aliases[label]; ok {
		return a
	}
	if base, ok := strings.CutSuffix(label, "-fast"); ok {
		if a, ok := t.aliases[base]; ok {
			return a + "-fast"
		}
	}
	return label
}
