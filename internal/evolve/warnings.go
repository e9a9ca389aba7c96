package evolve

import "fmt"

// A task's own warnings (resolveTask) come one per task that has them: a log whose recorded levels
// disagree with their signals gives one per task, 91k in a year's generated log. A detection keeps of
// each log the first MaxTaskWarnings of each kind, in order, and says in one more warning per kind how
// many it left out (docs/decisions.md#warnings-once): what a reader acts on is the kind and a few lines
// to look at, and a night must not carry, store and print a line per task.

// MaxTaskWarnings is how many of a log's task warnings of one kind a detection lists.
const MaxTaskWarnings = 20

// The kinds of task warnings, and how the summary line names them.
const (
	warnUnknownVersion = iota
	warnClampForbids
	warnLevelDisagrees
	numWarningKinds
)

var warningKindText = [numWarningKinds]string{
	warnUnknownVersion: "whose weights= is not in the store",
	warnClampForbids:   "recorded L4 with creativity=standard, which the clamp forbids",
	warnLevelDisagrees: "whose recorded level is not the bucket of its signals",
}

// TaskWarning is a task's warning with its kind.
type TaskWarning struct {
	Warning
	Kind int `json:"kind"`
}

// TaskWarnings are the warnings one log's tasks gave: the first MaxTaskWarnings of each kind in order,
// and how many of each kind there were.
type TaskWarnings struct {
	Listed []TaskWarning        `json:"listed"`
	Counts [numWarningKinds]int `json:"counts"`
}

// add counts w, and lists it while its kind has fewer than MaxTaskWarnings listed.
func (ws *TaskWarnings) add(w TaskWarning) {
	if ws.Counts[w.Kind] < MaxTaskWarnings {
		ws.Listed = append(ws.Listed, w)
	}
	ws.Counts[w.Kind]++
}

// upTo is ws as it was when its counts were counts (an earlier point of the same log).
func (ws *TaskWarnings) upTo(counts [numWarningKinds]int) TaskWarnings {
	out := TaskWarnings{Listed: []TaskWarning{}, Counts: counts}
	seen := [numWarningKinds]int{}
	for _, w := range ws.Listed {
		if seen[w.Kind] < counts[w.Kind] {
			out.Listed = append(out.Listed, w)
		}
		seen[w.Kind]++
	}
	return out
}

// list is the warnings as the output lists them: the listed ones, then for each kind with more a
// warning about the log saying how many more.
func (ws *TaskWarnings) list(source string) []Warning {
	out := make([]Warning, 0, len(ws.Listed))
	for _, w := range ws.Listed {
		out = append(out, w.Warning)
	}
	for k, n := range ws.Counts {
		if more := n - MaxTaskWarnings; more > 0 {
			out = append(out, Warning{Source: source, Reason: fmt.Sprintf("%d more tasks %s (%d in all; the first %d are listed)",
				more, warningKindText[k], n, MaxTaskWarnings)})
		}
	}
	return out
}

// check says whether ws could be a log's task warnings (read back from a state: hostile input).
func (ws *TaskWarnings) check(source string) error {
	listed := [numWarningKinds]int{}
	for _, w := range ws.Listed {
		if w.Kind < 0 || w.Kind >= numWarningKinds || w.Source != source {
			return fmt.Errorf("state of %s: a task warning of kind %d about %q", source, w.Kind, w.Source)
		}
		listed[w.Kind]++
	}
	for k, n := range ws.Counts {
		if listed[k] != min(n, MaxTaskWarnings) {
			return fmt.Errorf("state of %s: %d task warnings of kind %d listed of %d", source, listed[k], k, n)
		}
	}
	return nil
}
