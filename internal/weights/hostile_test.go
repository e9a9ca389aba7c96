package weights

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Values a pull request could put into a version file: out of range, NaN, infinite, or a nesting bomb.
// Each is refused with the key named (docs/decisions.md#hostile-files-issue-25).
func TestHostileValuesAreRefused(t *testing.T) {
	ref, err := os.ReadFile(filepath.Join("..", "..", "weights", "v0001.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, want string }{
		{"ambiguous = 2", "ambiguous = -1000000", "signals.ambiguous: -1e+06 is outside the sane range -100..+100"},
		{"ambiguous = 2", "ambiguous = 100.5", "signals.ambiguous: 100.5 is outside"},
		{"ambiguous = 2", "ambiguous = nan", "signals.ambiguous: NaN is outside"},
		{"L3 = 7", "L3 = +inf", "buckets.L3: +Inf is outside"},
		{"too_high = 1", "too_high = 9223372036854775807", "cost.too_high: 9223372036854775807: want a cost between 0 and 1000"},
		{"[cost]", "y = " + strings.Repeat("{a=", 50000) + "1" + strings.Repeat("}", 50000) + "\n[cost]", "nested 17 deep"},
	} {
		_, err := Parse("v0001.toml", bytes.Replace(ref, []byte(c.from), []byte(c.to), 1))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.to[:min(len(c.to), 40)], err, c.want)
		}
	}
	edge := bytes.Replace(ref, []byte("ambiguous = 2"), []byte("ambiguous = -100"), 1)
	if _, err := Parse("v0001.toml", edge); err != nil {
		t.Errorf("-100 is in range: %v", err)
	}
}
