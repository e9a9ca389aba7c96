package project

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/ldd-tools/tune/internal/exitcode"
)

// ExpandLogs joins the LOG arguments and the --logs globs, sorted and without duplicates. A glob that
// matches nothing is an error: a nightly job pointed at the wrong place must say so, not report
// "nothing to do".
func ExpandLogs(args, globs []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, a := range args {
		add(a)
	}
	for _, g := range globs {
		matches, err := filepath.Glob(g)
		if err != nil {
			return nil, exitcode.FlagErrorf("--logs %q: %v", g, err)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("--logs %q matches no trace log", g)
		}
		sort.Strings(matches)
		for _, m := range matches {
			add(m)
		}
	}
	return out, nil
}
