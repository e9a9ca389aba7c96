package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/textfmt"
	"github.com/ldd-tools/tune/internal/weights"
)

// Weights prints a version: its signal weights, bucket edges and cost matrix.
func Weights(out io.Writer, ref *app.WeightsRef) error {
	w := &ref.Weights
	head := ref.Label
	if w.Parent > 0 {
		head += " (parent " + weights.VersionName(w.Parent) + ")"
	}
	if ref.Active {
		head += ", active"
	}
	fmt.Fprintln(out, head)
	if w.Reason != "" {
		termtable.Fprintf(out, "reason:   %s\n", w.Reason)
	}
	if w.Evidence != "" {
		termtable.Fprintf(out, "evidence: %s\n", w.Evidence)
	}
	fmt.Fprintln(out, "\nsignals")
	for _, s := range weights.Signals() {
		fmt.Fprintf(out, "  %-24s %5s\n", s.String(), w.Signals[s].String())
	}
	termtable.Fprintln(out, "\nbuckets (a raw score up to the edge gets the level; above L3 is L4)")
	for i, e := range w.Buckets.Edges {
		fmt.Fprintf(out, "  %-24s %5s\n", weights.Level(i).Label(), e.Plain())
	}
	fmt.Fprintln(out, "\ncost (replay, per level missed)")
	fmt.Fprintf(out, "  %-24s %5d\n  %-24s %5d\n  %-24s %5d\n", "too_low", w.Cost.TooLow, "too_high", w.Cost.TooHigh, "other_item", w.Cost.OtherItem)
	return nil
}

// Verify prints whether the store is intact, or every problem and what to do next.
func Verify(w io.Writer, rep *app.VerifyResult) error {
	if rep.Intact {
		log := fmt.Sprintf("evolution log at serial %d (lineage %s), weights.sum matches", rep.Serial, rep.Lineage)
		if rep.Serial == 0 {
			log = "no evolution log yet (the first apply, rollback or logged attempt starts it)"
		}
		termtable.Fprintf(w, "weights store %s is intact: %s, active %s; %s\n", rep.Dir, textfmt.Plural(rep.Versions, "version"), rep.Active, log)
		if rep.Base != "" {
			termtable.Fprintf(w, "it extends the store at %.12s append-only: every version, log entry and ledger key kept; every new version is what its log entry says\n", rep.Base)
		}
		holdoutChanged(w, rep)
		return nil
	}
	termtable.Fprintf(w, "weights store %s does NOT verify (%s):\n", rep.Dir, textfmt.Plural(len(rep.Problems), "problem"))
	for _, p := range rep.Problems {
		termtable.Fprintf(w, "  %s\n", p)
	}
	if rep.Base != "" {
		termtable.Fprintf(w, "(checked against the store at %.12s: a \"rewritten\" problem means this branch changed its history; rebuild the branch on the base)\n", rep.Base)
	}
	termtable.Fprintln(w, verifyNext(rep.Problems))
	holdoutChanged(w, rep)
	return nil
}

// holdoutChanged names, for the reviewer, what verify --base found changed in the frozen holdout.
func holdoutChanged(w io.Writer, rep *app.VerifyResult) {
	if len(rep.HoldoutChanged) == 0 {
		return
	}
	termtable.Fprintf(w, "this range changes the frozen holdout, which no rule of tune changes (a reviewer decides: docs/escalation.md, \"A change the holdout holds\"):\n")
	for _, c := range rep.HoldoutChanged {
		termtable.Fprintf(w, "  %s\n", c)
	}
}

// verifyNext is verify's closing advice, naming only the commands that can help with the problems
// found: tune repair for an interrupted operation, tune repair --resign for a hand edit of a version
// file or weights.sum (it re-signs those, nothing else: an edited proposal input or a committed cache
// is not its business).
func verifyNext(problems []store.Problem) string {
	var interrupted, resign bool
	for _, p := range problems {
		switch p.Kind {
		case store.ProblemPending, store.ProblemStale:
			interrupted = true
		case store.ProblemEdited, store.ProblemSum:
			// the store's own files sit at its top: a proposal's input is under proposals/
			resign = resign || !strings.Contains(p.File, "/")
		case store.ProblemMissing:
			// resign anchors a log whose anchor is gone; a version file gone or one nobody recorded
			// (extra) it refuses (the first review of the set-up commands)
			resign = resign || p.File == store.HeadFile
		}
	}
	var steps []string
	if interrupted {
		steps = append(steps, "an interrupted operation → tune repair")
	}
	if resign {
		steps = append(steps, "an intended hand edit of a version file → tune repair --resign")
	}
	if len(steps) == 0 {
		return "Next: do what each problem's line says, or restore the file from version control."
	}
	steps = append(steps, "anything else → restore the file from version control")
	return "Next: " + strings.Join(steps, "; ") + "."
}

// Resigned warns on w, when tune repair --resign re-signed the store, that the hand edit is now part
// of its history.
func Resigned(w io.Writer, rep *app.RepairResult) {
	if !rep.Repaired || rep.Op != "resign" {
		return
	}
	fmt.Fprintf(w, "WARNING: the weights store was re-signed; the hand edit is now part of its history (log serial %d):\n", rep.Serial)
	for _, d := range rep.Details {
		fmt.Fprintf(w, "WARNING:   %s\n", d)
	}
}

// Repair prints what tune repair did, or, with nothing to repair, what verify finds.
func Repair(w io.Writer, rep *app.RepairResult) error {
	if len(rep.Removed) > 0 {
		fmt.Fprintf(w, "removed %d temp file(s) left by killed writes:\n", len(rep.Removed))
		for _, p := range rep.Removed {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
	switch {
	case !rep.Repaired && len(rep.Details) == 0 && len(rep.Removed) > 0:
		fmt.Fprintln(w, "nothing else to repair: the weights store is intact")
		return nil
	case !rep.Repaired && len(rep.Details) == 0:
		fmt.Fprintln(w, "nothing to repair: the weights store is intact")
		return nil
	case !rep.Repaired && rep.Note == app.NothingToResign:
		// --resign covers version files and weights.sum; what is left is another file's (an edited
		// proposal input, a link among the store's files), whose line says what to do
		fmt.Fprintf(w, "%s; the store does not verify for other reasons:\n", rep.Note)
		for _, d := range rep.Details {
			fmt.Fprintf(w, "  %s\n", d)
		}
		fmt.Fprintln(w, "Do what each line says, or restore the files from version control.")
		return nil
	case !rep.Repaired:
		fmt.Fprintf(w, "no interrupted operation to resolve, but the store does not verify:\n")
		for _, d := range rep.Details {
			fmt.Fprintf(w, "  %s\n", d)
		}
		fmt.Fprintln(w, "If a version file was edited on purpose: tune repair --resign --reason \"…\". Otherwise restore the files from version control.")
		return nil
	case rep.Op == "resign":
		fmt.Fprintf(w, "repair: re-signed %s and recorded the current checksums (logged as serial %d)\n", store.SumFile, rep.Serial)
	default:
		what := "the interrupted " + rep.Op
		if rep.Op == "unknown" { // the marker could not be read, so what it was is not known
			what = "an interrupted operation whose marker was unreadable"
		}
		fmt.Fprintf(w, "repair: %s %s (logged as serial %d)\n", rep.Action, what, rep.Serial)
	}
	for _, d := range rep.Details {
		fmt.Fprintf(w, "  %s\n", d)
	}
	return nil
}
