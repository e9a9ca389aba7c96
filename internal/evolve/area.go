package evolve

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/ldd-tools/tune/internal/traceparse"
)

// Area is a task's code area as same-area evidence compares two tasks (sameArea): its files= set when it
// has one, and the paths it names (files=, or those in its title and its action= and layer= text). It is
// held apart from the task, so that a streamed reader can compare a later task with one it no longer
// holds (the watch's single witness, docs/decisions.md#the-watch-reads-the-single-witness).
type Area struct {
	files []string // nil without files=
	paths []string
}

// AreaOf is t's code area; it keeps no reference to t (its strings are copied out of the reader's).
func AreaOf(t *traceparse.Task) Area {
	a := Area{paths: cloned(areaPaths(t))}
	if len(t.Files) > 0 {
		a.files = cloned(normPaths(t.Files, false))
	}
	return a
}

func cloned(ss []string) []string {
	for i := range ss {
		ss[i] = strings.Clone(ss[i])
	}
	return ss
}

// Overlaps is sameArea's rule on two held areas: a common file of their files= sets when both have one,
// else a common path.
func (a Area) Overlaps(b Area) bool {
	if a.files != nil && b.files != nil {
		return len(intersect(a.files, b.files)) > 0
	}
	return len(intersect(a.paths, b.paths)) > 0
}

// areaJSON is an Area as a state keeps it (the watch's, docs/decisions.md#watch-state): files null
// when the task had no files= set.
type areaJSON struct {
	Files []string `json:"files"`
	Paths []string `json:"paths"`
}

// MarshalJSON writes the area's files= set (null without one) and paths.
func (a Area) MarshalJSON() ([]byte, error) {
	return json.Marshal(areaJSON{Files: a.files, Paths: a.paths})
}

// UnmarshalJSON reads what MarshalJSON wrote; Check says whether it is an area AreaOf can give.
func (a *Area) UnmarshalJSON(data []byte) error {
	var v areaJSON
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	a.files, a.paths = v.Files, v.Paths
	return nil
}

// Check says whether a is an area AreaOf could have made: a files= set is absent or not empty, and
// no path is empty.
func (a Area) Check() error {
	if a.files != nil && len(a.files) == 0 {
		return errors.New("code area: an empty files= set")
	}
	for _, p := range slices.Concat(a.files, a.paths) {
		if p == "" {
			return errors.New("code area: an empty path")
		}
	}
	return nil
}
