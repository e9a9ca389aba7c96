package cli

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// objectKeys lists the keys of a decoded JSON object, sorted and space-separated: what the --json field
// locks compare (TestWatchJSONFieldsLocked, TestExploreJSONFieldsLocked).
func objectKeys(t *testing.T, v any) string {
	t.Helper()
	obj, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v is not an object", v)
	}
	return strings.Join(slices.Sorted(maps.Keys(obj)), " ")
}
