package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/ldd-tools/tune/internal/app"
	"github.com/ldd-tools/tune/internal/store"
	"github.com/ldd-tools/tune/internal/termtable"
	"github.com/ldd-tools/tune/internal/weights"
)

// History prints the evolution log (or, without one, the version files) with the active version marked.
func History(w io.Writer, rep *app.HistoryResult) error {
	if rep.NoStore != "" {
		_, err := fmt.Fprintf(w, "no weights store at %s, so no history: tune init starts a project (outside one, tune score, detect and replay use the built-in reference weights v0001)\n", rep.NoStore)
		return err
	}
	if len(rep.Entries) == 0 {
		termtable.Fprintln(w, "no evolution log yet; version files:")
		t := termtable.New(w, "Version", "Parent", "Created", "Reason").Shrink("Reason")
		for _, v := range rep.Versions {
			name := v.Version
			if v.Active {
				name += " *"
			}
			if err := t.Append(name, dash(v.Parent), v.Created.UTC().Format("2006-01-02 15:04"), v.Reason); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
		termtable.Fprintf(w, "* active: %s\n", rep.Active)
		return nil
	}
	t := termtable.New(w, "Serial", "Time", "Action", "Versions", "Proposal", "Change", "Decision", "Suite loss", "Reason").
		Key("Versions", "Change").Shrink("Reason").Optional("Proposal", "Time", "Decision", "Suite loss", "Reason")
	for _, e := range rep.Entries {
		if err := t.Append(historyCells(&e, rep.Active)...); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	termtable.Fprintf(w, "* active: %s; log serial %d, lineage %s\n", rep.Active, rep.Serial, rep.Lineage)
	if rep.Left > 0 {
		termtable.Fprintf(w, "(the %d earlier entries are not listed; --limit 0 lists all)\n", rep.Left)
	}
	return nil
}

func historyCells(e *store.LogEntry, active string) []string {
	versions := "—"
	switch {
	case e.Result > 0 && e.Parent > 0:
		versions = weights.VersionName(e.Parent) + " → " + weights.VersionName(e.Result)
	case e.Result > 0:
		versions = weights.VersionName(e.Result)
	case e.Parent > 0:
		versions = "on " + weights.VersionName(e.Parent)
	}
	if e.Result > 0 && weights.VersionName(e.Result) == active && (e.Action == store.ActionApply || e.Action == store.ActionRollback || e.Action == store.ActionInit) {
		versions += " *"
	}
	change := e.Change
	if e.Restores > 0 {
		change = strings.TrimSpace("restores " + weights.VersionName(e.Restores) + ": " + change)
	}
	return []string{
		fmt.Sprint(e.Serial), e.Time.UTC().Format("2006-01-02 15:04"), e.Action, versions, dash(e.Proposal), dash(change),
		dash(string(e.Decision)), lossPair(e.SuiteLossBefore, e.SuiteLossAfter), dash(e.Reason),
	}
}
