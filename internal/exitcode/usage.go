package exitcode

import (
	"strings"
)

// IsCobraUsageError recognises the argument errors cobra itself returns (unknown command, wrong number
// of arguments), which are usage errors (exit 2) rather than failures.
func IsCobraUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "requires exactly", "unknown flag", "unknown shorthand flag", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
